/* accept_window: the maintenance window of `accept` - the baseline stopped,
 * the candidate launched and measured, then promoted or rolled back, never
 * half - and --baseline's record (accept_int.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accept_int.h"
#include "api.h"
#include "benchhist.h"
#include "commands.h"
#include "interrupt.h"
#include "launch.h"
#include "metrics.h"
#include "mono.h"
#include "smoke.h"

/* Points baseline at the run folder (a relative link, swapped in by rename). */
static int set_baseline(const struct accept_run *r)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s/baseline.tmp", r->accept_dir);
    unlink(tmp);
    const char *name = strrchr(r->run_dir, '/') + 1;
    return symlink(name, tmp) == 0 ? rename(tmp, r->base_dir) : -1;
}

bool accept_wait_idle(const struct accept_run *r)
{
    double t0 = mono_s();
    bool said = false;
    for (;;) {
        struct buf body = BUF_INIT, err = BUF_INIT;
        long code = api_get(buf_str(&r->api), "/metrics", NULL, 3000, &body, &err);
        bool idle = code == 200 && metrics_text_idle(buf_str(&body));
        /* nothing listens: nothing to wait for; a timeout is a busy server */
        bool down = code == 0 && strstr(buf_str(&err), "onnect") != NULL &&
                    strstr(buf_str(&err), "imed out") == NULL;
        buf_free(&body);
        buf_free(&err);
        if (idle || down)
            return true;
        if (mono_s() - t0 > r->idle_wait || interrupt_pending())
            return false;
        if (!said)
            printf("requests are running (or /metrics does not answer): waiting up to %d s\n",
                   r->idle_wait);
        said = true;
        sleep(1);
    }
}

/* force: for the rollback, which must put the baseline back whatever was
 * left; the candidate's launch keeps launch's refusals (the memory budget). */
