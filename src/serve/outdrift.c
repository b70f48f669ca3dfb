/* outdrift: measuring each window's prompt logprobs, and comparing two
 * images' measurements (outdrift.h says what and why). */
#include "outdrift.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "drift_windows.h" /* made by the build from src/serve/drift_windows.txt */
#include "text.h"

#define MAX_BODY (8u << 20) /* 512 positions of 21 entries: about 1 MiB; room to spare */
#define MAX_POSITIONS 16384 /* a window is ~512 tokens: more is no answer to it */

/* ---- the shipped windows ---------------------------------------------------------- */

static int g_nwin = -1;
static const char *g_start[OUTDRIFT_WINDOWS_MAX], *g_name[OUTDRIFT_WINDOWS_MAX];
static size_t g_len[OUTDRIFT_WINDOWS_MAX], g_name_len[OUTDRIFT_WINDOWS_MAX];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* "=== KIND NAME" lines start windows; the text runs to the next one. */
static void index_windows(void)
{
    const char *p = DRIFT_WINDOWS, *end = p + sizeof DRIFT_WINDOWS - 1;
    int n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (eol - p > 4 && strncmp(p, "=== ", 4) == 0 && n < OUTDRIFT_WINDOWS_MAX) {
            const char *sp = memchr(p + 4, ' ', (size_t)(eol - p - 4));
            g_name[n] = sp ? sp + 1 : p + 4;
            g_name_len[n] = (size_t)(eol - g_name[n]);
            g_start[n] = nl ? nl + 1 : end;
            if (n)
                g_len[n - 1] = (size_t)(p - g_start[n - 1]) - 1; /* less its newline */
            n++;
        }
        p = nl ? nl + 1 : end;
    }
    if (n)
        g_len[n - 1] = (size_t)(end - g_start[n - 1]) - (end > g_start[n - 1] && end[-1] == '\n');
    g_nwin = n;
}

int outdrift_window_count(void)
{
    pthread_once(&g_once, index_windows);
    return g_nwin;
}

const char *outdrift_window(int i, char name[48])
{
    if (i < 0 || i >= outdrift_window_count())
        return NULL;
    snprintf(name, 48, "%.*s", (int)g_name_len[i], g_name[i]);
    char *t = strndup(g_start[i], g_len[i]);
    return t; /* the caller frees it */
}

void outdrift_windows_sha(char out[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(DRIFT_WINDOWS, sizeof DRIFT_WINDOWS - 1, md, &mdlen, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* ---- one answer ---------------------------------------------------------------------- */

static int fail(struct outdrift_window *w, const char *why)
{
    snprintf(w->error, sizeof w->error, "%s", why);
    free(w->pos);
    w->pos = NULL;
    w->npos = 0;
    return -1;
}

/* One position's object: the entries of rank 1..k, in rank order. */
static int parse_position(cJSON *d, struct outdrift_pos *p, const char **why)
{
    p->n = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, d)
    {
        cJSON *lp = cJSON_GetObjectItemCaseSensitive(e, "logprob");
        cJSON *rank = cJSON_GetObjectItemCaseSensitive(e, "rank");
        char *end;
        errno = 0;
        long id = e->string ? strtol(e->string, &end, 10) : -1;
        if (!e->string || !*e->string || *end || errno || id < 0) {
            *why = "a key that is no token id";
            return -1;
        }
        /* a logprob is finite and at most 0 (a rounding hair above 0 is
         * taken as 0); anything else is no distribution */
        if (!cJSON_IsNumber(lp) || !isfinite(lp->valuedouble) || lp->valuedouble > 1e-6) {
            *why = "a logprob that is no number <= 0";
            return -1;
        }
        if (!cJSON_IsNumber(rank) || rank->valuedouble < 1 ||
            rank->valuedouble != floor(rank->valuedouble)) {
            *why = "a rank that is no whole number >= 1";
            return -1;
        }
        int r = (int)fmin(rank->valuedouble, 1e6);
        if (r > OUTDRIFT_K)
            continue; /* the prompt token's own entry, outside the top k */
        if (p->n == OUTDRIFT_K) {
            *why = "more than 20 entries of rank <= 20";
            return -1;
        }
        /* insertion by rank (ties keep their order) */
        int at = p->n;
        p->id[at] = id;
        p->lp[at] = fmin(lp->valuedouble, 0);
        while (at > 0 && p->lp[at] > p->lp[at - 1]) {
            long ti = p->id[at];
            double tl = p->lp[at];
            p->id[at] = p->id[at - 1];
            p->lp[at] = p->lp[at - 1];
            p->id[at - 1] = ti;
            p->lp[at - 1] = tl;
            at--;
        }
        p->n++;
    }
    return 0;
}

int outdrift_parse(const char *json, size_t len, struct outdrift_window *w)
{
    w->error[0] = '\0';
    free(w->pos);
    w->pos = NULL;
    w->npos = 0;
    cJSON *j = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(j))
        return cJSON_Delete(j), fail(w, "the answer is not a JSON object");
    cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "choices");
    cJSON *plp = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ch, 0), "prompt_logprobs");
    if (!cJSON_IsArray(plp)) {
        cJSON_Delete(j);
        return fail(w, "the answer has no choices[0].prompt_logprobs (is this vLLM?)");
    }
    int n = cJSON_GetArraySize(plp);
    if (n > MAX_POSITIONS) {
        cJSON_Delete(j);
        return fail(w, "more prompt positions than any window has (a broken answer)");
    }
    w->pos = calloc((size_t)(n ? n : 1), sizeof *w->pos);
    if (!w->pos) {
        cJSON_Delete(j);
        return fail(w, "out of memory");
    }
    int i = 0;
    cJSON *d;
    const char *why = NULL;
    cJSON_ArrayForEach(d, plp)
    {
        if (cJSON_IsObject(d) && parse_position(d, &w->pos[i], &why) < 0)
            break;
        if (!cJSON_IsObject(d) && !cJSON_IsNull(d)) {
            why = "a position that is neither an object nor null";
            break;
        }
        i++;
    }
    cJSON_Delete(j);
    if (why) {
        char msg[128];
        snprintf(msg, sizeof msg, "malformed prompt_logprobs: position %d: %s", i, why);
        return fail(w, msg);
    }
    w->npos = n;
    return 0;
}

