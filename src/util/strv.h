/* strv: a growable vector of owned strings (argv, environment lists). */
#ifndef DSV41_STRV_H
#define DSV41_STRV_H

#include "buf.h"

struct strv {
    char **v; /* NULL-terminated when n > 0 */
    int n, cap;
};

#define STRV_INIT {NULL, 0, 0}

int strv_add(struct strv *s, const char *str);
int strv_addf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Splits on blanks (no quoting rules: one word per blank-separated run). */
int strv_add_words(struct strv *s, const char *text);
/* Splits a setting's value that is a list of arguments (EXTRA, EXTRA_ENV,
 * VLLM_CMD) by the POSIX shell's rules for words, and nothing else: blanks
 * (space, tab, newline) separate words; '...' keeps every byte; "..." keeps
 * every byte except that \ escapes " \ $ ` and newline there; \ outside
 * quotes escapes the next byte; \ before a newline joins lines; '' or ""
 * is an empty word. A word that begins with { or [ is JSON: it runs to its
 * matching bracket, blanks included, so a JSON argument needs no quotes.
 * No shell ever reads the words, so nothing is expanded
 * or special: $VAR, $(...), `...`, ~, * ? [ ], ; | & < > ( ) and # stay as
 * they are written (not an error: they mean nothing here).
 * -1 with err ("column N: ...", 1-based byte columns) for a quote or a
 * JSON bracket left open, or a \ that ends the text (err may be NULL); s then holds what it held
 * before. */
int strv_add_shell_words(struct strv *s, const char *text, struct buf *err);
/* The value of NAME in a KEY=VALUE list, or NULL. */
const char *strv_env_get(const struct strv *s, const char *name);
/* Drops the words from index n on (n <= s->n). */
void strv_truncate(struct strv *s, int n);
void strv_free(struct strv *s);

#endif
