/* benchhist: the bench history and the accepted baseline (benchhist.h). */
#include "benchhist.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "config.h"
#include "text.h"

int benchhist_figures(struct benchhist_rec *r, const char *bench_json)
{
    struct benchtab *t = calloc(1, sizeof *t); /* any thread may ask: nothing static */
    if (!t || benchtab_add(t, 0, bench_json, "run") < 0) {
        free(t);
        return -1;
    }
    r->n = 0;
    for (int i = 0; i < t->nrows && r->n < BENCHTAB_ROWS; i++)
        if (t->row[i].v[0] >= 0) {
            snprintf(r->name[r->n], sizeof r->name[r->n], "%s", t->row[i].name);
            r->v[r->n++] = t->row[i].v[0];
        }
    free(t);
    return 0;
}

static char *to_json(const struct benchhist_rec *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "time", r->time);
    cJSON_AddStringToObject(o, "label", r->label);
    cJSON_AddStringToObject(o, "image", r->image);
    cJSON_AddStringToObject(o, "digest", r->digest);
    cJSON_AddStringToObject(o, "vllm", r->vllm);
    cJSON_AddStringToObject(o, "config_hash", r->hash);
    cJSON *f = cJSON_AddObjectToObject(o, "figures");
    for (int i = 0; i < r->n; i++)
        cJSON_AddNumberToObject(f, r->name[i], r->v[i]);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void copy_str(cJSON *o, const char *key, char *out, size_t sz)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    const char *s = cJSON_IsString(v) ? v->valuestring : "n/a";
    text_copy_field(out, sz, s, strlen(s));
}

static int from_json(const char *line, struct benchhist_rec *r)
{
    cJSON *o = cJSON_Parse(line);
    cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "figures");
    if (!cJSON_IsObject(o) || !cJSON_IsObject(f)) {
        cJSON_Delete(o);
        return -1;
    }
    memset(r, 0, sizeof *r);
    copy_str(o, "time", r->time, sizeof r->time);
    copy_str(o, "label", r->label, sizeof r->label);
    copy_str(o, "image", r->image, sizeof r->image);
    copy_str(o, "digest", r->digest, sizeof r->digest);
    copy_str(o, "vllm", r->vllm, sizeof r->vllm);
    copy_str(o, "config_hash", r->hash, sizeof r->hash);
    cJSON *e;
    cJSON_ArrayForEach(e, f)
    {
        if (r->n < BENCHTAB_ROWS && e->string && cJSON_IsNumber(e)) {
            text_copy_field(r->name[r->n], sizeof r->name[r->n], e->string, strlen(e->string));
            r->v[r->n++] = e->valuedouble;
        }
    }
    cJSON_Delete(o);
    return 0;
}

static int bench_dir(const char *state_dir, const char *name, struct buf *path)
{
    buf_printf(path, "%s/bench", state_dir);
    mkdir(state_dir, 0700);
    if (mkdir(buf_str(path), 0700) < 0 && errno != EEXIST)
        return -1;
    buf_printf(path, "/%s", name);
    return 0;
}