/* ---- measuring ----------------------------------------------------------------------- */

int outdrift_measure(const char *base, const char *key, const char *model, int timeout_s,
                     const atomic_int *cancel, struct outdrift_set *s, FILE *progress)
{
    memset(s, 0, sizeof *s);
    outdrift_windows_sha(s->windows_sha);
    int measured = 0, n = outdrift_window_count();
    for (int i = 0; i < n && !(cancel && atomic_load(cancel)); i++) {
        struct outdrift_window *w = &s->w[s->n++];
        char *text = (char *)outdrift_window(i, w->name);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", model);
        cJSON_AddStringToObject(o, "prompt", text ? text : "");
        cJSON_AddNumberToObject(o, "max_tokens", 1);
        cJSON_AddNumberToObject(o, "temperature", 0);
        cJSON_AddNumberToObject(o, "prompt_logprobs", OUTDRIFT_K);
        struct api_call call = {.path = "/v1/completions",
                                .body = cJSON_PrintUnformatted(o),
                                .timeout_ms = timeout_s * 1000,
                                .max_body = MAX_BODY};
        cJSON_Delete(o);
        free(text);
        if (!call.body) {
            snprintf(w->error, sizeof w->error, "out of memory");
        } else if (api_run(base, key, &call, 1, cancel) != 1) {
            text_copy_field(w->error, sizeof w->error, call.error, strlen(call.error));
        } else if (outdrift_parse(buf_str(&call.raw), call.raw.len, w) == 0) {
            measured++;
        }
        if (progress)
            fprintf(progress, "  drift %2d/%d %-14s %s\n", i + 1, n, w->name,
                    w->error[0] ? w->error : "ok");
        free(call.body);
        api_call_free(&call);
    }
    return measured;
}

void outdrift_free(struct outdrift_set *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->w[i].pos);
    memset(s, 0, sizeof *s);
}

/* ---- kept as text ---------------------------------------------------------------------- */

int outdrift_save(const struct outdrift_set *s, const char *path, struct buf *err)
{
    struct buf t = BUF_INIT;
    buf_printf(&t, "# outdrift measurement 1 windows-sha256 %s\n", s->windows_sha);
    for (int i = 0; i < s->n; i++) {
        const struct outdrift_window *w = &s->w[i];
        if (w->error[0]) {
            char clean[256];
            text_clean(clean, sizeof clean, w->error, strlen(w->error));
            buf_printf(&t, "%s\terror\t%s\n", w->name, clean);
            continue;
        }
        buf_printf(&t, "%s\tpositions\t%d\n", w->name, w->npos);
        for (int p = 0; p < w->npos; p++) {
            if (!w->pos[p].n)
                continue;
            buf_printf(&t, "%s\t%d\t", w->name, p);
            for (int k = 0; k < w->pos[p].n; k++)
                buf_printf(&t, "%s%ld:%.9g", k ? " " : "", w->pos[p].id[k], w->pos[p].lp[k]);
            buf_puts(&t, "\n");
        }
    }
    int rc = buf_write_file(path, buf_str(&t), t.len, 0600);
    if (rc < 0)
        buf_printf(err, "cannot write %s: %s", path, strerror(errno));
    buf_free(&t);
    return rc;
}

