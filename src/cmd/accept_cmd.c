/* `dsv41-top accept IMAGE@sha256:DIGEST`: a maintenance window in which the
 * candidate image replaces the accepted one, is measured beside the
 * baseline's evidence, and is promoted or rolled back - never half. The
 * suite, the verdict and the report are src/accept's; here: the options,
 * the pull and digest check on every node, the plan and its confirmation,
 * the wait for an idle server, and stop / launch / promote / roll back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "api.h"
#include "apikey.h"
#include "benchhist.h"
#include "cluster.h"
#include "commands.h"
#include "interrupt.h"
#include "launch.h"
#include "metrics.h"
#include "mono.h"
#include "shcmd.h"
#include "smoke.h"
#include "text.h"
#include "usage.h"

enum {
    ACCEPT_PROMOTED = 0,
    ACCEPT_ROLLED_BACK = 1,
    ACCEPT_USAGE = 2,
    ACCEPT_REFUSED = 3,
    ACCEPT_BROKEN = 4,
};

const struct usage_doc accept_doc = {
    "accept", "IMAGE@sha256:DIGEST",
    "measure a candidate image beside the accepted one; promote or roll back",
    "A maintenance window: pulls the candidate on every node and checks each runtime reports the "
    "digest asked for; shows the plan and asks (unless --yes); waits for an idle server; stops "
    "the baseline; launches the candidate with the same configuration; runs smoke, the six gates, "
    "the seed's bench table and output drift (64 windows, prompt logprobs, against the baseline's "
    "evidence); then promotes (IMG pinned in the config file, a .bak kept) or rolls back (the "
    "baseline relaunched and smoke-tested). Ctrl-C, a dead node or a failed launch roll back "
    "too. The report: STATE_DIR/accept/TIME-DIGEST12/report.md and report.json. --baseline "
    "records the running image's evidence first, changing nothing.",
    (const struct usage_exit[]){
        {ACCEPT_PROMOTED, "promoted (--baseline: recorded; --list: listed)"},
        {ACCEPT_ROLLED_BACK, "the candidate failed, or was interrupted: rolled back, the baseline "
                             "serving (--baseline: the suite did not finish)"},
        {ACCEPT_USAGE, "a usage error, or the image is not pinned by digest"},
        {ACCEPT_REFUSED, "refused before anything stopped: a digest that differs, no baseline "
                         "evidence, a busy server, no confirmation"},
        {ACCEPT_BROKEN, "the rollback failed: the deployment is not as it was (the report says "
                        "what to do)"},
        {-1, NULL}},
    (const struct usage_opt[]){
        {"--baseline", NULL, "measure the running image as the baseline; stop nothing"},
        {"--list", NULL, "the history of acceptances"},
        {"--yes", NULL, "no question before the window"},
        {"--force", NULL, "do not wait for running requests to end"},
        {"--idle-wait", "SEC", "how long to wait for an idle server (default 300)"},
        {"--ctx", "N", "tokens of filler in the context gate (default 175000)"},
        {"--timeout", "SEC", "how long one request may take (default 1800)"},
        {"--ready-timeout", "SEC", "how long a launch may take (default READY_TIMEOUT)"},
        {NULL, NULL, NULL}}};

struct accept_run {
    const struct config *c;
    const char *cand, *base_ref;
    char accept_dir[4096], run_dir[4200], base_dir[4200];
    char digests[1024];
    char hash[17];
    struct buf api, key;
    int ready_timeout, timeout_s, ctx;
    struct accept_thresholds t;
};

static int numarg(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v <= 0 || v > 7 * 86400)
        return -1;
    *out = (int)v;
    return 0;
}

/* The accepted image: STATE_DIR/accept/accepted, else IMG. */
static void read_accepted(const struct accept_run *r, char *out, size_t sz)
{
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/accepted", r->accept_dir);
    if (buf_read_file(&b, buf_str(&p), 4096) == 0 && b.len)
        snprintf(out, sz, "%.*s", (int)strcspn(buf_str(&b), "\n"), buf_str(&b));
    else
        snprintf(out, sz, "%s", config_str(r->c, CFG_IMG));
    buf_free(&p);
    buf_free(&b);
}

