/* `dsv41-top smoke | bench`: the serving checks, as commands. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "api.h"
#include "apikey.h"
#include "bench.h"
#include "benchhist.h"
#include "gates.h"
#include "commands.h"
#include "smoke.h"
#include "usage.h"

static int usage(FILE *f, const struct usage_doc *d, int rc)
{
    usage_print(f, d);
    return rc;
}

#define ANY_HOST_OPT                                                                               \
    {"--key-for-any-host", NULL,                                                                   \
     "send the API key to the URL given too (it goes only to the configured API's host)"}

/* --key-for-any-host, taken out of argv (every serving command knows it). */
static bool take_any_host(int *argc, char **argv)
{
    bool any = false;
    int k = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--key-for-any-host") == 0)
            any = true;
        else
            argv[k++] = argv[i];
    }
    *argc = k;
    argv[k] = NULL;
    return any;
}

/* The API base from a URL argument ("http://head:8000/v1" as the script era
 * wrote it is accepted) or the configuration, and the key - which goes only
 * to the configured API's host unless the operator says otherwise: a URL
 * typed by hand must not carry the deployment's key somewhere else. */
static bool target(const struct config *c, const char *url, bool any_host, struct buf *base,
                   struct buf *key)
{
    struct buf conf = BUF_INIT;
    api_base_url(c, &conf);
    if (url) {
        size_t l = strlen(url);
        while (l && url[l - 1] == '/')
            l--;
        buf_append(base, url, l);
        if (base->len >= 3 && strcmp(base->data + base->len - 3, "/v1") == 0)
            base->data[base->len -= 3] = '\0';
    } else {
        buf_puts(base, buf_str(&conf));
    }
    char host[256] = "", want[256] = "";
    if (url && !any_host && !api_same_host(buf_str(base), buf_str(&conf), host, want)) {
        fprintf(stderr, "note: the API key is not sent to %s (the configured API is on %s); "
                        "--key-for-any-host sends it\n",
                host[0] ? host : buf_str(base), want);
        buf_free(&conf);
        return false;
    }
    bool ours = !url || strcmp(buf_str(base), buf_str(&conf)) == 0;
    buf_free(&conf);
    struct buf why = BUF_INIT;
    if (api_load_key(c, key, &why) < 0)
        fprintf(stderr, "warning: %s; trying without a key\n", buf_str(&why));
    buf_free(&why);
    return ours;
}

/* STATE_DIR/bench/bench-YYYYmmdd-HHMMSS.json: where the console's jobs tab
 * finds the newest runs. */
static int default_out(const struct config *c, struct buf *out)
{
    const char *sd = config_str(c, CFG_STATE_DIR);
    mkdir(sd, 0700);
    buf_printf(out, "%s/bench", sd);
    if (mkdir(buf_str(out), 0700) < 0 && errno != EEXIST)
        return -1;
    char stamp[40];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "/bench-%Y%m%d-%H%M%S.json", localtime(&now));
    buf_puts(out, stamp);
    return 0;
}

const struct usage_doc smoke_doc = {
    "smoke", NULL, "text, tool call and vision checks, PASS/FAIL each",
    "Text (17 * 23), a tool call (get_weather for Warsaw) and vision (a red/blue PNG) against "
    "the API (default: API_URL or http://127.0.0.1:PORT), no output caps. PASS/FAIL per check "
    "with the evidence.",
    (const struct usage_exit[]){{0, "every check passed"},
                                {1, "one failed"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){{"--timeout", "SEC", "how long each check may take (default 600)"},
                               ANY_HOST_OPT,
                               {"URL", NULL, "the API (http://head:8000, a trailing /v1 is fine)"},
                               {NULL, NULL, NULL}}};
int cmd_smoke(const struct config *c, int argc, char **argv)
{
    bool any_host = take_any_host(&argc, argv);
    int timeout_s = 600;
    const char *url = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            timeout_s = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, &smoke_doc, 0);
        else if (argv[i][0] != '-' && !url)
            url = argv[i];
        else
            return usage(stderr, &smoke_doc, 2);
    }
    if (timeout_s <= 0)
        return usage(stderr, &smoke_doc, 2);
    struct buf base = BUF_INIT, key = BUF_INIT;
    target(c, url, any_host, &base, &key);
    printf("smoke: %s\n", buf_str(&base));
    struct smoke_result res[SMOKE_CHECKS];
    int passed = smoke_run(buf_str(&base), buf_str(&key), timeout_s * 1000, stdout, res);
    printf("%d passed, %d failed\n", passed, SMOKE_CHECKS - passed);
    apikey_scrub(&key);
    buf_free(&base);
    return passed == SMOKE_CHECKS ? 0 : 1;
}

