/* usage: a command's documentation as data. One struct per command holds its
 * synopsis, options and text; --help, the command table, the man page, the
 * shell completions and the README tables are all printed from it, and the
 * arguments a command is given are checked against it, so the words and the
 * parser cannot drift apart. */
#ifndef DSV41_USAGE_H
#define DSV41_USAGE_H

#include <stdbool.h>
#include <stdio.h>

#include "buf.h"

/* One option, or an operand when flag does not start with '-'. */
struct usage_opt {
    const char *flag; /* "--tail", "-f, --follow" (aliases after ", "), or "URL" */
    const char *arg;  /* "N", "FILE", "N..." (numbers until the next flag); NULL: none */
    const char *help; /* one sentence, unwrapped */
};

/* One exit status and when a command exits with it; a table ends with code -1.
 * The commands return these codes; --help, the man page's EXIT STATUS and
 * the docs' table (dsv41-top docs exits) are printed from the table. */
struct usage_exit {
    int code;
    const char *when;
};

struct usage_doc {
    const char *name; /* "launch"; NULL for the console itself; "dsv41-guard": a program */
    const char *synopsis; /* NULL: built from opts; else lines after "dsv41-top NAME " */
    const char *summary;  /* one line for the command table */
    const char *text;     /* what it does: paragraphs apart by "\n\n", lines unwrapped */
    const struct usage_exit *exits; /* NULL: USAGE_EXITS_PLAIN */
    const struct usage_opt *opts;   /* ends with {NULL} */
};

/* 0 done, 2 a usage error: a command that can fail in no other way. */
extern const struct usage_exit USAGE_EXITS_PLAIN[];
/* The table of d (its own, or USAGE_EXITS_PLAIN). */
const struct usage_exit *usage_exits(const struct usage_doc *d);
/* "dsv41-top NAME", "dsv41-top" (the console), or a program's own name. */
void usage_prog(struct buf *b, const struct usage_doc *d);

/* The synopsis after "dsv41-top NAME": given, or "[--flag ARG]..." built. */
void usage_synopsis(struct buf *b, const struct usage_doc *d);
/* --help: synopsis, text, options and exit status, wrapped to 80 columns. */
void usage_print(FILE *f, const struct usage_doc *d);
/* The words of text wrapped at width, each line after the first indented;
 * "\n\n" keeps paragraphs apart. */
void usage_wrap(FILE *f, const char *text, int indent, int width);
/* Whether argv (argv[0] the command) asks for --help / -h where an option
 * can stand (not as the value of an option that takes one). */
bool usage_wants_help(const struct usage_doc *d, int argc, char *const *argv);
/* Every option in argv is one d documents (a value where it takes one):
 * -1 with "unknown option" or "needs a value" in err. Operands pass. */
int usage_check(const struct usage_doc *d, int argc, char *const *argv, struct buf *err);
/* The option of d whose flag (or alias) is word ("--x" or "--x=v"); NULL. */
const struct usage_opt *usage_find(const struct usage_doc *d, const char *word);
/* Calls fn with each name of opt's flag ("-f", "--follow"). */
void usage_each_flag(const struct usage_opt *o, void (*fn)(void *ctx, const char *flag, size_t n),
                     void *ctx);

#endif