static int write_small(const char *dir, const char *name, const char *text)
{
    char p[4400], tmp[4500];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    return bad ? -1 : rename(tmp, p);
}

/* Points baseline at a run folder (a relative link, swapped in by rename). */
static int set_baseline(const struct accept_run *r)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/baseline.tmp", r->accept_dir);
    unlink(tmp);
    const char *name = strrchr(r->run_dir, '/') + 1;
    return symlink(name, tmp) == 0 ? rename(tmp, r->base_dir) : -1;
}

/* The image's id on the head, noted in images.tsv: the console names a
 * rank's container (which its runtime reports by id) by this reference. */
static void note_image(const struct accept_run *r, const char *ref)
{
    struct shcmd s = SHCMD_INIT;
    struct ssh_result res;
    struct buf err = BUF_INIT;
    shcmd_exec(&s, config_str(r->c, CFG_RUNTIME), "image", "inspect", "--format", "{{.Id}}", "--",
               ref, (char *)NULL);
    if (node_run_local(&s, 60000, 1 << 16, &res, &err) == 0) {
        char id[80];
        text_clean(id, sizeof id, buf_str(&res.out), strcspn(buf_str(&res.out), "\n"));
        if (res.exit_status == 0 && id[0])
            accept_note_image(r->accept_dir, id, ref);
        ssh_result_free(&res);
    }
    shcmd_free(&s);
    buf_free(&err);
}

/* Pulls the candidate on every node and asks each runtime which digests
 * it has for it: all must list the one asked for. */
static int pull_everywhere(struct accept_run *r, const struct accept_ref *ref)
{
    struct cluster cl;
    if (cluster_open_for("accept", r->c, &cl) < 0)
        return -1;
    const char *rt = config_str(r->c, CFG_RUNTIME);
    int bad = 0;
    size_t dl = 0;
    for (int i = 0; i < cl.n && !interrupt_pending(); i++) {
        struct cluster_node *cn = &cl.nodes[i];
        struct shcmd s = SHCMD_INIT;
        struct ssh_result res;
        struct buf err = BUF_INIT;
        printf("%s: pulling %s\n", cn->name, ref->ref);
        fflush(stdout);
        shcmd_exec(&s, rt, "pull", "--", ref->ref, (char *)NULL);
        int rc = node_run_cancel(&cn->node, &s, 3600 * 1000, interrupt_token(), &res, &err);
        shcmd_free(&s);
        char why[300] = "";
        if (rc < 0) {
            text_copy_field(why, sizeof why, buf_str(&err), err.len);
        } else {
            if (res.exit_status != 0)
                text_copy_field(why, sizeof why, buf_str(&res.err), res.err.len);
            ssh_result_free(&res);
        }
        if (!why[0]) {
            s = (struct shcmd)SHCMD_INIT;
            shcmd_exec(&s, rt, "image", "inspect", "--format", "{{json .RepoDigests}}", "--",
                       ref->ref, (char *)NULL);
            if (node_run(&cn->node, &s, 60000, &res, &err) < 0) {
                text_copy_field(why, sizeof why, buf_str(&err), err.len);
            } else {
                if (!accept_digest_listed(buf_str(&res.out), ref->digest)) {
                    char got[200];
                    text_copy_field(got, sizeof got, buf_str(&res.out), res.out.len);
                    snprintf(why, sizeof why, "its runtime reports %s, not %.19s...", got,
                             ref->digest);
                }
                ssh_result_free(&res);
            }
            shcmd_free(&s);
        }
        buf_free(&err);
        if (why[0]) {
            printf("%s: refused: %s\n", cn->name, why);
            bad++;
        } else {
            printf("%s: %s present\n", cn->name, ref->digest);
            dl += (size_t)snprintf(r->digests + dl, sizeof r->digests - dl, "%s%s %.19s", dl ? "; " : "",
                                   cn->name, ref->digest);
            if (dl >= sizeof r->digests)
                dl = sizeof r->digests - 1;
        }
    }
    cluster_close(&cl);
    if (bad || interrupt_pending())
        return -1;
    note_image(r, ref->ref);
    return 0;
}