const struct usage_doc bench_doc = {
    "bench", NULL, "prefill and decode speed (--out: as JSON)",
    "Prefill tok/s on fresh random token ids (default 8192 32768, 3 reps), decode per stream and "
    "aggregate at each concurrency (default 1 2) for prose and code, long-context runs (--ctx, "
    "none by default); no output caps; waits for an idle server before each step and, with "
    "--out, saves the JSON after each step. Prints TTFT, TPOT and ITL percentiles and the reference figures of the "
    "measured deployment. Ctrl-C keeps what finished, marked interrupted. A run against this "
    "deployment's API is kept in its history (STATE_DIR/bench/history.jsonl) with the image, "
    "vLLM's version and the configuration's hash; one more than ACCEPT_BENCH_TOL below the "
    "accepted baseline is a warning in status, watch and the console.",
    (const struct usage_exit[]){{0, "every request answered"},
                                {1, "a request failed (each named in the JSON's errors)"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--out", "FILE",
         "the results as JSON, saved after each step (default STATE_DIR/bench/bench-DATE.json)"},
        {"--history", NULL,
         "the runs kept of this deployment (image, vLLM, configuration hash, figures); no run"},
        {"--label", "L", "a label kept in the results"},
        {"--prefill", "N...", "prompt lengths of the prefill runs (default 8192 32768)"},
        {"--no-prefill", NULL, "no prefill runs"},
        {"--conc", "C...", "concurrencies of the decode runs (default 1 2)"},
        {"--no-decode", NULL, "no decode runs"},
        {"--kinds", "K...", "what the decode runs write: prose, code, or both words (default prose code)"},
        {"--ctx", "N...", "long-context runs at these prompt lengths (default none)"},
        {"--reps", "R", "repetitions of each prefill run (default 3)"},
        {"--dec-reps", "R", "repetitions of each decode run (default 1)"},
        {"--greedy", NULL, "temperature 0 instead of the generation config's sampling"},
        {"--timeout", "SEC", "how long one request may take (default 3600)"},
        ANY_HOST_OPT,
        {"URL", NULL, "the API (default: API_URL or http://127.0.0.1:PORT)"},
        {NULL, NULL, NULL}}};
/* Numbers after a flag, until the next flag. */
static int numbers(int argc, char **argv, int *i, int *out, int max)
{
    int n = 0;
    while (*i + 1 < argc && argv[*i + 1][0] != '-' && n < max) {
        char *end;
        long v = strtol(argv[++*i], &end, 10);
        if (*end || v <= 0)
            return -1;
        out[n++] = (int)v;
    }
    return n ? n : -1;
}