static struct outdrift_window *find_window(struct outdrift_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->w[i].name, name) == 0)
            return &s->w[i];
    return NULL;
}

/* One line: NAME<TAB>WHAT<TAB>REST, its newline cut; the fields split in
 * place, an empty one refused. */
static int load_line(struct outdrift_set *s, char *line)
{
    line[strcspn(line, "\n")] = '\0';
    char *name = line, *what = strchr(name, '\t'), *rest = what ? strchr(what + 1, '\t') : NULL;
    if (!rest)
        return -1;
    *what++ = '\0';
    *rest++ = '\0';
    if (!*name || !*what || !*rest || strlen(name) >= 48)
        return -1;
    struct outdrift_window *w = find_window(s, name);
    if (strcmp(what, "error") == 0 || strcmp(what, "positions") == 0) {
        if (w || s->n == OUTDRIFT_WINDOWS_MAX)
            return -1;
        w = &s->w[s->n++];
        snprintf(w->name, sizeof w->name, "%s", name);
        if (what[0] == 'e') {
            snprintf(w->error, sizeof w->error, "%s", rest);
            return 0;
        }
        char *end;
        long n = strtol(rest, &end, 10);
        if (*end || n < 0 || n > MAX_POSITIONS || !(w->pos = calloc((size_t)n + 1, sizeof *w->pos)))
            return -1;
        w->npos = (int)n;
        return 0;
    }
    char *end;
    long at = strtol(what, &end, 10);
    if (!w || w->error[0] || *end || at < 0 || at >= w->npos)
        return -1;
    struct outdrift_pos *p = &w->pos[at];
    /* ID:LOGPROB pairs, one space between */
    for (char *tok = rest;;) {
        char *colon = strchr(tok, ':');
        if (!colon || p->n == OUTDRIFT_K)
            return -1;
        p->id[p->n] = strtol(tok, &end, 10);
        if (end != colon || end == tok)
            return -1;
        p->lp[p->n] = strtod(colon + 1, &end);
        if ((*end && *end != ' ') || end == colon + 1 || !isfinite(p->lp[p->n]))
            return -1;
        p->n++;
        if (!*end)
            return 0;
        tok = end + 1;
    }
}

int outdrift_load(struct outdrift_set *s, const char *path, struct buf *err)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) {
        buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (lineno == 1) {
            if (sscanf(line, "# outdrift measurement 1 windows-sha256 %64[0-9a-f]", s->windows_sha) !=
                1)
                rc = -1;
        } else if (load_line(s, line) < 0) {
            rc = -1;
        }
        if (rc < 0) {
            buf_printf(err, "%s:%ld: not a drift measurement line", path, lineno);
            break;
        }
    }
    free(line);
    fclose(f);
    if (rc < 0)
        outdrift_free(s);
    return rc;
}

/* ---- comparing ----------------------------------------------------------------------- */

double outdrift_kld(const struct outdrift_pos *p, const struct outdrift_pos *q)
{
    double kl = 0, p_shared = 0, q_shared = 0;
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < q->n; j++)
            if (p->id[i] == q->id[j]) {
                double pi = exp(p->lp[i]), qj = exp(q->lp[j]);
                p_shared += pi;
                q_shared += qj;
                kl += pi * (p->lp[i] - q->lp[j]);
                break;
            }
    double p_rest = fmax(1 - p_shared, 1e-9), q_rest = fmax(1 - q_shared, 1e-9);
    kl += p_rest * log(p_rest / q_rest);
    return fmax(kl, 0);
}

bool outdrift_top1_same(const struct outdrift_pos *p, const struct outdrift_pos *q)
{
    return p->n && q->n && p->id[0] == q->id[0];
}

/* A small generator of our own, seeded fixed: the interval is the same
 * every time the same measurements are compared. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Positions compared, and the sums of top-1 agreement and KLD, per window. */
