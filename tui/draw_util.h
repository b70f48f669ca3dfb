/* draw_util: clipped text output shared by the panes (curses side). */
#ifndef DSV41_TUI_DRAW_UTIL_H
#define DSV41_TUI_DRAW_UTIL_H

#include <stddef.h>

#include "probe.h"
#include "tui.h"

/* Text at y,x cut to maxw display columns; returns the columns used.
 * Control bytes and (with --ascii) anything non-ASCII show as '?'. */
int put(const struct ui *u, int y, int x, int maxw, int attr, const char *text);
int putf(const struct ui *u, int y, int x, int maxw, int attr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void fill(const struct ui *u, int y, int x, int w, int attr);
/* A pane's title row; highlighted when the pane has the focus. */
void title(const struct ui *u, struct rect r, int pane, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "n/a" for a value the node does not report. */
const char *fmt_pval(char *out, size_t sz, struct pval v, int prec);

#endif
