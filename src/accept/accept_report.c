/* accept_report: a run's report.md and report.json, the history, and the
 * configuration's hash (accept.h). */
#include "accept.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "benchtab.h"
#include "gates.h"
#include "text.h"

static void bench_table(const struct accept_report_in *in, struct buf *md, cJSON *j)
{
    static struct benchtab t;
    accept_bench_pair(in->base_dir, in->dir, &t); /* a column not read stays n/a */
    buf_puts(md, "\n## Bench (tok/s)\n\n| figure | baseline | candidate | seed's figure |\n"
                 "|---|---:|---:|---:|\n");
    cJSON *rows = cJSON_AddArrayToObject(j, "bench");
    for (int i = 0; i < t.nrows; i++) {
        char f[3][24];
        double v[3] = {t.row[i].v[0], t.row[i].v[1], t.row[i].ref};
        for (int k = 0; k < 3; k++)
            snprintf(f[k], sizeof f[k], v[k] >= 0 ? "%.1f" : "n/a", v[k]);
        buf_printf(md, "| %s | %s | %s | %s |\n", t.row[i].name, f[0], f[1], f[2]);
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "figure", t.row[i].name);
        const char *names[3] = {"baseline", "candidate", "seed"};
        for (int k = 0; k < 3; k++)
            if (v[k] >= 0)
                cJSON_AddNumberToObject(r, names[k], v[k]);
            else
                cJSON_AddNullToObject(r, names[k]);
        cJSON_AddItemToArray(rows, r);
    }
}

/* Text for a Markdown table cell: cleaned, its '|' made '/'. */
static void cell(char *out, size_t sz, const char *text)
{
    text_copy_field(out, sz, text, strlen(text));
    for (char *p = out; *p; p++)
        if (*p == '|')
            *p = '/';
}

/* Each smoke check and gate with its verdict and evidence (gates.json's,
 * copied whole into report.json). */
static void checks_detail(const struct accept_report_in *in, struct buf *md, cJSON *j)
{
    const struct accept_evidence *ev = in->ev;
    buf_puts(md, "\n## Smoke and gates\n\n| check | verdict | evidence |\n|---|---|---|\n");
    cJSON *sm = cJSON_AddArrayToObject(j, "smoke");
    for (int i = 0; i < ev->smoke_total && ev->smoke[i].name; i++) {
        char e[300];
        cell(e, sizeof e, ev->smoke[i].evidence);
        buf_printf(md, "| smoke %s | %s | %s |\n", ev->smoke[i].name,
                   ev->smoke[i].pass ? "PASS" : "FAIL", e);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", ev->smoke[i].name);
        cJSON_AddBoolToObject(o, "pass", ev->smoke[i].pass);
        cJSON_AddStringToObject(o, "evidence", ev->smoke[i].evidence);
        cJSON_AddItemToArray(sm, o);
    }
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/gates.json", in->dir);
    cJSON *g = buf_read_file(&b, buf_str(&p), 1 << 24) == 0 ? cJSON_Parse(buf_str(&b)) : NULL;
    cJSON *gates = cJSON_GetObjectItemCaseSensitive(g, "gates"), *e;
    cJSON_ArrayForEach(e, gates)
    {
        cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        cJSON *ok = cJSON_GetObjectItemCaseSensitive(e, "pass");
        cJSON *evd = cJSON_GetObjectItemCaseSensitive(e, "evidence");
        cJSON *err = cJSON_GetObjectItemCaseSensitive(evd, "error");
        cJSON *secs = cJSON_GetObjectItemCaseSensitive(evd, "seconds");
        cJSON *pt = cJSON_GetObjectItemCaseSensitive(evd, "prompt_tokens");
        cJSON *ct = cJSON_GetObjectItemCaseSensitive(evd, "completion_tokens");
        char nm[40], why[200] = "";
        cell(nm, sizeof nm, cJSON_IsString(name) ? name->valuestring : "?");
        if (cJSON_IsString(err) && *err->valuestring)
            cell(why, sizeof why, err->valuestring);
        buf_printf(md, "| gate %s | %s | %.0f prompt, %.0f completion tokens in %.1f s%s%s |\n", nm,
                   cJSON_IsTrue(ok) ? "PASS" : "FAIL", cJSON_IsNumber(pt) ? pt->valuedouble : -1,
                   cJSON_IsNumber(ct) ? ct->valuedouble : -1,
                   cJSON_IsNumber(secs) ? secs->valuedouble : -1, why[0] ? "; " : "", why);
    }
    if (!cJSON_IsArray(gates))
        buf_puts(md, "| gates | n/a | no gates.json (the suite stopped before them) |\n");
    else
        cJSON_AddItemToObject(j, "gates", cJSON_Duplicate(gates, true));
    cJSON_Delete(g);
    buf_free(&p);
    buf_free(&b);
}

