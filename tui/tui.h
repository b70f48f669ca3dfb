/* tui: the console. The only code that includes curses. It draws state
 * (src/state.h) and starts the engine's actions as jobs (src/job.h); it
 * never waits on the network. */
#ifndef DSV41_TUI_H
#define DSV41_TUI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "graph.h"
#include "layout.h"
#include "monitor.h"
#include "state.h"
#include "theme.h"

#define TUI_MAX_THEMES 32

struct logview {
    bool follow;
    uint64_t bottom;     /* sequence number of the last line shown when not following */
    bool wrap;
    char filter[128];
    int64_t hit;         /* the line the last search found; -1 none */
};

enum prompt { PROMPT_NONE, PROMPT_SEARCH, PROMPT_FILTER, PROMPT_CONFIRM };

struct ui {
    const struct config *c;
    struct state *s;
    struct monitor *mon;
    bool ascii, blocks, color, readonly, mouse;
    enum glyphs glyphs;
    int interval_ms;
    struct theme theme;
    char themes[TUI_MAX_THEMES][64];
    int nthemes, theme_idx;
    struct layout_opts lo;
    struct layout l;
    int focus;            /* enum pane */
    int node_page;
    struct logview lv[2];
    int log_rank[2];      /* which rank each log pane shows (r cycles it) */
    char search[128];
    int search_dir;       /* -1 older, +1 newer */
    int help; /* the help overlay's page shown (from 1); 0: closed */
    enum prompt prompt;
    char input[128];
    char question[200];
    void (*on_yes)(struct ui *u);
    bool dirty, quit;
    char state_dir[512];
    char title[120];
    int w, h;
};

/* keys.c: the one table behind dispatch, the help overlay and the docs. */
struct key_entry {
    int key;
    const char *label;    /* as shown: "s", "PgUp", "Tab" */
    const char *help;
    void (*fn)(struct ui *u);
    bool action;          /* changes the deployment: refused with --readonly */
};
const struct key_entry *keys_table(int *n);
/* Runs the key's entry; false when no entry has it. */
bool keys_dispatch(struct ui *u, int key);
/* The keys as a Markdown table (README's keys section is this output). */
void keys_markdown(FILE *f);
/* The focused log view (0 or 1): the focused log pane, else the first. */
int keys_log_index(const struct ui *u);

/* draw.c */
void draw_screen(struct ui *u);
/* Pages the help overlay needs at the current size (Space turns them). */
int draw_help_pages(const struct ui *u);
/* Attributes for a role under the current theme (colour pairs set up by
 * draw_apply_theme). */
int draw_attr(const struct ui *u, enum theme_role r);
void draw_apply_theme(struct ui *u);

/* Entry point: `dsv41-top` without a command. */
int tui_main(const struct config *c, int argc, char **argv, char **base_args, int nbase);

#endif
