/* layout: where each pane goes for a terminal size. Pure (no curses), so it
 * is tested for every size: every rectangle inside the screen, none
 * overlapping, and a "too small" verdict below 80x24. */
#ifndef DSV41_TUI_LAYOUT_H
#define DSV41_TUI_LAYOUT_H

#include <stdbool.h>

#define LAYOUT_MIN_W 80
#define LAYOUT_MIN_H 24
#define LAYOUT_MAX_NODES 8

struct rect {
    int y, x, h, w; /* h == 0: not shown */
};

enum pane { PANE_NODES, PANE_SERVER, PANE_FABRIC, PANE_JOBS, PANE_LOG0, PANE_LOG1, PANE_DOWNLOAD,
            PANE_COUNT };

enum tab { TAB_OVERVIEW, TAB_LOGS, TAB_JOBS, TAB_COUNT };

struct layout_opts {
    int nnodes;     /* node columns wanted */
    int nlogs;      /* log panes (1 or 2) */
    enum tab tab;
    int zoom;       /* a pane filling the body, or -1 */
    bool download;  /* a download runs or is unfinished: its pane on the overview */
};

struct layout {
    bool too_small;
    struct rect header, status;
    struct rect pane[PANE_COUNT];
    /* the nodes pane split into columns; nodes beyond ncols are on other pages */
    int ncols;
    struct rect col[LAYOUT_MAX_NODES];
    int fabric_rows; /* rows per node in the fabric pane (1 compact, 2 full) */
};

void layout_compute(int w, int h, const struct layout_opts *o, struct layout *out);
bool rect_overlap(const struct rect *a, const struct rect *b);
bool rect_inside(const struct rect *r, int w, int h);

#endif
