/* logpane: the ranks' logs and the jobs pane (jobs, bench table, messages). */
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "benchhist.h"
#include "benchtab.h"
#include "config.h"
#include "draw_util.h"
#include "fixstr.h"
#include "graph.h"
#include "panes.h"

/* A filter scans at most this many lines back per draw, so a rare match
 * in a full buffer cannot stall the screen during a flood. */
#define FILTER_SCAN 5000

/* Bytes of text that fit in w display columns as put() draws them (at
 * least one character). */
static size_t fit_bytes(const char *text, int w, bool ascii)
{
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    size_t off = 0;
    int cols = 0;
    while (text[off]) {
        struct glyph g = glyph_next(text + off, &ms, ascii);
        if (cols + g.cols > w && off > 0)
            break;
        cols += g.cols;
        off += g.n;
    }
    return off;
}

static int rows_of(const char *text, int w, bool ascii)
{
    int rows = 0;
    size_t off = 0, len = strlen(text);
    do {
        off += fit_bytes(text + off, w, ascii);
        rows++;
    } while (off < len && rows < 64);
    return rows;
}

void pane_log(struct ui *u, int i)
{
    struct rect r = u->l.pane[PANE_LOG0 + i];
    struct logview *v = &u->lv[i];
    int ri = u->log_rank[i] < u->s->nranks ? u->log_rank[i] : 0;
    const struct state_rank *rk = &u->s->ranks[ri];
    const struct logbuf *lb = &rk->log;
    uint64_t last = lb->end ? lb->end - 1 : 0;
    uint64_t bottom = v->follow ? last : v->bottom;
    if (bottom > last)
        bottom = last;
    if (bottom < lb->first)
        bottom = lb->first;
    if (!v->follow)
        v->bottom = bottom;
    char extra[200] = "";
    size_t el = 0;
    if (!v->follow)
        fixstr_appendf(extra, sizeof extra, &el, " PAUSED +%llu newer",
                       (unsigned long long)(last - bottom));
    if (v->filter[0])
        fixstr_appendf(extra, sizeof extra, &el, " filter '%s'", v->filter);
    if (v->wrap)
        fixstr_appendf(extra, sizeof extra, &el, " wrap");
    title(u, r, PANE_LOG0 + i, "log r%d %s%s%s", rk->rank, rk->node,
          rk->attached ? "" : " (not running)", extra);
    int rows = r.h - 1;
    if (lb->end == lb->first || rows <= 0) {
        put(u, r.y + 1, r.x, r.w, draw_attr(u, ROLE_DIM), "no log lines yet");
        return;
    }
    /* walk back from the bottom line collecting what fits */
    uint64_t seqs[256];
    int want = rows < 256 ? rows : 256, n = 0, used = 0, scanned = 0;
    for (int64_t s = (int64_t)bottom; s >= (int64_t)lb->first && used < want; s--) {
        const struct logline *l = logbuf_get(lb, (uint64_t)s);
        if (v->filter[0] && !logbuf_match(l->text, v->filter)) {
            if (++scanned > FILTER_SCAN)
                break;
            continue;
        }
        used += v->wrap ? rows_of(l->text, r.w, u->ascii) : 1;
        seqs[n++] = (uint64_t)s;
    }
    int y = r.y + 1 + (used < rows ? 0 : rows - used); /* a tall top line may start above */
    for (int k = n - 1; k >= 0; k--) {
        const struct logline *l = logbuf_get(lb, seqs[k]);
        int role = (int64_t)seqs[k] == v->hit ? ROLE_SEARCH : l->error ? ROLE_ERRLINE : ROLE_NORMAL;
        int a = draw_attr(u, role);
        if (!v->wrap) {
            if (y > r.y)
                put(u, y, r.x, r.w, a, l->text);
            y++;
            continue;
        }
        size_t off = 0, len = l->len;
        do {
            size_t fb = fit_bytes(l->text + off, r.w, u->ascii);
            if (y > r.y) {
                char part[LOGBUF_LINE_MAX + 64];
                memcpy(part, l->text + off, fb);
                part[fb] = '\0';
                put(u, y, r.x, r.w, a, part);
            }
            y++;
            off += fb;
        } while (off < len && y < r.y + r.h);
    }
}

static const char *job_word(enum job_status st)
{
    return st == JOB_RUNNING ? "running" : st == JOB_OK ? "done" : st == JOB_CANCELLED ? "cancelled" : "FAILED";
}

/* The bench files and the history, re-read now and then (local files). */
struct bench_view {
    struct benchtab t;
    struct benchhist h;
    struct benchhist_rec base;
    bool have_base;
    char hash[17];
    double loaded_at;
};

static void bench_load(struct ui *u, struct bench_view *b)
{
    double now = (double)time(NULL);
    if (now - b->loaded_at < 5)
        return;
    char dir[700];
    snprintf(dir, sizeof dir, "%s/bench", u->state_dir);
    benchtab_load(dir, &b->t);
    benchhist_load(u->state_dir, &b->h);
    config_hash(u->c, b->hash);
    /* the accepted baseline counts only for the configuration it measured */
    b->have_base = benchhist_baseline(u->state_dir, &b->base) == 0 &&
                   strcmp(b->base.hash, b->hash) == 0;
    b->loaded_at = now;
}

