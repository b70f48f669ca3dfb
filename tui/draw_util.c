/* draw_util: see draw_util.h. */
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "draw_util.h"

static short g_pairs[ROLE_COUNT];

void draw_apply_theme(struct ui *u)
{
    if (!u->color || !has_colors())
        return;
    for (int r = 0; r < ROLE_COUNT; r++) {
        short fg = u->theme.role[r].fg, bg = u->theme.role[r].bg;
        if (fg >= COLORS)
            fg = (short)(fg % 8);
        if (bg >= COLORS)
            bg = (short)(bg % 8);
        init_pair((short)(r + 1), fg, bg);
        g_pairs[r] = (short)(r + 1);
    }
    bkgdset(' ' | (chtype)draw_attr(u, ROLE_NORMAL));
    clearok(curscr, TRUE);
}

int draw_attr(const struct ui *u, enum theme_role r)
{
    const struct theme_style *st = &u->theme.role[r];
    int a = 0;
    if (u->color && g_pairs[r])
        a |= (int)COLOR_PAIR(g_pairs[r]);
    if (st->attrs & THEME_BOLD)
        a |= A_BOLD;
    if (st->attrs & THEME_DIM)
        a |= A_DIM;
    if (st->attrs & THEME_REVERSE)
        a |= A_REVERSE;
    if (st->attrs & THEME_UNDERLINE)
        a |= A_UNDERLINE;
    return a;
}

struct glyph glyph_next(const char *p, mbstate_t *ms, bool ascii)
{
    unsigned char c = (unsigned char)*p;
    if (c < 0x80)
        return (struct glyph){1, 1, c >= 0x20 && c != 0x7f};
    wchar_t wc;
    size_t n = mbrtowc(&wc, p, MB_CUR_MAX, ms);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        memset(ms, 0, sizeof *ms);
        return (struct glyph){1, 1, false};
    }
    int w = wcwidth(wc);
    if (ascii || w < 0)
        return (struct glyph){n, 1, false};
    return (struct glyph){n, w, true};
}

int put(const struct ui *u, int y, int x, int maxw, int attr, const char *text)
{
    if (maxw <= 0 || y < 0 || y >= u->h)
        return 0;
    attrset(attr);
    move(y, x);
    int cols = 0;
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    for (const char *p = text; *p;) {
        struct glyph g = glyph_next(p, &ms, u->ascii);
        if (cols + g.cols > maxw)
            break;
        if (g.raw)
            addnstr(p, (int)g.n);
        else
            addch('?');
        cols += g.cols;
        p += g.n;
    }
    return cols;
}

__attribute__((format(printf, 6, 7))) int putf(const struct ui *u, int y, int x, int maxw,
                                                int attr, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return put(u, y, x, maxw, attr, line);
}

void fill(const struct ui *u, int y, int x, int w, int attr)
{
    if (w <= 0 || y < 0 || y >= u->h)
        return;
    attrset(attr);
    mvhline(y, x, ' ', w);
}

const char *fmt_pval(char *out, size_t sz, struct pval v, int prec)
{
    if (!v.ok)
        snprintf(out, sz, "n/a");
    else
        snprintf(out, sz, "%.*f", prec, v.v);
    return out;
}

__attribute__((format(printf, 4, 5))) void title(const struct ui *u, struct rect r, int pane,
                                                  const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    int a = draw_attr(u, u->focus == pane ? ROLE_TITLE_FOCUS : ROLE_TITLE);
    fill(u, r.y, r.x, r.w, a);
    put(u, r.y, r.x, r.w, a, line);
}
