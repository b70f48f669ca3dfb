/* help: the '?' overlay - the key table it is given, in pages when the
 * terminal is too short for it. */
#include <curses.h>

#include "draw_util.h"
#include "help.h"

/* The overlay's size: the whole table when it fits, else pages of it. */
static void help_box(const struct ui *u, int n, int *w, int *h, int *rows)
{
    *w = u->w < 76 ? u->w : 76;
    *h = n + 4 < u->h - 2 ? n + 4 : u->h - 2;
    *rows = *h - 4 > 1 ? *h - 4 : 1;
}

int help_pages(const struct ui *u, int n)
{
    int w, h, rows;
    help_box(u, n, &w, &h, &rows);
    return (n + rows - 1) / rows;
}

void help_draw(const struct ui *u, const struct key_entry *k, int n)
{
    int w, h, rows;
    help_box(u, n, &w, &h, &rows);
    int pages = (n + rows - 1) / rows, page = u->help <= pages ? u->help : pages;
    int y0 = (u->h - h) / 2, x0 = (u->w - w) / 2;
    int a = draw_attr(u, ROLE_NORMAL);
    for (int y = 0; y < h; y++)
        fill(u, y0 + y, x0, w, a | A_REVERSE);
    if (pages == 1)
        put(u, y0, x0 + 2, w - 4, a | A_REVERSE | A_BOLD, "dsv41-top keys (any key closes)");
    else
        putf(u, y0, x0 + 2, w - 4, a | A_REVERSE | A_BOLD,
             "dsv41-top keys %d/%d (%s, any other key closes)", page, pages,
             page < pages ? "Space: more" : "last page");
    for (int i = 0; i < rows && (page - 1) * rows + i < n; i++) {
        const struct key_entry *e = &k[(page - 1) * rows + i];
        putf(u, y0 + 2 + i, x0 + 2, w - 4, a | A_REVERSE, "%-6s %s%s", e->label, e->help,
             e->action && u->readonly ? " [read-only]" : "");
    }
}