/* Waits up to wait_s for no request running or waiting. */
static bool wait_idle(const struct accept_run *r, int wait_s)
{
    double t0 = mono_s();
    bool said = false;
    for (;;) {
        struct buf body = BUF_INIT, err = BUF_INIT;
        struct metrics m;
        bool idle = api_get(buf_str(&r->api), "/metrics", NULL, 3000, &body, &err) == 200 &&
                    metrics_parse(buf_str(&body), &m) > 0 && m.running.ok && m.running.v == 0 &&
                    (!m.waiting.ok || m.waiting.v == 0);
        bool down = body.len == 0; /* nothing serves: nothing to wait for */
        buf_free(&body);
        buf_free(&err);
        if (idle || down)
            return true;
        if (mono_s() - t0 > wait_s || interrupt_pending())
            return false;
        if (!said)
            printf("requests are running: waiting up to %d s for them to end\n", wait_s);
        said = true;
        sleep(1);
    }
}

static int launch_with(const struct accept_run *r, const char *img)
{
    struct config cc;
    struct buf err = BUF_INIT;
    if (config_copy(&cc, r->c) < 0 || config_override(&cc, CFG_IMG, img, &err) < 0) {
        printf("cannot launch %s: %s\n", img, buf_str(&err));
        buf_free(&err);
        return -1;
    }
    struct launch_opts lo = {.force = true, .timeout_s = r->ready_timeout};
    int rc = launch_run(&cc, &lo);
    config_free(&cc);
    buf_free(&err);
    return rc;
}

static int stop_all(const struct accept_run *r)
{
    char *argv[] = {"stop", NULL};
    return cmd_stop(r->c, 1, argv);
}

static int suite(const struct accept_run *r, struct accept_evidence *ev)
{
    struct accept_suite_opts so = {.base = buf_str(&r->api), .key = buf_str(&r->key),
                                   .dir = r->run_dir, .gates_ctx = r->ctx,
                                   .timeout_s = r->timeout_s};
    return accept_suite(&so, ev, stdout);
}

/* The suite's bench joins the history, under the image it measured; the
 * record is returned for set_bench_baseline. */
static void keep_bench(const struct accept_run *r, const char *image, const char *label,
                       struct benchhist_rec *rec)
{
    struct buf path = BUF_INIT, err = BUF_INIT;
    buf_printf(&path, "%s/bench.json", r->run_dir);
    struct config cc;
    if (config_copy(&cc, r->c) == 0) {
        if (config_override(&cc, CFG_IMG, image, &err) < 0 ||
            benchhist_record(&cc, buf_str(&r->api), buf_str(&r->key), label, buf_str(&path), rec,
                             &err) < 0)
            printf("note: %s\n", buf_str(&err));
        config_free(&cc);
    }
    buf_free(&path);
    buf_free(&err);
}

static void set_bench_baseline(const struct accept_run *r, const struct benchhist_rec *rec)
{
    struct buf err = BUF_INIT;
    if (rec->n && benchhist_set_baseline(config_str(r->c, CFG_STATE_DIR), rec, &err) < 0)
        printf("warning: %s\n", buf_str(&err));
    buf_free(&err);
}

