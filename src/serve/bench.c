#include "bench.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "interrupt.h"
#include "metrics.h"

#define MODEL "deepseek-v4.1-flash"

static const char *PROMPTS[2][2] = {
    {"prose", "Write a long, detailed story about a lighthouse keeper who finds a message in a "
              "bottle. Take your time and describe everything."},
    {"code", "Write a complete Python module implementing a red-black tree with insert, delete "
             "and search, with docstrings and unit tests."},
};

double bench_decode_rate(const struct completion *c)
{
    long n = c->completion_tokens >= 0 ? c->completion_tokens : c->nchunks;
    double dt = c->t_last - c->t_first;
    return n > 1 && dt > 0 ? (double)(n - 1) / dt : -1;
}

double bench_aggregate_rate(const struct completion *const *c, int n)
{
    double first = 0, last = 0, tokens = 0;
    for (int i = 0; i < n; i++) {
        if (!c[i]->nchunks)
            continue;
        if (!tokens || c[i]->t_first < first)
            first = c[i]->t_first;
        if (c[i]->t_last > last)
            last = c[i]->t_last;
        tokens += (double)(c[i]->completion_tokens >= 0 ? c[i]->completion_tokens
                                                        : c[i]->nchunks);
    }
    return tokens > 0 && last > first ? tokens / (last - first) : -1;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_percentile(double *v, int n, double p)
{
    if (n <= 0)
        return -1;
    qsort(v, (size_t)n, sizeof *v, dcmp);
    double idx = p / 100.0 * (n - 1);
    int lo = (int)idx;
    int hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (idx - lo);
}

/* Writes the results so far: a crash loses at most the step in flight. */
static int save(const struct bench_opts *o, cJSON *root)
{
    if (!o->out)
        return 0;
    char *s = cJSON_Print(root);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->out);
    FILE *f = s ? fopen(tmp, "w") : NULL;
    int rc = -1;
    if (f) {
        rc = fputs(s, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
        rc |= fflush(f) | fsync(fileno(f));
        rc |= fclose(f);
        if (rc == 0 && rename(tmp, o->out) < 0)
            rc = -1;
    }
    if (rc)
        fprintf(stderr, "bench: cannot write %s: %s\n", o->out, strerror(errno));
    free(s);
    return rc;
}

/* Waits until no request runs or waits, so each figure is measured alone. */
static void wait_idle(const struct bench_opts *o)
{
    for (int i = 0; i < 480; i++) {
        struct buf body = BUF_INIT, err = BUF_INIT;
        bool idle = api_get(o->base, "/metrics", NULL, 3000, &body, &err) == 200 &&
                    metrics_text_idle(buf_str(&body));
        bool none = body.len == 0;
        buf_free(&body);
        buf_free(&err);
        if (idle || none)
            return;
        usleep(250000);
    }
    printf("warning: the server stayed busy for 2 minutes; measuring anyway\n");
}

static char *prefill_body(int n, unsigned *seed)
{
    /* written directly: cJSON appends to arrays in linear time, which makes
     * a 32k-id prompt quadratic */
    struct buf b = BUF_INIT;
    /* one token: TTFT is all that is measured, and the client leaves after
     * it; without a limit the server would go on to /v1/completions' default
     * of 16 (vLLM's CompletionRequest.max_tokens) into a closed connection */
    buf_printf(&b, "{\"model\":\"%s\",\"stream\":true,\"max_tokens\":1,\"prompt\":[", MODEL);
    /* fresh random ids: nothing for the prefix cache to hit */
    for (int i = 0; i < n; i++)
        buf_printf(&b, "%s%d", i ? "," : "", 1000 + rand_r(seed) % 100000);
    buf_puts(&b, "]}");
    return b.data;
}

static char *chat_body(const char *text, bool greedy)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", MODEL);
    cJSON *msgs = cJSON_AddArrayToObject(j, "messages");
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", text);
    cJSON_AddItemToArray(msgs, m);
    cJSON_AddBoolToObject(j, "stream", true);
    cJSON *so = cJSON_AddObjectToObject(j, "stream_options");
    cJSON_AddBoolToObject(so, "include_usage", true);
    if (greedy)
        cJSON_AddNumberToObject(j, "temperature", 0);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

static double median(double *v, int n)
{
    return bench_percentile(v, n, 50);
}

static int step_prefill(const struct bench_opts *o, cJSON *root, unsigned *seed)
{
    cJSON *pre = cJSON_GetObjectItem(root, "prefill");
    int bad = 0;
    for (int k = 0; k < o->nprefill && !interrupt_pending(); k++) {
        int n = o->prefill[k];
        double runs[64];
        int nr = 0;
        cJSON *jr = cJSON_CreateArray();
        cJSON *errs = NULL;
        for (int r = 0; r < o->reps && r < 64 && !interrupt_pending(); r++) {
            wait_idle(o);
            struct api_call call = {0};
            call.path = "/v1/completions";
            call.body = prefill_body(n, seed);
            call.stream = true;
            call.stop_after = 1;
            call.timeout_ms = o->timeout_s * 1000;
            api_run(o->base, o->key, &call, 1, interrupt_token());
            double ttft = call.c.nchunks ? call.c.t_first - call.c.t_start : -1;
            if (call.error[0] || ttft <= 0) {
                const char *why = call.error[0] ? call.error : "no token";
                printf("prefill %6d tokens: FAILED: %s\n", n, why);
                if (!errs)
                    errs = cJSON_CreateArray();
                cJSON_AddItemToArray(errs, cJSON_CreateString(why));
                bad++;
            } else {
                runs[nr++] = n / ttft;
                cJSON_AddItemToArray(jr, cJSON_CreateNumber(n / ttft));
            }
            api_call_free(&call);
            free(call.body);
        }
        char key[16];
        snprintf(key, sizeof key, "%d", n);
        cJSON *e = cJSON_AddObjectToObject(pre, key);
        if (nr) {
            double med = median(runs, nr);
            cJSON_AddNumberToObject(e, "median", med);
            printf("prefill %6d tokens  %9.1f tok/s (median of %d)\n", n, med, nr);
        } else {
            cJSON_AddNullToObject(e, "median");
        }
        cJSON_AddItemToObject(e, "runs", jr);
        if (errs) /* a failed run is named, not dropped */
            cJSON_AddItemToObject(e, "errors", errs);
        save(o, root);
    }
    return bad;
}

struct lat {
    double ttft[4096], tpot[4096], itl[65536];
    int nttft, ntpot, nitl;
};

static void collect_latency(const struct completion *c, struct lat *l)
{
    if (!c->nchunks)
        return;
    double ttft = c->t_first - c->t_start, e2el = c->t_last - c->t_start;
    long out = c->completion_tokens >= 0 ? c->completion_tokens : c->nchunks;
    if (l->nttft < 4096)
        l->ttft[l->nttft++] = ttft;
    if (out > 1 && l->ntpot < 4096)
        l->tpot[l->ntpot++] = (e2el - ttft) / (double)(out - 1);
    for (int i = 1; i < c->nchunks && l->nitl < 65536; i++)
        l->itl[l->nitl++] = c->chunk_t[i] - c->chunk_t[i - 1];
}

static int step_decode(const struct bench_opts *o, cJSON *root, struct lat *lat)
{
    cJSON *dec = cJSON_GetObjectItem(root, "decode");
    int bad = 0;
    for (int ci = 0; ci < o->nconc && !interrupt_pending(); ci++)
        for (int ki = 0; ki < o->nkinds && !interrupt_pending(); ki++)
            for (int rep = 0; rep < o->dec_reps && !interrupt_pending(); rep++) {
                int C = o->conc[ci];
                const char *kind = o->kinds[ki];
                const char *text = strcmp(kind, "code") == 0 ? PROMPTS[1][1] : PROMPTS[0][1];
                wait_idle(o);
                struct api_call *calls = calloc((size_t)C, sizeof *calls);
                const struct completion **cs = calloc((size_t)C, sizeof *cs);
                if (!calls || !cs) {
                    free(calls);
                    free(cs);
                    return bad + 1;
                }
                for (int i = 0; i < C; i++) {
                    calls[i].path = "/v1/chat/completions";
                    calls[i].body = chat_body(text, o->greedy);
                    calls[i].stream = true;
                    calls[i].timeout_ms = o->timeout_s * 1000;
                }
                int ok = api_run(o->base, o->key, calls, C, interrupt_token());
                cJSON *e = cJSON_CreateObject();
                cJSON_AddNumberToObject(e, "C", C);
                cJSON_AddStringToObject(e, "kind", kind);
                cJSON *ps = cJSON_AddArrayToObject(e, "per_stream");
                cJSON *errs = NULL;
                double rates[1024];
                int nr = 0;
                for (int i = 0; i < C; i++) {
                    cs[i] = &calls[i].c;
                    double r = calls[i].error[0] ? -1 : bench_decode_rate(&calls[i].c);
                    if (r > 0 && nr < 1024) {
                        rates[nr++] = r;
                        cJSON_AddItemToArray(ps, cJSON_CreateNumber(r));
                    }
                    if (calls[i].error[0]) {
                        printf("decode C=%d %s: a stream FAILED: %s\n", C, kind, calls[i].error);
                        if (!errs)
                            errs = cJSON_AddArrayToObject(e, "errors");
                        cJSON_AddItemToArray(errs, cJSON_CreateString(calls[i].error));
                    } else
                        collect_latency(&calls[i].c, lat);
                }
                double agg = ok == C ? bench_aggregate_rate(cs, C) : -1;
                double med = nr ? median(rates, nr) : -1;
                if (nr)
                    cJSON_AddNumberToObject(e, "per_stream_median", med);
                else
                    cJSON_AddNullToObject(e, "per_stream_median");
                if (agg > 0)
                    cJSON_AddNumberToObject(e, "aggregate", agg);
                else
                    cJSON_AddNullToObject(e, "aggregate");
                cJSON_AddNumberToObject(e, "reqs", ok);
                cJSON_AddNumberToObject(e, "rep", rep);
                cJSON_AddItemToArray(dec, e);
                if (ok == C)
                    printf("decode  C=%-2d %-5s    %9.1f tok/s per stream, %9.1f aggregate\n", C,
                           kind, med, agg);
                else
                    bad++;
                save(o, root);
                for (int i = 0; i < C; i++) {
                    api_call_free(&calls[i]);
                    free(calls[i].body);
                }
                free(calls);
                free(cs);
            }
    return bad;
}

static int step_ctx(const struct bench_opts *o, cJSON *root)
{
    cJSON *ctx = cJSON_GetObjectItem(root, "ctx");
    int bad = 0;
    for (int k = 0; k < o->nctx && !interrupt_pending(); k++) {
        int n = o->ctx[k];
        struct buf text = BUF_INIT;
        /* about 4 characters a token */
        for (int i = 0; (int)text.len < n * 4 - 64; i++)
            buf_printf(&text, "Line %d of the long document is here. ", i);
        buf_puts(&text, "\nSummarise the document above in one sentence.");
        wait_idle(o);
        struct api_call call = {0};
        call.path = "/v1/chat/completions";
        call.body = chat_body(buf_str(&text), o->greedy);
        call.stream = true;
        call.timeout_ms = o->timeout_s * 1000;
        api_run(o->base, o->key, &call, 1, interrupt_token());
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "N", n);
        if (call.error[0] || !call.c.nchunks) {
            printf("ctx     %6d tokens: FAILED: %s\n", n, call.error);
            cJSON_AddStringToObject(e, "error", call.error);
            bad++;
        } else {
            double ttft = call.c.t_first - call.c.t_start;
            cJSON_AddNumberToObject(e, "prompt_tokens", (double)call.c.prompt_tokens);
            cJSON_AddNumberToObject(e, "ttft", ttft);
            cJSON_AddNumberToObject(e, "prefill", (double)call.c.prompt_tokens / ttft);
            cJSON_AddNumberToObject(e, "decode", bench_decode_rate(&call.c));
            printf("ctx     %6ld tokens  TTFT %.2f s, prefill %.1f tok/s, decode %.1f tok/s\n",
                   call.c.prompt_tokens, ttft, (double)call.c.prompt_tokens / ttft,
                   bench_decode_rate(&call.c));
        }
        cJSON_AddItemToArray(ctx, e);
        save(o, root);
        api_call_free(&call);
        free(call.body);
        buf_free(&text);
    }
    return bad;
}

