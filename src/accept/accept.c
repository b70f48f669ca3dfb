/* accept: the pinned reference, the suite and the verdict (accept.h). */
#include "accept.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api.h"
#include "bench.h"
#include "benchtab.h"
#include "deploy.h"
#include "engine_image.h"
#include "fixstr.h"
#include "gates.h"
#include "interrupt.h"
#include "smoke.h"
#include "text.h"

int accept_ref_parse(const char *s, struct accept_ref *r, struct buf *err)
{
    memset(r, 0, sizeof *r);
    const char *at = strstr(s, "@sha256:");
    if (!at) {
        buf_printf(err,
                   "%s is not pinned: give the image by its digest, NAME@sha256:<64 hex> (a tag "
                   "can be moved or purged; the digest is what both nodes must run). Find it "
                   "with: RUNTIME pull %s && RUNTIME image inspect --format "
                   "'{{index .RepoDigests 0}}' %s",
                   s, s, s);
        return -1;
    }
    const char *hex = at + 8;
    size_t n = strspn(hex, "0123456789abcdef");
    if (n != 64 || hex[64] || at == s || strlen(s) >= sizeof r->ref) {
        buf_printf(err, "%s: a digest is sha256: and 64 lower-case hex digits after a name", s);
        return -1;
    }
    /* the name goes to the runtime, the config file and the report: only a
     * reference's characters (engine_image_ref_ok's rule) */
    if (engine_image_ref_ok(s, err) < 0)
        return -1;
    snprintf(r->ref, sizeof r->ref, "%s", s);
    snprintf(r->digest, sizeof r->digest, "sha256:%s", hex);
    return 0;
}

bool accept_digest_listed(const char *repo_digests, const char *digest)
{
    /* each entry is "name@sha256:hex": the digest must end one of them */
    size_t dl = strlen(digest);
    for (const char *p = repo_digests; (p = strstr(p, digest)); p += dl)
        if (p > repo_digests && p[-1] == '@' && !isxdigit((unsigned char)p[dl]))
            return true;
    return false;
}

static void path_in(struct buf *b, const char *dir, const char *name)
{
    buf_reset(b);
    buf_printf(b, "%s/%s", dir, name);
}

static bool stop_here(struct accept_evidence *ev, const char *step)
{
    int sig = interrupt_pending();
    if (!sig)
        return false;
    snprintf(ev->error, sizeof ev->error, "%s during %s", interrupt_name(sig), step);
    return true;
}

int accept_suite(const struct accept_suite_opts *o, struct accept_evidence *ev, FILE *out)
{
    memset(ev, 0, sizeof *ev);
    snprintf(ev->vllm_version, sizeof ev->vllm_version, "n/a");
    if (mkdir(o->dir, 0700) < 0 && errno != EEXIST) {
        snprintf(ev->error, sizeof ev->error, "cannot make %s: %s", o->dir, strerror(errno));
        return -1;
    }
    struct buf err = BUF_INIT, path = BUF_INIT;
    api_version(o->base, o->key, 10000, ev->vllm_version, sizeof ev->vllm_version);
    fprintf(out, "suite: vLLM %s at %s\n", ev->vllm_version, o->base);

    fprintf(out, "suite: smoke\n");
    ev->smoke_total = SMOKE_CHECKS;
    ev->smoke_passed = smoke_run(o->base, o->key, o->timeout_s * 1000, out, ev->smoke);
    if (stop_here(ev, "smoke"))
        goto done;

    fprintf(out, "suite: the six gates\n");
    struct gates_opts g = {.base = o->base, .key = o->key, .ctx_tokens = o->gates_ctx,
                           .timeout_s = o->timeout_s, .speed_window_s = 30, .speed_min_tps = 15};
    path_in(&path, o->dir, "gates.json");
    g.out = buf_str(&path);
    ev->gates_passed = gates_run(&g, out);
    if (stop_here(ev, "the gates"))
        goto done;

    /* the seed's table: prefill 8k and 32k, decode of code at 1 and 2
     * streams and of prose (1 and 2: one run covers both kinds) */
    fprintf(out, "suite: bench\n");
    struct bench_opts b = {.base = o->base, .key = o->key, .label = "accept",
                           .prefill = {8192, 32768}, .nprefill = 2, .conc = {1, 2}, .nconc = 2,
                           .kinds = {"prose", "code"}, .nkinds = 2, .reps = 3, .dec_reps = 1,
                           .timeout_s = o->timeout_s};
    struct buf bench_path = BUF_INIT;
    path_in(&bench_path, o->dir, "bench.json");
    b.out = buf_str(&bench_path);
    fflush(out);
    ev->bench_ok = bench_run(&b) == 0;
    buf_free(&bench_path);
    if (stop_here(ev, "the bench"))
        goto done;

    fprintf(out, "suite: output drift (%d windows, prompt_logprobs %d)\n",
            outdrift_window_count(), OUTDRIFT_K);
    static struct outdrift_set set; /* ~11 MB: not on the stack */
    ev->drift_windows = outdrift_measure(o->base, o->key, DEPLOY_SERVED_NAME, o->timeout_s,
                                         interrupt_token(), &set, out);
    path_in(&path, o->dir, "drift.tsv");
    buf_reset(&err);
    if (outdrift_save(&set, buf_str(&path), &err) < 0)
        snprintf(ev->error, sizeof ev->error, "%s", buf_str(&err));
    outdrift_free(&set);
    stop_here(ev, "the drift windows");
done:
    buf_free(&err);
    buf_free(&path);
    return ev->error[0] ? -1 : 0;
}

