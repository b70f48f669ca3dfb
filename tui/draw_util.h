/* draw_util: the drawing primitives every part of the console uses (curses
 * side): colour pairs of the theme, clipped text output, titles, "n/a". */
#ifndef DSV41_TUI_DRAW_UTIL_H
#define DSV41_TUI_DRAW_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "probe.h"
#include "ui.h"

/* Attributes for a role under the current theme (colour pairs set up by
 * draw_apply_theme). */
int draw_attr(const struct ui *u, enum theme_role r);
void draw_apply_theme(struct ui *u);

/* One character of text: its bytes, and the columns put() gives it. An
 * invalid byte, a control byte, an unprintable character and (ascii)
 * anything non-ASCII draw as one '?' (raw false). The one place that steps
 * through UTF-8, so measuring and drawing agree. */
struct glyph {
    size_t n;
    int cols;
    bool raw; /* draw the n bytes as they are */
};
struct glyph glyph_next(const char *p, mbstate_t *ms, bool ascii);

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
