/* cmdtab: every subcommand once - its documentation (usage.h) and its entry
 * point. main() dispatches through it; docs.c prints the man page, the
 * completions and the README's tables from it. */
#ifndef DSV41_CMDTAB_H
#define DSV41_CMDTAB_H

#include <stddef.h>

#include "config.h"
#include "usage.h"

struct cmd_entry {
    const struct usage_doc *doc;
    int (*fn)(const struct config *c, int argc, char **argv);
};

extern const struct cmd_entry CMDTAB[];
extern const size_t CMDTAB_N;
/* The options main() takes before a command, and its own --help. */
extern const struct usage_doc main_doc;

const struct cmd_entry *cmdtab_find(const char *name);
/* `dsv41-top --help`: the synopsis, the commands with their summaries. */
void cmdtab_usage(FILE *f);

#endif