static void report(const struct accept_run *r, const struct accept_evidence *ev,
                   const struct accept_verdict *v, const char *what)
{
    struct accept_report_in in = {.dir = r->run_dir, .base_dir = r->base_dir,
                                  .candidate = r->cand, .baseline = r->base_ref,
                                  .node_digests = r->digests[0] ? r->digests : "n/a",
                                  .config_hash = r->hash, .ev = ev, .v = v, .t = &r->t,
                                  .what = what};
    struct buf err = BUF_INIT;
    if (accept_report(&in, &err) < 0)
        printf("warning: %s\n", buf_str(&err));
    else
        printf("report: %s/report.md\n", r->run_dir);
    buf_free(&err);
}

/* The baseline back: the candidate stopped, the baseline launched and
 * smoke-tested. ACCEPT_ROLLED_BACK, or ACCEPT_BROKEN. */
static int roll_back(struct accept_run *r, const char *why, char *what, size_t wsz)
{
    int sig = interrupt_take(); /* the rollback's own steps must run */
    printf("rolling back (%s%s%s): stopping the candidate, relaunching %s\n", why,
           sig ? ", " : "", sig ? interrupt_name(sig) : "", r->base_ref);
    stop_all(r);
    if (launch_with(r, r->base_ref) != 0) {
        snprintf(what, wsz, "rollback FAILED: the baseline did not launch; run dsv41-top launch");
        printf("%s\n", what);
        return ACCEPT_BROKEN;
    }
    struct smoke_result res[SMOKE_CHECKS];
    int ok = smoke_run(buf_str(&r->api), buf_str(&r->key), r->timeout_s * 1000, stdout, res);
    if (ok != SMOKE_CHECKS) {
        snprintf(what, wsz, "rolled back, but the baseline's smoke failed (%d of %d)", ok,
                 SMOKE_CHECKS);
        printf("%s\n", what);
        return ACCEPT_BROKEN;
    }
    snprintf(what, wsz, "rolled back");
    printf("rolled back: %s serves again and passed smoke\n", r->base_ref);
    return ACCEPT_ROLLED_BACK;
}

static int promote(struct accept_run *r, char *what, size_t wsz)
{
    struct buf path = BUF_INIT, err = BUF_INIT;
    if (r->c->file && *r->c->file)
        buf_puts(&path, r->c->file);
    else
        config_default_path(&path);
    char *slash = strrchr(buf_str(&path), '/');
    if (slash) { /* the config folder may not exist yet */
        *slash = '\0';
        mkdir(buf_str(&path), 0700);
        *slash = '/';
    }
    int rc = config_file_set(buf_str(&path), "IMG", r->cand, &err);
    char line[500];
    snprintf(line, sizeof line, "%s\n", r->cand);
    if (rc == 0 && (write_small(r->accept_dir, "accepted", line) < 0 || set_baseline(r) < 0)) {
        buf_printf(&err, "cannot record the acceptance in %s: %s", r->accept_dir, strerror(errno));
        rc = -1;
    }
    if (rc < 0) {
        snprintf(what, wsz, "promotion failed: %s", buf_str(&err));
        printf("%s\n", what);
    } else {
        snprintf(what, wsz, "promoted");
        printf("promoted: IMG=%s in %s (the old file: %s.bak); the candidate keeps serving\n",
               r->cand, buf_str(&path), buf_str(&path));
        if (getenv("IMG") && *getenv("IMG"))
            printf("note: IMG is also set in this environment, which overrides the config file: "
                   "set IMG=%s there too, or unset it\n",
                   r->cand);
    }
    buf_free(&path);
    buf_free(&err);
    return rc < 0 ? ACCEPT_BROKEN : ACCEPT_PROMOTED;
}

static bool confirm(const struct accept_run *r)
{
    printf("the plan: stop %s; launch %s with the same configuration (hash %s); run smoke, the "
           "six gates, the bench and output drift; promote it, or roll back to the baseline. "
           "The API is down meanwhile.\n",
           r->base_ref, r->cand, r->hash);
    if (!isatty(STDIN_FILENO)) {
        printf("refused: no terminal to ask; add --yes to go ahead\n");
        return false;
    }
    printf("go ahead? [y/N] ");
    fflush(stdout);
    char line[16] = "";
    return fgets(line, sizeof line, stdin) && (line[0] == 'y' || line[0] == 'Y');
}

