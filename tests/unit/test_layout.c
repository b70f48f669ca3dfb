/* layout: every size from 20x10 to 300x100, every tab, zoom and node count:
 * panes inside the screen, never overlapping, and "too small" exactly below
 * 80x24. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "layout.h"

static void check(int w, int h, const struct layout_opts *o)
{
    struct layout l;
    layout_compute(w, h, o, &l);
    bool small = w < LAYOUT_MIN_W || h < LAYOUT_MIN_H;
    if (l.too_small != small)
        fail_msg("%dx%d: too_small %d", w, h, l.too_small);
    if (small)
        return;
    struct rect all[PANE_COUNT + 2 + LAYOUT_MAX_NODES];
    int n = 0;
    all[n++] = l.header;
    all[n++] = l.status;
    int shown = 0;
    for (int p = 0; p < PANE_COUNT; p++) {
        all[n++] = l.pane[p];
        shown += l.pane[p].h > 0;
    }
    if (!shown)
        fail_msg("%dx%d tab %d zoom %d: no pane shown", w, h, o->tab, o->zoom);
    for (int i = 0; i < n; i++) {
        if (!rect_inside(&all[i], w, h))
            fail_msg("%dx%d tab %d zoom %d nodes %d: rect %d (%d,%d %dx%d) outside", w, h, o->tab,
                     o->zoom, o->nnodes, i, all[i].y, all[i].x, all[i].h, all[i].w);
        for (int k = i + 1; k < n; k++)
            if (rect_overlap(&all[i], &all[k]))
                fail_msg("%dx%d tab %d zoom %d: rects %d and %d overlap", w, h, o->tab, o->zoom, i,
                         k);
    }
    if (l.pane[PANE_NODES].h) {
        if (l.ncols < 1 || l.ncols > o->nnodes)
            fail_msg("%dx%d: %d columns for %d nodes", w, h, l.ncols, o->nnodes);
        for (int c = 0; c < l.ncols; c++) {
            if (l.col[c].w < 20)
                fail_msg("%dx%d: node column %d only %d wide", w, h, c, l.col[c].w);
            struct rect pn = l.pane[PANE_NODES];
            if (l.col[c].x < pn.x || l.col[c].x + l.col[c].w > pn.x + pn.w)
                fail_msg("%dx%d: node column %d outside the nodes pane", w, h, c);
            for (int k = c + 1; k < l.ncols; k++)
                if (rect_overlap(&l.col[c], &l.col[k]))
                    fail_msg("%dx%d: node columns overlap", w, h);
        }
    }
    /* a download shows its pane on the overview at every size, and only then */
    if (o->tab == TAB_OVERVIEW && o->zoom < 0 && (l.pane[PANE_DOWNLOAD].h >= 4) != o->download)
        fail_msg("%dx%d nodes %d download %d: its pane %d rows", w, h, o->nnodes, o->download,
                 l.pane[PANE_DOWNLOAD].h);
    /* the overview shows logs of at least 2 lines with a title */
    if (o->tab == TAB_OVERVIEW && o->zoom < 0 && l.pane[PANE_LOG0].h < 3)
        fail_msg("%dx%d nodes %d: log pane %d rows", w, h, o->nnodes, l.pane[PANE_LOG0].h);
}

static void test_every_size(void **st)
{
    (void)st;
    long cases = 0;
    for (int w = 20; w <= 300; w++)
        for (int h = 10; h <= 100; h++)
            for (int nodes = 1; nodes <= LAYOUT_MAX_NODES; nodes += 1)
                for (int t = 0; t < TAB_COUNT; t++)
                    for (int z = -1; z < PANE_COUNT; z++) {
                        if ((t && z >= 0) || (nodes > 3 && (w % 7 || h % 5)))
                            continue; /* zoom ignores the tab; big clusters on a sparser grid */
                        struct layout_opts o = {nodes, nodes > 1 ? 2 : 1, (enum tab)t, z, false};
                        check(w, h, &o);
                        o.download = true;
                        check(w, h, &o);
                        cases += 2;
                    }
    assert_true(cases > 100000);
}

static void test_minimum_shows_everything(void **st)
{
    (void)st;
    struct layout l;
    struct layout_opts o = {2, 2, TAB_OVERVIEW, -1, false};
    layout_compute(80, 24, &o, &l);
    for (int p = 0; p < PANE_COUNT; p++)
        assert_true((l.pane[p].h > 0) == (p != PANE_DOWNLOAD));
    assert_int_equal(l.ncols, 2);
    o.download = true; /* at the smallest size it takes the jobs pane's rows */
    layout_compute(80, 24, &o, &l);
    for (int p = 0; p < PANE_COUNT; p++)
        assert_true((l.pane[p].h > 0) == (p != PANE_JOBS));
    layout_compute(120, 40, &o, &l);
    for (int p = 0; p < PANE_COUNT; p++)
        assert_true(l.pane[p].h > 0);
    o.download = false;
    layout_compute(79, 24, &o, &l);
    assert_true(l.too_small);
    layout_compute(80, 23, &o, &l);
    assert_true(l.too_small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_size),
        cmocka_unit_test(test_minimum_shows_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
