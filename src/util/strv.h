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
/* The value of NAME in a KEY=VALUE list, or NULL. */
const char *strv_env_get(const struct strv *s, const char *name);
void strv_free(struct strv *s);

#endif