static void reason(struct accept_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reason(struct accept_verdict *v, const char *fmt, ...)
{
    size_t l = strlen(v->reasons);
    if (l)
        fixstr_appendf(v->reasons, sizeof v->reasons, &l, "; ");
    va_list ap;
    va_start(ap, fmt);
    fixstr_vappendf(v->reasons, sizeof v->reasons, &l, fmt, ap);
    va_end(ap);
    v->pass = false;
}

int accept_bench_pair(const char *base_dir, const char *cand_dir, struct benchtab *t)
{
    const char *dirs[2] = {base_dir, cand_dir}, *names[2] = {"baseline", "candidate"};
    struct buf p = BUF_INIT, b = BUF_INIT;
    int got = 0;
    memset(t, 0, sizeof *t);
    for (int k = 0; k < 2; k++) {
        path_in(&p, dirs[k], "bench.json");
        if (buf_read_file(&b, buf_str(&p), 1 << 24) == 0 &&
            benchtab_add(t, k, buf_str(&b), names[k]) == 0)
            got |= 1 << k;
        buf_reset(&b);
    }
    buf_free(&p);
    buf_free(&b);
    return got;
}

/* Each bench figure against the baseline's; names the ones too far below. */
static void judge_bench(const char *base_dir, const char *cand_dir, double tol,
                        struct accept_verdict *v)
{
    static struct benchtab t;
    int got = accept_bench_pair(base_dir, cand_dir, &t);
    if (!(got & 1))
        reason(v, "the baseline has no bench figures (record it: accept --baseline)");
    else if (!(got & 2))
        reason(v, "the candidate's bench wrote no figures");
    else
        for (int i = 0; i < t.nrows; i++) {
            double x = t.row[i].v[0], y = t.row[i].v[1];
            if (x > 0 && y >= 0 && y < x * (1 - tol))
                reason(v, "bench %s: %.1f tok/s, %.1f %% below the baseline's %.1f (tolerance %.0f %%)",
                       t.row[i].name, y, 100 * (1 - y / x), x, 100 * tol);
            else if (x > 0 && y < 0)
                reason(v, "bench %s: not measured on the candidate", t.row[i].name);
        }
}

void accept_judge(const char *base_dir, const char *cand_dir, const struct accept_evidence *ev,
                  const struct accept_thresholds *t, struct accept_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->pass = true;
    if (ev->error[0])
        reason(v, "the suite did not finish: %s", ev->error);
    if (ev->smoke_passed != ev->smoke_total)
        reason(v, "smoke: %d of %d passed", ev->smoke_passed, ev->smoke_total);
    if (ev->gates_passed != 6)
        reason(v, "gates: %d of 6 passed", ev->gates_passed);
    if (!ev->bench_ok)
        reason(v, "bench: a request failed");
    judge_bench(base_dir, cand_dir, t->bench_tol, v);
    static struct outdrift_set a, b;
    struct buf p = BUF_INIT, err = BUF_INIT;
    path_in(&p, base_dir, "drift.tsv");
    if (outdrift_load(&a, buf_str(&p), &err) < 0) {
        reason(v, "drift: no baseline measurement (%s)", buf_str(&err));
    } else {
        path_in(&p, cand_dir, "drift.tsv");
        buf_reset(&err);
        if (outdrift_load(&b, buf_str(&p), &err) < 0) {
            reason(v, "drift: the candidate's measurement is unreadable (%s)", buf_str(&err));
        } else {
            buf_reset(&err);
            if (outdrift_compare(&a, &b, &v->drift, &err) < 0) {
                reason(v, "drift: %s", buf_str(&err));
            } else {
                v->drift_compared = true;
                int windows = outdrift_window_count();
                if (v->drift.compared < windows)
                    reason(v, "drift: %d of %d windows compared", v->drift.compared, windows);
                if (v->drift.all.top1 < t->top1)
                    reason(v, "drift: top-1 agreement %.4f below %.4f (ACCEPT_TOP1)",
                           v->drift.all.top1, t->top1);
                if (v->drift.all.kld > t->kld)
                    reason(v, "drift: mean KLD %.4f nats above %.4f (ACCEPT_KLD)",
                           v->drift.all.kld, t->kld);
            }
            outdrift_free(&b);
        }
        outdrift_free(&a);
    }
    buf_free(&p);
    buf_free(&err);
}