int cmd_bench(const struct config *c, int argc, char **argv)
{
    bool any_host = take_any_host(&argc, argv);
    struct bench_opts o;
    memset(&o, 0, sizeof o);
    o.prefill[0] = 8192;
    o.prefill[1] = 32768;
    o.nprefill = 2;
    o.conc[0] = 1;
    o.conc[1] = 2;
    o.nconc = 2;
    o.kinds[0] = "prose";
    o.kinds[1] = "code";
    o.nkinds = 2;
    o.reps = 3;
    o.dec_reps = 1;
    o.timeout_s = 3600;
    const char *url = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int n = 0;
        if (strcmp(a, "--out") == 0 && i + 1 < argc) {
            o.out = argv[++i];
        } else if (strcmp(a, "--label") == 0 && i + 1 < argc) {
            o.label = argv[++i];
        } else if (strcmp(a, "--prefill") == 0) {
            n = o.nprefill = numbers(argc, argv, &i, o.prefill, BENCH_MAX_LIST);
        } else if (strcmp(a, "--conc") == 0) {
            n = o.nconc = numbers(argc, argv, &i, o.conc, BENCH_MAX_LIST);
        } else if (strcmp(a, "--ctx") == 0) {
            n = o.nctx = numbers(argc, argv, &i, o.ctx, BENCH_MAX_LIST);
        } else if (strcmp(a, "--no-prefill") == 0) {
            o.nprefill = 0;
        } else if (strcmp(a, "--no-decode") == 0) {
            o.nconc = 0;
        } else if (strcmp(a, "--reps") == 0 || strcmp(a, "--dec-reps") == 0 ||
                   strcmp(a, "--timeout") == 0) {
            int v[1];
            n = numbers(argc, argv, &i, v, 1);
            if (n > 0)
                *(a[2] == 'r' ? &o.reps : a[2] == 'd' ? &o.dec_reps : &o.timeout_s) = v[0];
        } else if (strcmp(a, "--kinds") == 0) {
            o.nkinds = 0;
            while (i + 1 < argc && argv[i + 1][0] != '-' && o.nkinds < 2) {
                const char *k = argv[++i];
                if (strcmp(k, "prose") && strcmp(k, "code")) {
                    fputs("dsv41-top bench: --kinds takes prose, code, or both: --kinds prose "
                          "code\n",
                          stderr);
                    return 2;
                }
                o.kinds[o.nkinds++] = k;
            }
            n = o.nkinds ? 1 : -1;
        } else if (strcmp(a, "--greedy") == 0) {
            o.greedy = true;
        } else if (strcmp(a, "--history") == 0) {
            static struct benchhist h;
            benchhist_load(config_str(c, CFG_STATE_DIR), &h);
            benchhist_print(&h, stdout);
            return 0;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            return usage(stdout, &bench_doc, 0);
        } else if (a[0] != '-' && !url) {
            url = a;
        } else {
            return usage(stderr, &bench_doc, 2);
        }
        if (n < 0)
            return usage(stderr, &bench_doc, 2);
    }
    struct buf base = BUF_INIT, key = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
    bool ours = target(c, url, any_host, &base, &key);
    o.base = buf_str(&base);
    o.key = buf_str(&key);
    if (!o.out && ours && default_out(c, &out) == 0)
        o.out = buf_str(&out);
    printf("bench: %s%s%s%s%s\n", o.base, o.label ? ", label " : "", o.label ? o.label : "",
           o.out ? ", results in " : "", o.out ? o.out : "");
    int rc = bench_run(&o);
    /* a finished run of this deployment joins its history; another server's,
     * or one cut short (its figures would read as a regression), does not */
    static struct benchhist_rec rec;
    if (rc == 0 && ours && o.out && benchhist_record(c, o.base, o.key, o.label ? o.label : "cli", o.out,
                                          &rec, &err) < 0)
        printf("note: %s\n", buf_str(&err));
    apikey_scrub(&key);
    buf_free(&base);
    buf_free(&out);
    buf_free(&err);
    return rc;
}

const struct usage_doc gates_doc = {
    "gates", NULL, "the six acceptance gates, with evidence JSON",
    "The six acceptance gates: load, chat, reasoning, tools (a call and the answer that uses its "
    "result), context (a code planted in N tokens of filler, default 175000), speed (>= 15 tok/s "
    "in the first 30 s after the first token). The evidence goes to a JSON file.",
    (const struct usage_exit[]){{0, "all six passed"},
                                {1, "a gate failed"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--ctx", "N", "tokens of filler in the context gate (default 175000, at least 100)"},
        {"--out", "FILE", "the evidence (default gates-DATE.json)"},
        {"--timeout", "SEC", "how long one request may take (default 1800)"},
        ANY_HOST_OPT,
        {"URL", NULL, "the API (default: API_URL or http://127.0.0.1:PORT)"},
        {NULL, NULL, NULL}}};
int cmd_gates(const struct config *c, int argc, char **argv)
{
    bool any_host = take_any_host(&argc, argv);
    struct gates_opts o = {0};
    o.ctx_tokens = 175000;
    o.timeout_s = 1800;
    o.speed_window_s = 30;
    o.speed_min_tps = 15;
    const char *url = NULL;
    char deflt[64];
    time_t now = time(NULL);
    strftime(deflt, sizeof deflt, "gates-%Y%m%d-%H%M%S.json", localtime(&now));
    o.out = deflt;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ctx") == 0 && i + 1 < argc)
            o.ctx_tokens = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            o.out = argv[++i];
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            o.timeout_s = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(stdout, &gates_doc, 0);
        else if (argv[i][0] != '-' && !url)
            url = argv[i];
        else
            return usage(stderr, &gates_doc, 2);
    }
    if (o.ctx_tokens < 100 || o.timeout_s <= 0)
        return usage(stderr, &gates_doc, 2);
    struct buf base = BUF_INIT, key = BUF_INIT;
    target(c, url, any_host, &base, &key);
    o.base = buf_str(&base);
    o.key = buf_str(&key);
    printf("gates: %s, evidence in %s\n", o.base, o.out);
    int passed = gates_run(&o, stdout);
    printf("%d passed, %d failed\n", passed, 6 - passed);
    apikey_scrub(&key);
    buf_free(&base);
    return passed == 6 ? 0 : 1;
}