static int launch_with(const struct accept_run *r, const char *img, bool force)
{
    struct config cc;
    struct buf err = BUF_INIT;
    if (config_copy(&cc, r->c) < 0) {
        printf("cannot launch %s: out of memory\n", img);
        return -1;
    }
    int rc = -1;
    if (config_override(&cc, CFG_IMG, img, &err) < 0) {
        printf("cannot launch %s: %s\n", img, buf_str(&err));
    } else {
        struct launch_opts lo = {.force = force, .timeout_s = r->ready_timeout};
        rc = launch_run(&cc, &lo);
    }
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
 * smoke-tested. ACCEPT_ROLLED_BACK, or ACCEPT_BROKEN. From here on no
 * SIGTERM or SIGHUP stops it (the console's cancel, an ssh drop); a Ctrl-C
 * still ends the process, an operator's own choice. */
static int roll_back(struct accept_run *r, const char *why, char *what, size_t wsz)
{
    int sig = interrupt_take();
    printf("rolling back (%s%s%s): stopping the candidate, relaunching %s\n", why,
           sig ? ", " : "", sig ? interrupt_name(sig) : "", r->base_ref);
    fflush(stdout);
    stop_all(r);
    if (launch_with(r, r->base_ref, true) != 0) {
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

static void config_path(const struct accept_run *r, struct buf *path)
{
    if (r->c->file && *r->c->file)
        buf_puts(path, r->c->file);
    else
        config_default_path(path);
    char *slash = strrchr(buf_str(path), '/');
    if (slash) { /* the config folder may not exist yet */
        *slash = '\0';
        mkdir(buf_str(path), 0700);
        *slash = '/';
    }
}

/* IMG pinned in the config file, then the acceptance recorded. 0, or -1
 * with the config file as it was (restored from its .bak when the record
 * failed after it was written) and why in err: the caller rolls back. */
static int promote(struct accept_run *r, struct buf *err)
{
    struct buf path = BUF_INIT, bak = BUF_INIT;
    config_path(r, &path);
    char *real = realpath(buf_str(&path), NULL); /* a link: config_file_set edits its target */
    if (real) {
        buf_reset(&path);
        buf_puts(&path, real);
        free(real);
    }
    buf_printf(&bak, "%s.bak", buf_str(&path));
    bool existed = access(buf_str(&path), F_OK) == 0;
    int rc = config_file_set(buf_str(&path), "IMG", r->cand, err);
    char line[500];
    snprintf(line, sizeof line, "%s\n", r->cand);
    if (rc == 0 && (accept_write(r->accept_dir, "accepted", line, NULL) < 0 || set_baseline(r) < 0)) {
        buf_printf(err, "cannot record the acceptance in %s: %s", r->accept_dir, strerror(errno));
        /* the config file as it was: the rollback relaunches the baseline */
        if (existed ? rename(buf_str(&bak), buf_str(&path)) : unlink(buf_str(&path)))
            buf_printf(err, "; and %s could not be put back from %s.bak", buf_str(&path),
                       buf_str(&path));
        rc = -1;
    }
    if (rc == 0) {
        printf("promoted: IMG=%s in %s (the old file: %s.bak); the candidate keeps serving\n",
               r->cand, buf_str(&path), buf_str(&path));
        if (getenv("IMG") && *getenv("IMG"))
            printf("note: IMG is also set in this environment, which overrides the config file: "
                   "set IMG=%s there too, or unset it\n",
                   r->cand);
    }
    buf_free(&path);
    buf_free(&bak);
    return rc;
}

int accept_window(struct accept_run *r)
{
    if (!accept_wait_idle(r) && !r->force) {
        printf("refused: requests still running after %d s (nothing stopped); --force goes "
               "ahead anyway\n",
               r->idle_wait);
        return ACCEPT_REFUSED;
    }
    interrupt_catch();
    if (mkdir(r->run_dir, 0700) < 0 && errno != EEXIST) {
        printf("cannot make %s: %s\n", r->run_dir, strerror(errno));
        return ACCEPT_REFUSED;
    }
    static struct accept_evidence ev;
    static struct accept_verdict v;
    static struct benchhist_rec rec;
    char what[600];
    snprintf(ev.vllm_version, sizeof ev.vllm_version, "n/a");
    printf("window: stopping the baseline\n");
    fflush(stdout);
    stop_all(r);
    int rc;
    if (interrupt_pending()) {
        rc = roll_back(r, "interrupted", what, sizeof what);
    } else if (printf("window: launching %s\n", r->cand), launch_with(r, r->cand, false) != 0) {
        snprintf(ev.error, sizeof ev.error, "the candidate did not launch");
        rc = roll_back(r, "the candidate did not launch", what, sizeof what);
    } else {
        suite(r, &ev);
        keep_bench(r, r->cand, BENCHHIST_CANDIDATE, &rec);
        accept_judge(r->base_dir, r->run_dir, &ev, &r->t, &v);
        printf("verdict: %s%s%s\n", v.pass ? "pass" : "fail", v.pass ? "" : ": ", v.reasons);
        struct buf err = BUF_INIT;
        if (v.pass && !interrupt_pending() && promote(r, &err) == 0) {
            set_bench_baseline(r, &rec);
            snprintf(what, sizeof what, "promoted");
            rc = ACCEPT_PROMOTED;
        } else if (v.pass && !interrupt_pending()) {
            /* passed, but could not be made the configuration: not half */
            printf("promotion failed: %s\n", buf_str(&err));
            snprintf(v.reasons, sizeof v.reasons, "passed, but the promotion failed: %s",
                     buf_str(&err));
            v.pass = false;
            rc = roll_back(r, "the promotion failed", what, sizeof what);
        } else {
            rc = roll_back(r, interrupt_pending() ? "interrupted" : "the candidate failed", what,
                           sizeof what);
        }
        buf_free(&err);
    }
    if (!v.reasons[0] && rc != ACCEPT_PROMOTED)
        snprintf(v.reasons, sizeof v.reasons, "%s", ev.error[0] ? ev.error : what);
    report(r, &ev, &v, what);
    return rc;
}

/* Every check of the suite passed: what may become the baseline. */
static bool complete(const struct accept_evidence *ev, char *why, size_t sz)
{
    if (ev->error[0])
        snprintf(why, sz, "the suite did not finish: %s", ev->error);
    else if (ev->smoke_passed != ev->smoke_total)
        snprintf(why, sz, "smoke: %d of %d passed", ev->smoke_passed, ev->smoke_total);
    else if (ev->gates_passed != 6)
        snprintf(why, sz, "gates: %d of 6 passed", ev->gates_passed);
    else if (!ev->bench_ok)
        snprintf(why, sz, "bench: a request failed");
    else if (ev->drift_windows != outdrift_window_count())
        snprintf(why, sz, "drift: %d of %d windows measured", ev->drift_windows,
                 outdrift_window_count());
    else
        return true;
    return false;
}

int accept_record_baseline(struct accept_run *r)
{
    if (!accept_wait_idle(r)) {
        printf("refused: requests still running after %d s: a baseline measured beside them "
               "would be slow (nothing recorded)\n",
               r->idle_wait);
        return ACCEPT_REFUSED;
    }
    if (mkdir(r->run_dir, 0700) < 0 && errno != EEXIST) {
        printf("cannot make %s: %s\n", r->run_dir, strerror(errno));
        return ACCEPT_ROLLED_BACK;
    }
    interrupt_catch();
    static struct accept_evidence ev;
    static struct benchhist_rec rec;
    printf("baseline: measuring %s as it serves (nothing is stopped)\n", r->base_ref);
    suite(r, &ev);
    keep_bench(r, r->base_ref, "baseline", &rec);
    char why[400] = "", line[500];
    bool ok = complete(&ev, why, sizeof why);
    snprintf(line, sizeof line, "%s\n", r->base_ref);
    if (ok && (accept_write(r->accept_dir, "accepted", line, NULL) < 0 || set_baseline(r) < 0)) {
        snprintf(why, sizeof why, "cannot record the baseline in %.300s: %s", r->accept_dir,
                 strerror(errno));
        ok = false;
    }
    if (ok)
        set_bench_baseline(r, &rec);
    char what[500];
    snprintf(what, sizeof what, ok ? "baseline recorded" : "baseline not recorded: %s", why);
    report(r, &ev, NULL, what);
    printf("%s%s%s\n", what, ok ? ": " : "", ok ? r->run_dir : "");
    return ok ? ACCEPT_PROMOTED : ACCEPT_ROLLED_BACK;
}