int benchhist_append(const char *state_dir, const struct benchhist_rec *r, struct buf *err)
{
    struct buf path = BUF_INIT;
    char *line = to_json(r);
    int rc = -1;
    if (line && bench_dir(state_dir, "history.jsonl", &path) == 0) {
        /* one write of a whole line, O_APPEND: two benches at once never interleave */
        int fd = open(buf_str(&path), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        size_t n = strlen(line);
        line[n] = '\n';
        if (fd >= 0 && write(fd, line, n + 1) == (ssize_t)(n + 1))
            rc = 0;
        if (fd >= 0 && close(fd) != 0)
            rc = -1;
    }
    if (rc < 0)
        buf_printf(err, "cannot add to the bench history %s: %s", buf_str(&path), strerror(errno));
    free(line);
    buf_free(&path);
    return rc;
}

int benchhist_record(const struct config *c, const char *base, const char *key, const char *label,
                     const char *bench_path, struct benchhist_rec *r, struct buf *err)
{
    memset(r, 0, sizeof *r);
    struct buf b = BUF_INIT;
    if (buf_read_file(&b, bench_path, 1 << 24) < 0 || benchhist_figures(r, buf_str(&b)) < 0) {
        buf_printf(err, "%s: no bench figures to keep", bench_path);
        buf_free(&b);
        return -1;
    }
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(r->time, sizeof r->time, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(r->label, sizeof r->label, "%s", label ? label : "");
    const char *img = config_str(c, CFG_IMG), *at = strstr(img, "@sha256:");
    text_copy_field(r->image, sizeof r->image, img, strlen(img));
    snprintf(r->digest, sizeof r->digest, "%s", "unpinned");
    if (at)
        snprintf(r->digest, sizeof r->digest, "sha256:%.12s", at + 8);
    api_version(base, key, 5000, r->vllm, sizeof r->vllm);
    buf_free(&b);
    config_hash(c, r->hash);
    return benchhist_append(config_str(c, CFG_STATE_DIR), r, err);
}

int benchhist_set_baseline(const char *state_dir, const struct benchhist_rec *r, struct buf *err)
{
    struct buf path = BUF_INIT;
    char *js = to_json(r);
    int rc = -1;
    if (js && bench_dir(state_dir, "baseline.json", &path) == 0)
        rc = buf_write_file(buf_str(&path), js, strlen(js), 0600);
    if (rc < 0)
        buf_printf(err, "cannot write the bench baseline %s: %s", buf_str(&path), strerror(errno));
    free(js);
    buf_free(&path);
    return rc;
}

int benchhist_load(const char *state_dir, struct benchhist *h)
{
    h->n = 0;
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/bench/history.jsonl", state_dir);
    FILE *f = fopen(buf_str(&path), "r");
    buf_free(&path);
    if (!f)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    struct benchhist_rec rec; /* the UI thread and the monitor's both read the history */
    while (getline(&line, &cap, f) > 0) {
        if (from_json(line, &rec) < 0)
            continue;
        if (h->n == BENCHHIST_MAX) { /* keep the newest */
            memmove(&h->r[0], &h->r[1], sizeof h->r[0] * (BENCHHIST_MAX - 1));
            h->n--;
        }
        h->r[h->n++] = rec;
    }
    free(line);
    fclose(f);
    return h->n;
}

int benchhist_baseline(const char *state_dir, struct benchhist_rec *r)
{
    struct buf path = BUF_INIT, b = BUF_INIT;
    buf_printf(&path, "%s/bench/baseline.json", state_dir);
    int rc = buf_read_file(&b, buf_str(&path), 1 << 20) == 0 ? from_json(buf_str(&b), r) : -1;
    buf_free(&path);
    buf_free(&b);
    return rc;
}

double benchhist_figure(const struct benchhist_rec *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0)
            return r->v[i];
    return -1;
}

static const char *const MAIN[] = {"prefill 8192", "prefill 32768", "decode C=1 code",
                                   "decode C=2 code", "decode C=1 prose"};
#define NMAIN (sizeof MAIN / sizeof MAIN[0])

void benchhist_print(const struct benchhist *h, FILE *out)
{
    if (!h->n) {
        fprintf(out, "no bench run kept yet (every `dsv41-top bench` of this deployment adds "
                     "one)\n");
        return;
    }
    fprintf(out, "%-19s %-10s %-19s %-12s %-16s", "time", "label", "image", "vLLM", "config");
    for (size_t k = 0; k < NMAIN; k++)
        fprintf(out, " %16s", MAIN[k]);
    fputc('\n', out);
    for (int i = 0; i < h->n; i++) {
        const struct benchhist_rec *r = &h->r[i];
        fprintf(out, "%-19s %-10.10s %-19s %-12.12s %-16s", r->time, r->label, r->digest, r->vllm,
                r->hash);
        for (size_t k = 0; k < NMAIN; k++) {
            double v = benchhist_figure(r, MAIN[k]);
            if (v >= 0)
                fprintf(out, " %16.1f", v);
            else
                fprintf(out, " %16s", "n/a");
        }
        fputc('\n', out);
    }
}

/* The two files' change times and sizes: the console asks every second,
 * the answer changes only when a bench or an acceptance writes them. */
static void stamp(const char *state_dir, long long out[4])
{
    const char *names[2] = {"history.jsonl", "baseline.json"};
    for (int i = 0; i < 2; i++) {
        struct buf p = BUF_INIT;
        struct stat st;
        buf_printf(&p, "%s/bench/%s", state_dir, names[i]);
        bool ok = stat(buf_str(&p), &st) == 0;
        out[2 * i] = ok ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : -1;
        out[2 * i + 1] = ok ? (long long)st.st_size : -1;
        buf_free(&p);
    }
}

static int regression(const char *state_dir, const char *hash, double tol, char *why, size_t sz);

int benchhist_regression(const char *state_dir, const char *hash, double tol, char *why,
                         size_t sz)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static long long last[4];
    static char last_key[600], last_why[320];
    static int last_rc = -2;
    long long now[4];
    char key[600];
    stamp(state_dir, now);
    snprintf(key, sizeof key, "%s|%s|%.6f", state_dir, hash, tol);
    pthread_mutex_lock(&mu);
    if (last_rc == -2 || memcmp(now, last, sizeof now) != 0 || strcmp(key, last_key) != 0) {
        last_why[0] = '\0';
        last_rc = regression(state_dir, hash, tol, last_why, sizeof last_why);
        memcpy(last, now, sizeof now);
        snprintf(last_key, sizeof last_key, "%s", key);
    }
    int rc = last_rc;
    snprintf(why, sz, "%s", last_why);
    pthread_mutex_unlock(&mu);
    return rc;
}

static int regression(const char *state_dir, const char *hash, double tol, char *why, size_t sz)
{
    static struct benchhist h;
    static struct benchhist_rec base;
    if (benchhist_baseline(state_dir, &base) < 0 || strcmp(base.hash, hash) != 0 ||
        benchhist_load(state_dir, &h) == 0)
        return -1;
    const struct benchhist_rec *last = NULL;
    for (int i = h.n - 1; i >= 0 && !last; i--)
        if (strcmp(h.r[i].hash, hash) == 0 && strcmp(h.r[i].label, BENCHHIST_CANDIDATE) != 0)
            last = &h.r[i];
    if (!last)
        return -1;
    for (int i = 0; i < last->n; i++) {
        double b = benchhist_figure(&base, last->name[i]);
        if (b > 0 && last->v[i] < b * (1 - tol)) {
            snprintf(why, sz,
                     "bench of %s: %s %.1f tok/s is %.0f %% below the accepted baseline's %.1f "
                     "(ACCEPT_BENCH_TOL %.0f %%; bench --history)",
                     last->time, last->name[i], last->v[i], 100 * (1 - last->v[i] / b), b,
                     100 * tol);
            return 1;
        }
    }
    return 0;
}
