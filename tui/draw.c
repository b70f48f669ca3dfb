/* draw: the screen from state, under the state lock, pane by pane. Each pane
 * clips to its rectangle by display columns (draw_util), so no text (log
 * lines included) can spill into another pane. ncurses sends only what
 * changed. */
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "draw.h"
#include "draw_util.h"
#include "panes.h"

static void draw_too_small(struct ui *u)
{
    erase();
    char msg[120];
    snprintf(msg, sizeof msg, "terminal too small: %dx%d, the console needs %dx%d", u->w, u->h,
             LAYOUT_MIN_W, LAYOUT_MIN_H);
    int len = (int)strlen(msg);
    int x = u->w > len ? (u->w - len) / 2 : 0;
    put(u, u->h / 2, x, u->w, draw_attr(u, ROLE_BAD), msg);
    if (u->h / 2 + 1 < u->h)
        put(u, u->h / 2 + 1, u->w > 14 ? (u->w - 14) / 2 : 0, u->w, draw_attr(u, ROLE_DIM),
            "q quits");
}

static void draw_status(struct ui *u)
{
    struct rect r = u->l.status;
    int a = draw_attr(u, ROLE_STATUS);
    fill(u, r.y, 0, r.w, a);
    if (u->prompt == PROMPT_CONFIRM) {
        put(u, r.y, 0, r.w, a | A_BOLD, u->question);
        return;
    }
    if (u->prompt == PROMPT_SEARCH || u->prompt == PROMPT_FILTER) {
        int used = putf(u, r.y, 0, r.w, a, "%s: %s", u->prompt == PROMPT_SEARCH ? "search" : "filter",
                        u->input);
        (void)used;
        return;
    }
    time_t now = time(NULL);
    if (u->s->status_line[0] && now - u->s->status_at < 15) {
        put(u, r.y, 0, r.w, a, u->s->status_line);
        return;
    }
    put(u, r.y, 0, r.w, a,
        u->readonly ? "read-only  Tab focus  z zoom  1/2/3 tabs  / search  f follow  ? help  q quit"
                    : "s start  S stop  t smoke  b bench  g gates  Tab focus  z zoom  1/2/3 tabs  "
                      "/ search  ? help  q quit");
}

void draw_screen(struct ui *u)
{
    getmaxyx(stdscr, u->h, u->w);
    state_lock(u->s);
    u->lo.nnodes = u->s->nnodes;
    u->lo.nlogs = u->s->nranks > 1 ? 2 : 1;
    u->lo.download = u->s->download.shown;
    layout_compute(u->w, u->h, &u->lo, &u->l);
    if (u->l.too_small) {
        state_unlock(u->s);
        draw_too_small(u);
        return;
    }
    erase();
    if (u->l.pane[u->focus].h == 0) /* the focused pane left the screen */
        for (int p = 0; p < PANE_COUNT; p++)
            if (u->l.pane[p].h) {
                u->focus = p;
                break;
            }
    pane_header(u);
    if (u->l.pane[PANE_NODES].h)
        pane_nodes(u);
    if (u->l.pane[PANE_SERVER].h)
        pane_server(u);
    if (u->l.pane[PANE_FABRIC].h)
        pane_fabric(u);
    if (u->l.pane[PANE_JOBS].h)
        pane_jobs(u);
    if (u->l.pane[PANE_DOWNLOAD].h)
        pane_download(u);
    for (int i = 0; i < 2; i++)
        if (u->l.pane[PANE_LOG0 + i].h)
            pane_log(u, i);
    draw_status(u);
    state_unlock(u->s);
}
