/* docs: the man page, the shell completions and the README's tables, printed
 * from the command table, the console's options and keys, and the settings:
 * generated, never written by hand, so they cannot drift from the code. */
#ifndef DSV41_DOCS_H
#define DSV41_DOCS_H

#include "config.h"
#include "usage.h"

extern const struct usage_doc docs_doc;
int cmd_docs(const struct config *c, int argc, char **argv);

#endif