static int window(struct accept_run *r, bool force, int idle_wait)
{
    if (!wait_idle(r, idle_wait) && !force) {
        printf("refused: requests still running after %d s (nothing stopped); --force goes "
               "ahead anyway\n",
               idle_wait);
        return ACCEPT_REFUSED;
    }
    interrupt_catch();
    if (mkdir(r->run_dir, 0700) < 0 && errno != EEXIST) {
        printf("cannot make %s: %s\n", r->run_dir, strerror(errno));
        return ACCEPT_REFUSED;
    }
    struct accept_evidence ev = {0};
    static struct accept_verdict v;
    char what[400];
    snprintf(ev.vllm_version, sizeof ev.vllm_version, "n/a");
    printf("window: stopping the baseline\n");
    fflush(stdout);
    stop_all(r);
    int rc;
    if (interrupt_pending()) {
        rc = roll_back(r, "interrupted", what, sizeof what);
    } else if (printf("window: launching %s\n", r->cand), launch_with(r, r->cand) != 0) {
        snprintf(ev.error, sizeof ev.error, "the candidate did not launch");
        rc = roll_back(r, "the candidate did not launch", what, sizeof what);
    } else {
        suite(r, &ev);
        static struct benchhist_rec rec;
        keep_bench(r, r->cand, BENCHHIST_CANDIDATE, &rec);
        accept_judge(r->base_dir, r->run_dir, &ev, &r->t, &v);
        printf("verdict: %s%s%s\n", v.pass ? "pass" : "fail", v.pass ? "" : ": ", v.reasons);
        if (v.pass && !interrupt_pending()) {
            rc = promote(r, what, sizeof what);
            if (rc == ACCEPT_PROMOTED)
                set_bench_baseline(r, &rec);
        } else {
            rc = roll_back(r, interrupt_pending() ? "interrupted" : "the candidate failed", what,
                           sizeof what);
        }
    }
    if (!v.reasons[0] && rc != ACCEPT_PROMOTED)
        snprintf(v.reasons, sizeof v.reasons, "%s", ev.error[0] ? ev.error : what);
    report(r, &ev, &v, what);
    return rc;
}

static int record_baseline(struct accept_run *r)
{
    if (mkdir(r->run_dir, 0700) < 0 && errno != EEXIST) {
        printf("cannot make %s: %s\n", r->run_dir, strerror(errno));
        return ACCEPT_ROLLED_BACK;
    }
    interrupt_catch();
    struct accept_evidence ev;
    printf("baseline: measuring %s as it serves (nothing is stopped)\n", r->base_ref);
    note_image(r, r->base_ref);
    int rc = suite(r, &ev);
    static struct benchhist_rec rec;
    keep_bench(r, r->base_ref, "baseline", &rec);
    char line[500];
    snprintf(line, sizeof line, "%s\n", r->base_ref);
    if (rc == 0 && (write_small(r->accept_dir, "accepted", line) < 0 || set_baseline(r) < 0)) {
        printf("cannot record the baseline in %s: %s\n", r->accept_dir, strerror(errno));
        rc = -1;
    }
    if (rc == 0)
        set_bench_baseline(r, &rec);
    report(r, &ev, NULL, rc == 0 ? "baseline recorded" : "baseline not recorded");
    if (rc == 0)
        printf("baseline recorded: %s\n", r->run_dir);
    return rc == 0 ? ACCEPT_PROMOTED : ACCEPT_ROLLED_BACK;
}