/* This run's figures beside the measured deployment's (REFERENCE.md §1). */
static void print_reference(cJSON *root)
{
    printf("\n%-34s %12s %16s\n", "measure", "this run", "2 x Spark ref.");
    static const struct {
        const char *label, *ref;
        int prefill, conc;
        const char *kind, *field;
    } rows[] = {
        {"prefill 8k (tok/s)", "2,050", 8192, 0, NULL, NULL},
        {"prefill 32k (tok/s)", "2,061", 32768, 0, NULL, NULL},
        {"code decode, 1 stream (tok/s)", "~39-41", 0, 1, "code", "per_stream_median"},
        {"code decode, 2 streams (aggregate)", "60", 0, 2, "code", "aggregate"},
        {"prose decode, 1 stream (tok/s)", "~29", 0, 1, "prose", "per_stream_median"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        double v = -1;
        if (rows[i].prefill) {
            char k[16];
            snprintf(k, sizeof k, "%d", rows[i].prefill);
            cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "prefill"), k),
                                           "median");
            if (cJSON_IsNumber(m))
                v = m->valuedouble;
        } else {
            cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "decode"))
            {
                cJSON *f = cJSON_GetObjectItem(e, rows[i].field);
                if (cJSON_GetNumberValue(cJSON_GetObjectItem(e, "C")) == rows[i].conc &&
                    strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "kind")), rows[i].kind) == 0 &&
                    cJSON_IsNumber(f))
                    v = f->valuedouble;
            }
        }
        if (v >= 0)
            printf("%-34s %12.1f %16s\n", rows[i].label, v, rows[i].ref);
        else
            printf("%-34s %12s %16s\n", rows[i].label, "n/a", rows[i].ref);
    }
    printf("(reference: historical image 5668e35e, full checkpoint; KV pool 2,023,717 tokens)\n");
}

