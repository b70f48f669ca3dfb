/* theme: colour themes read at run time from NAME.theme files, looked up in
 * $XDG_CONFIG_HOME/dsv41-top/themes, then beside the program (themes/ in a
 * build tree, ../share/dsv41-top/themes when installed). A line is
 * "ROLE = FG, BG[, ATTR...]"; '#' starts a comment. Parsing is pure (no
 * curses): a malformed file is refused with its name and line. */
#ifndef DSV41_TUI_THEME_H
#define DSV41_TUI_THEME_H

#include <stdbool.h>
#include <stddef.h>

enum theme_role {
    ROLE_NORMAL, ROLE_HEADER, ROLE_TITLE, ROLE_TITLE_FOCUS, ROLE_DIM, ROLE_GOOD, ROLE_WARN,
    ROLE_BAD, ROLE_GAUGE, ROLE_GRAPH, ROLE_STATUS, ROLE_SEARCH, ROLE_ERRLINE, ROLE_BANNER,
    ROLE_COUNT
};

#define THEME_BOLD 1u
#define THEME_DIM 2u
#define THEME_REVERSE 4u
#define THEME_UNDERLINE 8u

struct theme_style {
    short fg, bg; /* -1 terminal default; 0-255 */
    unsigned attrs;
};

struct theme {
    char name[64];
    struct theme_style role[ROLE_COUNT];
};

const char *theme_role_name(enum theme_role r);
/* Parses text (from file, for messages). 0, or -1 with "FILE:LINE: why". */
int theme_parse(const char *text, const char *file, struct theme *t, char *err, size_t errsz);
/* The built-in fallback when no file is found: attributes only. */
void theme_mono(struct theme *t);
/* Finds NAME.theme (see above); 0 with the path, -1 when nowhere. */
int theme_find(const char *name, char *path, size_t sz);
int theme_load(const char *name, struct theme *t, char *err, size_t errsz);
/* The names of every theme found, sorted, unique; returns how many. */
int theme_list(char names[][64], int max);

#endif
