/* dlpane: the checkpoint download's pane - the overall bar, rate and ETA, a
 * graph of the rate, the files in flight, those verified while the console
 * watched and the shards assemble is rebuilding - drawn from
 * state->download (src/live/dlview). */
#include <curses.h>
#include <math.h>
#include <string.h>

#include "draw_util.h"
#include "panes.h"
#include "progress.h"

static double frac_of(int64_t done, int64_t total)
{
    return total > 0 ? (double)done / (double)total : 1.0;
}

/* One file: its name, how far, and what is special about it. */
static void file_line(struct ui *u, int y, int x, int w, const struct state_dl_file *f,
                      const char *kind)
{
    char done[32], size[32], what[64] = "";
    progress_bytes(done, sizeof done, (double)f->done);
    progress_bytes(size, sizeof size, (double)f->size);
    if (f->hashing)
        snprintf(what, sizeof what, "  landed, hash being confirmed");
    else if (f->parts)
        snprintf(what, sizeof what, "  in place from %d parts", f->parts);
    int used = putf(u, y, x, w, draw_attr(u, ROLE_NORMAL), "%s%5.1f%% %9s of %-9s ", kind,
                    100 * frac_of(f->done, f->size), done, size);
    int nw = w - used - (int)strlen(what);
    used += put(u, y, x + used, nw > 12 ? nw : 12, draw_attr(u, ROLE_NORMAL), f->path);
    put(u, y, x + used, w - used, draw_attr(u, ROLE_DIM), what);
}

static void summary_line(struct ui *u, int y, struct rect r, const struct state_download *d)
{
    char done[32], total[32], rate[32] = "n/a", eta[32] = "";
    progress_bytes(done, sizeof done, (double)d->done);
    progress_bytes(total, sizeof total, (double)d->total);
    if (d->rate.ok) {
        progress_bytes(rate, sizeof rate, d->rate.v);
        strncat(rate, "/s", sizeof rate - strlen(rate) - 1);
        if (d->rate.v > 0)
            progress_duration(eta, sizeof eta, (double)(d->total - d->done) / d->rate.v);
    }
    double f = frac_of(d->done, d->total);
    int gw = r.w >= 100 ? 30 : 16, x = r.x;
    char bar[256];
    graph_gauge(f, gw, u->glyphs, bar, sizeof bar);
    x += put(u, y, x, gw, draw_attr(u, ROLE_GAUGE), bar);
    putf(u, y, x, r.x + r.w - x, draw_attr(u, ROLE_NORMAL),
         " %5.1f%%  %s of %s  %s%s%s  files %d/%d%s", 100 * f, done, total,
         d->pid ? rate : "stopped", eta[0] && d->pid ? "  ETA " : "", d->pid ? eta : "",
         d->verified, d->files, r.w >= 100 ? " verified" : "");
}

void pane_download(struct ui *u)
{
    struct rect r = u->l.pane[PANE_DOWNLOAD];
    const struct state_download *d = &u->s->download;
    char state[160];
    if (d->pid)
        snprintf(state, sizeof state, "running (pid %ld)", d->pid);
    else if (d->have && d->verified < d->files)
        snprintf(state, sizeof state, "unfinished: d resumes it");
    else
        snprintf(state, sizeof state, "%s", d->nrebuild ? "assemble" : "");
    title(u, r, PANE_DOWNLOAD, "download %s  %s%s%.12s", state, d->repo, d->commit[0] ? " @ " : "",
          d->commit);
    int y = r.y + 1, end = r.y + r.h;
    if (d->error[0]) {
        put(u, y++, r.x, r.w, draw_attr(u, ROLE_BAD), d->error);
    } else if (d->have) {
        summary_line(u, y++, r, d);
    }
    if (y >= end)
        return;
    /* the rate graph on the left when the pane is wide and tall enough */
    int gx = r.x, gw = 0, rows = end - y;
    if (r.w >= 100 && rows >= 2) {
        gw = r.w / 4;
        static char grows[8][1024];
        int gr = rows < 8 ? rows : 8;
        float vals[STATE_HIST];
        int nv = 0;
        float top = 1;
        unsigned have = d->nhist_rate < STATE_HIST ? d->nhist_rate : STATE_HIST;
        for (unsigned k = have; k-- > 0;) {
            float v = state_hist(d->hist_rate, d->nhist_rate, k);
            vals[nv++] = v;
            top = !isnan(v) && v > top ? v : top;
        }
        graph_render(vals, nv, 0, top, gw - 1, gr - 1, u->glyphs, &grows[0][0], sizeof grows[0]);
        for (int k = 0; k < gr - 1; k++)
            put(u, y + k, gx, gw - 1, draw_attr(u, ROLE_GRAPH), grows[k]);
        char t[32];
        progress_bytes(t, sizeof t, top * 1e6);
        putf(u, y + gr - 1, gx, gw - 1, draw_attr(u, ROLE_DIM), "rate (top %s/s)", t);
    }
    int x = r.x + gw, w = r.w - gw;
    /* the newest verified file keeps a row however many are in flight: with
     * 16 connections the files in flight alone would fill a short pane */
    int keep = d->nverified_last > 0 ? 1 : 0;
    for (int i = 0; i < d->ninflight && y < end - keep; i++)
        file_line(u, y++, x, w, &d->inflight[i], "");
    for (int i = 0; i < d->nrebuild && y < end; i++)
        file_line(u, y++, x, w, &d->rebuild[i], "assemble ");
    for (int i = 0; i < d->nverified_last && y < end; i++)
        putf(u, y++, x, w, draw_attr(u, ROLE_GOOD), "verified  %s", d->verified_last[i]);
    if (d->in_parts && y < end)
        putf(u, y++, x, w, draw_attr(u, ROLE_WARN),
             "%d shard%s still in .partNN pieces: dsv41-top assemble rebuilds them in place",
             d->in_parts, d->in_parts == 1 ? "" : "s");
}