static void print_latency(struct lat *l)
{
    if (!l->nttft)
        return;
    printf("\n%-6s %9s %9s %9s\n", "ms", "p50", "p90", "p99");
    double *v[3] = {l->ttft, l->tpot, l->itl};
    int n[3] = {l->nttft, l->ntpot, l->nitl};
    const char *name[3] = {"TTFT", "TPOT", "ITL"};
    for (int i = 0; i < 3; i++)
        if (n[i])
            printf("%-6s %9.1f %9.1f %9.1f\n", name[i], bench_percentile(v[i], n[i], 50) * 1e3,
                   bench_percentile(v[i], n[i], 90) * 1e3,
                   bench_percentile(v[i], n[i], 99) * 1e3);
}

int bench_run(const struct bench_opts *o)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "label", o->label ? o->label : "");
    cJSON_AddStringToObject(root, "model", MODEL);
    cJSON_AddNumberToObject(root, "ts", (double)time(NULL));
    cJSON_AddObjectToObject(root, "prefill");
    cJSON_AddArrayToObject(root, "decode");
    cJSON_AddArrayToObject(root, "ctx");
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    struct lat *lat = calloc(1, sizeof *lat);
    int bad = 0;
    if (!lat) {
        cJSON_Delete(root);
        return 1;
    }
    interrupt_catch(); /* what finished is saved; the run says it was cut short */
    bad += step_prefill(o, root, &seed);
    bad += step_decode(o, root, lat);
    bad += step_ctx(o, root);
    if (interrupt_pending()) {
        cJSON_AddStringToObject(root, "interrupted", interrupt_name(interrupt_pending()));
        save(o, root);
        printf("interrupted by %s: the steps that finished are kept\n",
               interrupt_name(interrupt_pending()));
        bad++;
    }
    print_latency(lat);
    print_reference(root);
    if (o->out)
        printf("results: %s\n", o->out);
    free(lat);
    cJSON_Delete(root);
    return bad ? 1 : 0;
}
