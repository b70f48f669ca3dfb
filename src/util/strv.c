#include "strv.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int strv_add(struct strv *s, const char *str)
{
    if (s->n + 2 > s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        char **v = realloc(s->v, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    char *copy = strdup(str);
    if (!copy)
        return -1;
    s->v[s->n++] = copy;
    s->v[s->n] = NULL;
    return 0;
}

int strv_addf(struct strv *s, const char *fmt, ...)
{
    struct buf b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (rc == 0)
        rc = strv_add(s, buf_str(&b));
    buf_free(&b);
    return rc;
}

int strv_add_words(struct strv *s, const char *text)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        size_t l = strcspn(p, " \t\n");
        if (!l)
            break;
        char *w = strndup(p, l);
        if (!w || strv_add(s, w) < 0) {
            free(w);
            return -1;
        }
        free(w);
        p += l;
    }
    return 0;
}

const char *strv_env_get(const struct strv *s, const char *name)
{
    size_t nl = strlen(name);
    for (int i = 0; i < s->n; i++)
        if (strncmp(s->v[i], name, nl) == 0 && s->v[i][nl] == '=')
            return s->v[i] + nl + 1;
    return NULL;
}

void strv_free(struct strv *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

void strv_truncate(struct strv *s, int n)
{
    while (s->n > n) {
        free(s->v[--s->n]);
        s->v[s->n] = NULL;
    }
}

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n';
}

/* One word from *pp on (at a non-blank byte) into w; *pp ends after it.
 * -1 with err for an open quote or a final backslash. */
static int shell_word(const char **pp, const char *text, struct buf *w, struct buf *err)
{
    const char *p = *pp;
    int rc = 0;
    while (*p && !is_blank(*p) && rc == 0) {
        const char *at = p;
        if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end) {
                buf_printf(err, "column %zu: the ' there is never closed (a ' inside '...' "
                                "cannot be escaped: write '\\'' for it)",
                           (size_t)(at - text) + 1);
                return -1;
            }
            rc = buf_append(w, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else if (*p == '"') {
            for (p++; *p && *p != '"' && rc == 0; p++) {
                if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1])) {
                    p++;
                    if (*p == '\n')
                        continue; /* a line joined: the pair is dropped */
                }
                rc = buf_append(w, p, 1);
            }
            if (!*p) {
                buf_printf(err, "column %zu: the \" there is never closed",
                           (size_t)(at - text) + 1);
                return -1;
            }
            p++;
        } else if (*p == '\\') {
            if (!p[1]) {
                buf_printf(err, "column %zu: the \\ at the end escapes nothing (write \\\\ "
                                "for a backslash)",
                           (size_t)(at - text) + 1);
                return -1;
            }
            if (p[1] != '\n')
                rc = buf_append(w, p + 1, 1);
            p += 2;
        } else {
            size_t n = strcspn(p, " \t\n'\"\\");
            rc = buf_append(w, p, n);
            p += n;
        }
    }
    *pp = p;
    if (rc)
        buf_puts(err, "out of memory");
    return rc ? -1 : 0;
}

/* A word that begins with { or [ unquoted is a JSON value (vLLM's
 * --speculative-config, --override-generation-config, ...): it runs to its
 * matching bracket, blanks and "..." strings (with their \ escapes) kept as
 * written, so EXTRA=--override-generation-config {"temperature": 0.6} is two
 * words without quoting the JSON. Whatever follows the bracket up to a blank
 * belongs to the same word, by the shell's rules. -1 with err when the
 * bracket is never matched. */
static int json_word(const char **pp, const char *text, struct buf *w, struct buf *err)
{
    const char *p = *pp;
    int depth = 0;
    bool in_str = false;
    for (; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = false;
        } else if (*p == '"') {
            in_str = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            p++;
            break;
        }
    }
    if (depth > 0) {
        buf_printf(err, "column %zu: the %c there is never closed (a value that begins with "
                        "%c is JSON and runs to its matching %c)",
                   (size_t)(*pp - text) + 1, **pp, **pp, **pp == '{' ? '}' : ']');
        return -1;
    }
    if (buf_append(w, *pp, (size_t)(p - *pp)) < 0) {
        buf_puts(err, "out of memory");
        return -1;
    }
    *pp = p;
    return 0;
}

int strv_add_shell_words(struct strv *s, const char *text, struct buf *err_or_null)
{
    int n0 = s->n, rc = 0;
    struct buf w = BUF_INIT, scratch = BUF_INIT;
    struct buf *err = err_or_null ? err_or_null : &scratch;
    for (const char *p = text; rc == 0;) {
        while (is_blank(*p))
            p++;
        /* a backslash-newline between words is a joined line, not a word */
        if (p[0] == '\\' && p[1] == '\n') {
            p += 2;
            continue;
        }
        if (!*p)
            break;
        buf_reset(&w);
        if (*p == '{' || *p == '[')
            rc = json_word(&p, text, &w, err);
        if (rc == 0)
            rc = shell_word(&p, text, &w, err);
        if (rc == 0 && strv_add(s, buf_str(&w)) < 0) {
            buf_puts(err, "out of memory");
            rc = -1;
        }
    }
    buf_free(&w);
    buf_free(&scratch);
    if (rc)
        strv_truncate(s, n0);
    return rc;
}