static void drift_table(const struct accept_verdict *v, struct buf *md, cJSON *j)
{
    const struct outdrift_report *r = &v->drift;
    buf_printf(md, "\n## Output drift (teacher-forced, prompt_logprobs %d)\n\n", OUTDRIFT_K);
    cJSON *d = cJSON_AddObjectToObject(j, "drift");
    if (!v->drift_compared) {
        buf_puts(md, "Not compared (see the verdict).\n");
        return;
    }
    buf_printf(md,
               "Overall, %d positions in %d windows: top-1 agreement %.4f (95 %% interval "
               "%.4f-%.4f), mean KLD %.5f nats (%.5f-%.5f).\n\n"
               "| window | positions | top-1 | KLD | note |\n|---|---:|---:|---:|---|\n",
               r->all.npos, r->compared, r->all.top1, r->top1_lo, r->top1_hi, r->all.kld,
               r->kld_lo, r->kld_hi);
    cJSON_AddNumberToObject(d, "positions", r->all.npos);
    cJSON_AddNumberToObject(d, "windows", r->compared);
    cJSON_AddNumberToObject(d, "top1", r->all.top1);
    cJSON_AddNumberToObject(d, "top1_lo", r->top1_lo);
    cJSON_AddNumberToObject(d, "top1_hi", r->top1_hi);
    cJSON_AddNumberToObject(d, "kld", r->all.kld);
    cJSON_AddNumberToObject(d, "kld_lo", r->kld_lo);
    cJSON_AddNumberToObject(d, "kld_hi", r->kld_hi);
    cJSON *ws = cJSON_AddArrayToObject(d, "per_window");
    for (int i = 0; i < r->n; i++) {
        const struct outdrift_score *s = &r->win[i];
        char t1[16] = "n/a", kl[16] = "n/a";
        if (s->top1 >= 0) {
            snprintf(t1, sizeof t1, "%.4f", s->top1);
            snprintf(kl, sizeof kl, "%.5f", s->kld);
        }
        buf_printf(md, "| %s | %d | %s | %s | %s |\n", s->name, s->npos, t1, kl, s->note);
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "window", s->name);
        cJSON_AddNumberToObject(w, "positions", s->npos);
        if (s->top1 >= 0) {
            cJSON_AddNumberToObject(w, "top1", s->top1);
            cJSON_AddNumberToObject(w, "kld", s->kld);
        }
        if (s->note[0])
            cJSON_AddStringToObject(w, "note", s->note);
        cJSON_AddItemToArray(ws, w);
    }
}

int accept_write(const char *dir, const char *name, const char *text, struct buf *err)
{
    struct buf p = BUF_INIT;
    buf_printf(&p, "%s/%s", dir, name);
    int rc = buf_write_file(buf_str(&p), text, strlen(text), 0600);
    int e = errno;
    if (rc < 0 && err)
        buf_printf(err, "cannot write %s: %s", buf_str(&p), strerror(e));
    buf_free(&p);
    errno = e;
    return rc;
}

