/* textbox: see textbox.h. */
#include <curses.h>
#include <string.h>

#include "draw_util.h"
#include "textbox.h"

void textbox_draw(const struct ui *u)
{
    int n = u->box.n, w = (int)strlen(u->box_title) + 4;
    for (int i = 0; i < n; i++)
        w = (int)strlen(u->box.v[i]) + 4 > w ? (int)strlen(u->box.v[i]) + 4 : w;
    w = w < u->w ? w : u->w;
    int h = n + 4 < u->h ? n + 4 : u->h;
    int y0 = (u->h - h) / 2, x0 = (u->w - w) / 2;
    int a = draw_attr(u, ROLE_NORMAL) | A_REVERSE;
    for (int y = 0; y < h; y++)
        fill(u, y0 + y, x0, w, a);
    put(u, y0, x0 + 2, w - 4, a | A_BOLD, u->box_title);
    for (int i = 0; i < n && 2 + i < h - 1; i++)
        put(u, y0 + 2 + i, x0 + 2, w - 4, a, u->box.v[i]);
}
