/* ui: the console's own model - options, the layout, focus, the log views,
 * the prompt - shared by the console's modules; state (src/live) is what it
 * draws. */
#ifndef DSV41_TUI_UI_H
#define DSV41_TUI_UI_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "graph.h"
#include "layout.h"
#include "monitor.h"
#include "state.h"
#include "strv.h"
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
    struct strv box;    /* a text overlay's lines (P: connecting Pi); none: closed */
    char box_title[120];
    enum prompt prompt;
    char input[128];
    char question[200];
    void (*on_yes)(struct ui *u);
    bool dirty, quit;
    char state_dir[512];
    char title[120];
    int w, h;
};

#endif
