/* keys: the one table behind dispatch, the help overlay (help.c draws the
 * table it is given) and the docs. */
#ifndef DSV41_TUI_KEYS_H
#define DSV41_TUI_KEYS_H

#include <stdbool.h>
#include <stdio.h>

#include "ui.h"

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

#endif
