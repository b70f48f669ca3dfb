#include "layout.h"

#include <string.h>

/* Narrowest node column that still shows a gauge and its numbers. */
#define NODE_COL_MIN 24

static struct rect R(int y, int x, int h, int w)
{
    struct rect r = {y, x, h > 0 && w > 0 ? h : 0, h > 0 && w > 0 ? w : 0};
    return r;
}

static void split_cols(struct layout *l, struct rect area, int nnodes)
{
    int n = area.w / NODE_COL_MIN;
    if (n > nnodes)
        n = nnodes;
    if (n > LAYOUT_MAX_NODES)
        n = LAYOUT_MAX_NODES;
    if (n < 1)
        n = 1;
    l->ncols = n;
    int x = area.x;
    for (int i = 0; i < n; i++) {
        int w = i == n - 1 ? area.x + area.w - x : area.w / n;
        /* one blank column between nodes */
        l->col[i] = R(area.y, x, area.h, i == n - 1 ? w : w - 1);
        x += w;
    }
}

/* Two log panes side by side when wide enough, else one above the other. */
static void split_logs(struct layout *l, struct rect area, int nlogs)
{
    if (nlogs < 2) {
        l->pane[PANE_LOG0] = area;
        return;
    }
    if (area.w >= 120 || area.h < 12) {
        int w0 = area.w / 2;
        l->pane[PANE_LOG0] = R(area.y, area.x, area.h, w0 - 1);
        l->pane[PANE_LOG1] = R(area.y, area.x + w0, area.h, area.w - w0);
    } else {
        int h0 = area.h / 2;
        l->pane[PANE_LOG0] = R(area.y, area.x, h0, area.w);
        l->pane[PANE_LOG1] = R(area.y + h0, area.x, area.h - h0, area.w);
    }
}

static void overview(struct layout *l, struct rect body, const struct layout_opts *o)
{
    int w = body.w, bh = body.h, y = body.y;
    int sw = w >= 120 ? 42 : 30;
    int th = bh >= 50 ? 14 : bh >= 34 ? 11 : 9;
    int shown = o->nnodes < 1 ? 1 : o->nnodes;
    int cap = bh >= 40 ? 8 : 3;
    l->fabric_rows = bh >= 30 ? 2 : 1;
    int fh = 2 + (shown < cap ? shown : cap) * l->fabric_rows;
    bool jobs_beside = w >= 120;
    int jh = jobs_beside ? 0 : (bh >= 34 ? 6 : 4);
    /* the download's pane: rows of its own, else the jobs pane's (the jobs
     * tab still lists them) */
    int dh = 0;
    if (o->download) {
        int left = bh - th - fh - jh - 5; /* the logs keep 5 rows, or 3 at a pinch */
        dh = bh >= 40 ? 8 : bh >= 30 ? 6 : 4;
        dh = dh < left ? dh : left >= 4 ? left : left + 2 >= 4 ? 4 : 0;
        if (dh < 4 && jh >= 4) {
            dh = jh;
            jh = 0;
        } else if (dh < 4) {
            dh = 0;
        }
    }
    l->pane[PANE_NODES] = R(y, 0, th, w - sw - 1);
    l->pane[PANE_SERVER] = R(y, w - sw, th, sw);
    split_cols(l, l->pane[PANE_NODES], o->nnodes);
    y += th;
    if (jobs_beside) {
        int jw = w / 3;
        l->pane[PANE_FABRIC] = R(y, 0, fh, w - jw - 1);
        l->pane[PANE_JOBS] = R(y, w - jw, fh, jw);
        y += fh;
    } else {
        l->pane[PANE_FABRIC] = R(y, 0, fh, w);
        y += fh;
        l->pane[PANE_JOBS] = R(y, 0, jh, w);
        y += jh;
    }
    l->pane[PANE_DOWNLOAD] = R(y, 0, dh, w);
    y += dh;
    split_logs(l, R(y, 0, body.y + bh - y, w), o->nlogs);
}

void layout_compute(int w, int h, const struct layout_opts *o, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (w < LAYOUT_MIN_W || h < LAYOUT_MIN_H) {
        l->too_small = true;
        return;
    }
    l->header = R(0, 0, 1, w);
    l->fabric_rows = 2;
    l->status = R(h - 1, 0, 1, w);
    struct rect body = R(1, 0, h - 2, w);
    if (o->zoom >= 0 && o->zoom < PANE_COUNT) {
        if (o->zoom == PANE_LOG1 && o->nlogs < 2)
            l->pane[PANE_LOG0] = body;
        else
            l->pane[o->zoom] = body;
        if (o->zoom == PANE_NODES)
            split_cols(l, body, o->nnodes);
        return;
    }
    switch (o->tab) {
    case TAB_LOGS:
        split_logs(l, body, o->nlogs);
        break;
    case TAB_JOBS:
        l->pane[PANE_JOBS] = body;
        break;
    default:
        overview(l, body, o);
        break;
    }
}

bool rect_overlap(const struct rect *a, const struct rect *b)
{
    if (!a->h || !a->w || !b->h || !b->w)
        return false;
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

bool rect_inside(const struct rect *r, int w, int h)
{
    if (!r->h && !r->w)
        return true;
    return r->x >= 0 && r->y >= 0 && r->w > 0 && r->h > 0 && r->x + r->w <= w && r->y + r->h <= h;
}