int cmd_accept(const struct config *c, int argc, char **argv)
{
    bool yes = false, force = false, baseline = false, list = false;
    int idle_wait = 300;
    struct accept_run r = {.c = c, .api = BUF_INIT, .key = BUF_INIT, .timeout_s = 1800,
                           .ctx = 175000, .ready_timeout = (int)config_long(c, CFG_READY_TIMEOUT)};
    const char *img = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int *num = strcmp(a, "--idle-wait") == 0       ? &idle_wait
                   : strcmp(a, "--ctx") == 0           ? &r.ctx
                   : strcmp(a, "--timeout") == 0       ? &r.timeout_s
                   : strcmp(a, "--ready-timeout") == 0 ? &r.ready_timeout
                                                       : NULL;
        if (num) {
            if (i + 1 >= argc || numarg(argv[++i], num) < 0)
                return usage_print(stderr, &accept_doc), ACCEPT_USAGE;
        } else if (strcmp(a, "--yes") == 0) {
            yes = true;
        } else if (strcmp(a, "--force") == 0) {
            force = true;
        } else if (strcmp(a, "--baseline") == 0) {
            baseline = true;
        } else if (strcmp(a, "--list") == 0) {
            list = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            return usage_print(stdout, &accept_doc), 0;
        } else if (a[0] != '-' && !img) {
            img = a;
        } else {
            return usage_print(stderr, &accept_doc), ACCEPT_USAGE;
        }
    }
    snprintf(r.accept_dir, sizeof r.accept_dir, "%s/accept", config_str(c, CFG_STATE_DIR));
    if (list)
        return accept_list(r.accept_dir, stdout) < 0 ? 1 : 0;
    if (!baseline && !img)
        return usage_print(stderr, &accept_doc), ACCEPT_USAGE;
    struct accept_ref ref;
    struct buf err = BUF_INIT;
    if (img && accept_ref_parse(img, &ref, &err) < 0) {
        fprintf(stderr, "dsv41-top accept: %s\n", buf_str(&err));
        buf_free(&err);
        return ACCEPT_USAGE;
    }
    r.t.bench_tol = config_num(c, CFG_ACCEPT_BENCH_TOL) / 100;
    r.t.top1 = config_num(c, CFG_ACCEPT_TOP1);
    r.t.kld = config_num(c, CFG_ACCEPT_KLD);
    mkdir(config_str(c, CFG_STATE_DIR), 0700);
    if (mkdir(r.accept_dir, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "dsv41-top accept: cannot make %s: %s\n", r.accept_dir, strerror(errno));
        return ACCEPT_REFUSED;
    }
    char base_ref[400];
    read_accepted(&r, base_ref, sizeof base_ref);
    r.base_ref = base_ref;
    r.cand = img ? ref.ref : base_ref;
    snprintf(r.base_dir, sizeof r.base_dir, "%s/baseline", r.accept_dir);
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
    const char *dig = strstr(r.cand, "@sha256:");
    snprintf(r.run_dir, sizeof r.run_dir, "%s/%s-%.12s", r.accept_dir, stamp,
             dig ? dig + 8 : "unpinned");
    config_hash(c, r.hash);
    api_base_url(c, &r.api);
    if (api_load_key(c, &r.key, &err) < 0)
        printf("warning: %s; trying without a key\n", buf_str(&err));
    buf_free(&err);
    int rc;
    if (baseline) {
        rc = record_baseline(&r);
    } else if (strcmp(ref.ref, base_ref) == 0) {
        printf("refused: %s is the accepted image already\n", ref.ref);
        rc = ACCEPT_REFUSED;
    } else if (access(r.base_dir, F_OK) != 0) {
        printf("refused: no baseline evidence on this deployment (%s): record it first with "
               "dsv41-top accept --baseline (it measures the running image, changing nothing)\n",
               r.base_dir);
        rc = ACCEPT_REFUSED;
    } else if (pull_everywhere(&r, &ref) < 0) {
        printf("refused: the candidate is not the same image on every node; nothing was "
               "stopped\n");
        rc = ACCEPT_REFUSED;
    } else if (!yes && !confirm(&r)) {
        rc = ACCEPT_REFUSED;
    } else {
        rc = window(&r, force, idle_wait);
    }
    apikey_scrub(&r.key);
    buf_free(&r.api);
    return rc;
}
