/* docs: the man pages, the shell completions and the docs' tables, printed
 * from the command table, the console's options and keys, and the settings:
 * generated, never written by hand, so they cannot drift from the code. */
#ifndef DSV41_DOCS_H
#define DSV41_DOCS_H

#include <stdio.h>

#include "config.h"
#include "usage.h"

extern const struct usage_doc docs_doc;
/* The man page named (dsv41-top, dsv41-guard, dsv41-verify, dsv41-xfer) in
 * roff to f (docs_man.c); -1 for a name it does not know. */
int docs_man(FILE *f, const char *page);
int cmd_docs(const struct config *c, int argc, char **argv);

#endif