struct wsum {
    int n;
    double top1, kld;
};

static void bootstrap(const struct wsum *ws, int n, struct outdrift_report *r)
{
    enum { B = 2000 };
    double *t1 = malloc(sizeof(double) * B), *kl = malloc(sizeof(double) * B);
    if (!t1 || !kl || n == 0) {
        free(t1);
        free(kl);
        r->top1_lo = r->top1_hi = r->all.top1;
        r->kld_lo = r->kld_hi = r->all.kld;
        return;
    }
    uint64_t seed = 0x5eed5eed12345678ULL;
    for (int b = 0; b < B; b++) {
        double pos = 0, a = 0, k = 0;
        for (int i = 0; i < n; i++) {
            const struct wsum *w = &ws[next_rand(&seed) % (uint64_t)n];
            pos += w->n;
            a += w->top1;
            k += w->kld;
        }
        t1[b] = pos ? a / pos : 0;
        kl[b] = pos ? k / pos : 0;
    }
    qsort(t1, B, sizeof *t1, cmp_double);
    qsort(kl, B, sizeof *kl, cmp_double);
    r->top1_lo = t1[(int)(0.025 * B)];
    r->top1_hi = t1[(int)(0.975 * B) - 1];
    r->kld_lo = kl[(int)(0.025 * B)];
    r->kld_hi = kl[(int)(0.975 * B) - 1];
    free(t1);
    free(kl);
}

int outdrift_compare(const struct outdrift_set *base, const struct outdrift_set *cand,
                     struct outdrift_report *r, struct buf *err)
{
    memset(r, 0, sizeof *r);
    snprintf(r->all.name, sizeof r->all.name, "all");
    r->all.top1 = r->all.kld = -1;
    if (strcmp(base->windows_sha, cand->windows_sha) != 0) {
        buf_printf(err, "the baseline measured other windows (sha256 %.12s, now %.12s): record "
                        "the baseline again with accept --baseline",
                   base->windows_sha, cand->windows_sha);
        return -1;
    }
    struct wsum ws[OUTDRIFT_WINDOWS_MAX];
    double all_n = 0, all_a = 0, all_k = 0;
    for (int i = 0; i < cand->n; i++) {
        const struct outdrift_window *c = &cand->w[i];
        struct outdrift_score *sc = &r->win[r->n++];
        snprintf(sc->name, sizeof sc->name, "%s", c->name);
        sc->top1 = sc->kld = -1;
        const struct outdrift_window *b = NULL;
        for (int j = 0; j < base->n && !b; j++)
            if (strcmp(base->w[j].name, c->name) == 0)
                b = &base->w[j];
        if (!b || b->error[0]) {
            snprintf(sc->note, sizeof sc->note, "the baseline has no measurement of it");
            continue;
        }
        if (c->error[0]) {
            text_copy_field(sc->note, sizeof sc->note, c->error, strlen(c->error));
            continue;
        }
        if (b->npos != c->npos) {
            snprintf(sc->note, sizeof sc->note,
                     "%d positions, the baseline %d: the tokenizer differs", c->npos, b->npos);
            continue;
        }
        struct wsum w = {0};
        int short_at = -1;
        for (int p = 0; p < c->npos && short_at < 0; p++) {
            if (!b->pos[p].n)
                continue;
            /* fewer entries than the baseline's would shrink the KLD's
             * buckets: an answer that thin is no measurement */
            if (c->pos[p].n != b->pos[p].n) {
                short_at = p;
                break;
            }
            w.n++;
            w.top1 += outdrift_top1_same(&b->pos[p], &c->pos[p]);
            w.kld += outdrift_kld(&b->pos[p], &c->pos[p]);
        }
        if (short_at >= 0) {
            snprintf(sc->note, sizeof sc->note,
                     "position %d: %d entries, the baseline %d: not compared", short_at,
                     c->pos[short_at].n, b->pos[short_at].n);
            continue;
        }
        if (!w.n) {
            snprintf(sc->note, sizeof sc->note, "no position with logprobs on both");
            continue;
        }
        sc->npos = w.n;
        sc->top1 = w.top1 / w.n;
        sc->kld = w.kld / w.n;
        ws[r->compared++] = w;
        all_n += w.n;
        all_a += w.top1;
        all_k += w.kld;
    }
    r->all.npos = (int)all_n;
    if (all_n) {
        r->all.top1 = all_a / all_n;
        r->all.kld = all_k / all_n;
    }
    bootstrap(ws, r->compared, r);
    return 0;
}