/* The figure's runs of this configuration, oldest first, as a one-line graph. */
static void bench_trend(const struct ui *u, const struct bench_view *b, const char *name, char *out,
                        size_t sz)
{
    float v[BENCHHIST_MAX];
    int n = 0;
    double hi = 0;
    for (int i = 0; i < b->h.n; i++) {
        if (strcmp(b->h.r[i].hash, b->hash) != 0)
            continue;
        double x = benchhist_figure(&b->h.r[i], name);
        v[n++] = x >= 0 ? (float)x : NAN;
        if (x > hi)
            hi = x;
    }
    out[0] = '\0';
    if (n >= 2 && hi > 0)
        graph_render(v, n, 0, hi, 8, 1, u->glyphs, out, sz);
}

static int draw_bench(struct ui *u, struct rect r, int y)
{
    static struct bench_view b;
    bench_load(u, &b);
    const struct benchtab *t = &b.t;
    double tol = config_num(u->c, CFG_ACCEPT_BENCH_TOL) / 100;
    int end = r.y + r.h;
    if (y >= end)
        return y;
    int a = draw_attr(u, ROLE_TITLE);
    int x = putf(u, y, r.x, r.w, a, "%-22s %9s %9s %-8s", "bench (tok/s)", "reference", "accepted",
                 "trend");
    for (int c = 0; c < t->nruns; c++)
        x += putf(u, y, r.x + x, r.w - x, a, " %16.16s", t->run[c]);
    y++;
    if (!t->nruns && y < end)
        put(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "no bench run yet: press b");
    for (int i = 0; i < t->nrows && y < end; i++) {
        char ref[16] = "", acc[16] = "n/a", trend[64];
        if (t->row[i].ref >= 0)
            snprintf(ref, sizeof ref, "%.0f", t->row[i].ref);
        double base = b.have_base ? benchhist_figure(&b.base, t->row[i].name) : -1;
        if (base >= 0)
            snprintf(acc, sizeof acc, "%.1f", base);
        bench_trend(u, &b, t->row[i].name, trend, sizeof trend);
        x = putf(u, y, r.x, r.w, draw_attr(u, ROLE_NORMAL), "%-22s %9s %9s ", t->row[i].name, ref,
                 acc);
        x += put(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_DIM), trend);
        x += putf(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_NORMAL), "%*s",
                  trend[0] ? 0 : 8, "");
        for (int c = 0; c < t->nruns; c++) {
            char v[16] = "n/a";
            double f = t->row[i].v[c];
            if (f >= 0)
                snprintf(v, sizeof v, "%.1f", f);
            /* below the reference by a fifth, or below the accepted baseline */
            bool low = f >= 0 && ((t->row[i].ref > 0 && f < 0.8 * t->row[i].ref) ||
                                  (base > 0 && f < base * (1 - tol)));
            x += putf(u, y, r.x + x, r.w - x, draw_attr(u, low ? ROLE_WARN : ROLE_NORMAL), " %16s",
                      v);
        }
        y++;
    }
    return y;
}

void pane_jobs(struct ui *u)
{
    struct rect r = u->l.pane[PANE_JOBS];
    struct state *s = u->s;
    title(u, r, PANE_JOBS, "jobs");
    int y = r.y + 1, end = r.y + r.h;
    bool full = u->lo.tab == TAB_JOBS || u->lo.zoom == PANE_JOBS;
    /* newest first */
    int order[STATE_JOBS], n = 0;
    for (int i = 0; i < STATE_JOBS; i++)
        if (s->jobs[i].id)
            order[n++] = i;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (s->jobs[order[b]].id > s->jobs[order[a]].id) {
                int t = order[a];
                order[a] = order[b];
                order[b] = t;
            }
    if (!n)
        put(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "no job yet (s start, t smoke, b bench)");
    time_t now = time(NULL);
    for (int k = 0; k < n && y < end; k++) {
        const struct state_job *j = &s->jobs[order[k]];
        int role = j->status == JOB_RUNNING ? ROLE_WARN : j->status == JOB_OK ? ROLE_GOOD : ROLE_BAD;
        long secs = (long)((j->status == JOB_RUNNING ? now : j->ended) - j->started);
        int x = putf(u, y, r.x, r.w, draw_attr(u, role), "#%u %-7s %-9s %4lds ", j->id, j->name,
                     job_word(j->status), secs);
        put(u, y++, r.x + x, r.w - x, draw_attr(u, ROLE_NORMAL), j->last);
    }
    if (!full)
        return;
    if (n && y + 2 < end) { /* the newest job's last lines */
        const struct state_job *j = &s->jobs[order[0]];
        put(u, ++y, r.x, r.w, draw_attr(u, ROLE_TITLE), "output of the newest job");
        y++;
        const struct logbuf *o = &j->out;
        uint64_t from = o->end > o->first + 6 ? o->end - 6 : o->first;
        for (uint64_t q = from; q < o->end && y < end; q++) {
            const struct logline *l = logbuf_get(o, q);
            put(u, y++, r.x + 2, r.w - 2, draw_attr(u, l->error ? ROLE_ERRLINE : ROLE_NORMAL),
                l->text);
        }
    }
    y++;
    y = draw_bench(u, r, y);
    if (y + 1 >= end)
        return;
    y++;
    put(u, y++, r.x, r.w, draw_attr(u, ROLE_TITLE), "messages");
    int rows = end - y;
    const struct logbuf *m = &s->messages;
    uint64_t from = m->end > m->first + (uint64_t)rows ? m->end - (uint64_t)rows : m->first;
    for (uint64_t q = from; q < m->end && y < end; q++) {
        const struct logline *l = logbuf_get(m, q);
        put(u, y++, r.x, r.w, draw_attr(u, ROLE_NORMAL), l->text);
    }
}
