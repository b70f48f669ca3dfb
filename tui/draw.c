/* draw: the screen from state, under the state lock. Each pane clips to its
 * rectangle by display columns, so no text (log lines included) can spill
 * into another pane. ncurses sends only what changed. */
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "draw_util.h"
#include "panes.h"
#include "tui.h"

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

/* The overlay's size: the whole table when it fits, else pages of it. */
static void help_box(const struct ui *u, int n, int *w, int *h, int *rows)
{
    *w = u->w < 76 ? u->w : 76;
    *h = n + 4 < u->h - 2 ? n + 4 : u->h - 2;
    *rows = *h - 4 > 1 ? *h - 4 : 1;
}

int draw_help_pages(const struct ui *u)
{
    int n, w, h, rows;
    keys_table(&n);
    help_box(u, n, &w, &h, &rows);
    return (n + rows - 1) / rows;
}

static void draw_help(struct ui *u)
{
    int n, w, h, rows;
    const struct key_entry *k = keys_table(&n);
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
    for (int i = 0; i < 2; i++)
        if (u->l.pane[PANE_LOG0 + i].h)
            pane_log(u, i);
    draw_status(u);
    state_unlock(u->s);
    if (u->help)
        draw_help(u);
}
