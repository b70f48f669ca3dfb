#include "strv.h"

#include <stdarg.h>
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