int accept_report(const struct accept_report_in *in, struct buf *err)
{
    const struct accept_evidence *ev = in->ev;
    const struct accept_verdict *v = in->v;
    struct buf md = BUF_INIT;
    cJSON *j = cJSON_CreateObject();
    const char *verdict = v ? (v->pass ? "pass" : "fail") : "baseline";
    buf_printf(&md, "# Image acceptance: %s\n\n", verdict);
    buf_printf(&md, "- candidate: `%s`\n- baseline: `%s`\n- digests on the nodes: %s\n"
                    "- vLLM: %s\n- configuration hash: %s\n- done: %s\n",
               in->candidate, in->baseline, in->node_digests, ev->vllm_version, in->config_hash,
               in->what);
    cJSON_AddStringToObject(j, "candidate", in->candidate);
    cJSON_AddStringToObject(j, "baseline", in->baseline);
    cJSON_AddStringToObject(j, "node_digests", in->node_digests);
    cJSON_AddStringToObject(j, "vllm_version", ev->vllm_version);
    cJSON_AddStringToObject(j, "config_hash", in->config_hash);
    cJSON_AddStringToObject(j, "verdict", verdict);
    cJSON_AddStringToObject(j, "done", in->what);
    if (v && !v->pass)
        buf_printf(&md, "\n## Why it failed\n\n%s\n", v->reasons);
    if (v)
        cJSON_AddStringToObject(j, "reasons", v->reasons);
    if (ev->error[0])
        cJSON_AddStringToObject(j, "suite_error", ev->error);
    buf_printf(&md,
               "\n## Checks\n\n| check | measured | threshold |\n|---|---|---|\n"
               "| smoke | %d of %d passed | all |\n| gates (gates.json) | %d of 6 passed | all |\n"
               "| bench | %s | no figure more than %.0f %% below the baseline (ACCEPT_BENCH_TOL) |\n",
               ev->smoke_passed, ev->smoke_total, ev->gates_passed,
               ev->bench_ok ? "every request answered" : "a request failed", 100 * in->t->bench_tol);
    if (v && v->drift_compared)
        buf_printf(&md,
                   "| drift top-1 agreement | %.4f | >= %.4f (ACCEPT_TOP1) |\n"
                   "| drift mean KLD | %.5f nats | <= %.4f (ACCEPT_KLD) |\n",
                   v->drift.all.top1, in->t->top1, v->drift.all.kld, in->t->kld);
    cJSON *th = cJSON_AddObjectToObject(j, "thresholds");
    cJSON_AddNumberToObject(th, "bench_tol", in->t->bench_tol);
    cJSON_AddNumberToObject(th, "top1", in->t->top1);
    cJSON_AddNumberToObject(th, "kld", in->t->kld);
    cJSON *ck = cJSON_AddObjectToObject(j, "checks");
    cJSON_AddNumberToObject(ck, "smoke_passed", ev->smoke_passed);
    cJSON_AddNumberToObject(ck, "smoke_total", ev->smoke_total);
    cJSON_AddNumberToObject(ck, "gates_passed", ev->gates_passed);
    cJSON_AddBoolToObject(ck, "bench_ok", ev->bench_ok);
    cJSON_AddNumberToObject(ck, "drift_windows", ev->drift_windows);
    checks_detail(in, &md, j);
    bench_table(in, &md, j);
    if (v)
        drift_table(v, &md, j);
    char *js = cJSON_Print(j);
    int rc = js ? accept_write(in->dir, "report.json", js, err) : -1;
    if (rc == 0)
        rc = accept_write(in->dir, "report.md", buf_str(&md), err);
    free(js);
    cJSON_Delete(j);
    buf_free(&md);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int accept_list(const char *accept_dir, FILE *out)
{
    DIR *d = opendir(accept_dir);
    if (!d) {
        fprintf(out, "no acceptance yet (%s: %s)\n", accept_dir, strerror(errno));
        return 0;
    }
    char *names[1024];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 1024)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && (names[n] = strdup(e->d_name)))
            n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    fprintf(out, "%-28s %-9s %-14s %s\n", "run", "verdict", "done", "candidate");
    for (int i = 0; i < n; i++) {
        struct buf p = BUF_INIT, b = BUF_INIT;
        buf_printf(&p, "%s/%s/report.json", accept_dir, names[i]);
        cJSON *j = buf_read_file(&b, buf_str(&p), 1 << 24) == 0 ? cJSON_Parse(buf_str(&b)) : NULL;
        const char *f[3] = {"verdict", "done", "candidate"};
        char v[3][200];
        for (int k = 0; k < 3; k++) {
            cJSON *s = cJSON_GetObjectItemCaseSensitive(j, f[k]);
            text_copy_field(v[k], sizeof v[k], cJSON_IsString(s) ? s->valuestring : "n/a",
                            cJSON_IsString(s) ? strlen(s->valuestring) : 3);
        }
        char run[64];
        text_copy_field(run, sizeof run, names[i], strlen(names[i]));
        fprintf(out, "%-28s %-9s %-14s %s\n", run, v[0], v[1], v[2]);
        cJSON_Delete(j);
        buf_free(&p);
        buf_free(&b);
        free(names[i]);
    }
    return n;
}
