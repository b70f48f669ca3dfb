/* dlplan: see dlplan.h. */
#include "dlplan.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

/* "X.partNN": the length of X and NN, or 0 when the name is no part. */
static size_t part_of(const char *path, int *num)
{
    const char *p = strstr(path, ".part");
    while (p) {
        const char *d = p + 5;
        if (isdigit((unsigned char)*d)) {
            const char *e = d;
            while (isdigit((unsigned char)*e))
                e++;
            if (!*e && e - d <= 4) {
                *num = atoi(d);
                return (size_t)(p - path);
            }
        }
        p = strstr(p + 1, ".part");
    }
    return 0;
}

static bool wanted(const char *path, char *const *include, int n)
{
    if (!n)
        return true;
    for (int i = 0; i < n; i++)
        if (fnmatch(include[i], path, FNM_PATHNAME) == 0 || fnmatch(include[i], path, 0) == 0)
            return true;
    return false;
}

static struct dl_output *add_output(struct dl_plan *p, const char *path, size_t len)
{
    struct dl_output *no = realloc(p->o, sizeof *no * (size_t)(p->n + 1));
    if (!no)
        return NULL;
    p->o = no;
    struct dl_output *o = &p->o[p->n];
    memset(o, 0, sizeof *o);
    o->path = strndup(path, len);
    if (!o->path)
        return NULL;
    p->n++;
    return o;
}

static int add_piece(struct dl_output *o, const struct hub_file *f)
{
    struct dl_piece *np = realloc(o->p, sizeof *np * (size_t)(o->np + 1));
    if (!np)
        return -1;
    o->p = np;
    o->p[o->np++] = (struct dl_piece){f, 0};
    return 0;
}

struct part {
    const struct hub_file *f;
    int num;
};

static int by_num(const void *a, const void *b)
{
    return ((const struct part *)a)->num - ((const struct part *)b)->num;
}

/* The parts of base, in order, as one output; -1 on a gap or a repeat. */
static int add_split(struct dl_plan *p, const struct hub_tree *t, const char *base, size_t bl,
                     struct buf *err)
{
    struct part *parts = malloc(sizeof *parts * (size_t)t->n);
    int n = 0;
    if (!parts)
        return -1;
    for (int i = 0; i < t->n; i++) {
        int num;
        size_t l = part_of(t->f[i].path, &num);
        if (l == bl && strncmp(t->f[i].path, base, bl) == 0)
            parts[n++] = (struct part){&t->f[i], num};
    }
    qsort(parts, (size_t)n, sizeof *parts, by_num);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (parts[i].num != parts[0].num + i || (parts[0].num != 0 && parts[0].num != 1)) {
            buf_printf(err, "%.*s: the listing has parts %s and no part numbered %d before it",
                       (int)bl, base, parts[i].f->path, parts[0].num + i);
            rc = -1;
        }
    struct dl_output *o = rc == 0 ? add_output(p, base, bl) : NULL;
    if (rc == 0 && !o)
        rc = -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (add_piece(o, parts[i].f) < 0)
            rc = -1;
        else {
            o->p[o->np - 1].off = o->size;
            o->size += parts[i].f->size;
        }
    }
    if (o)
        o->split = true;
    free(parts);
    return rc;
}

int dl_plan_build(const struct hub_tree *t, const char *manifest, char *const *include,
                  int ninclude, struct dl_plan *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < t->n; i++) {
        const struct hub_file *f = &t->f[i];
        int num;
        size_t bl = part_of(f->path, &num);
        if (!bl) {
            if (!wanted(f->path, include, ninclude))
                continue;
            struct dl_output *o = add_output(p, f->path, strlen(f->path));
            if (!o || add_piece(o, f) < 0)
                goto oom;
            o->size = f->size;
            continue;
        }
        char base[1024];
        snprintf(base, sizeof base, "%.*s", (int)bl, f->path);
        if (hub_tree_find(t, base)) { /* the whole shard is listed too: take it */
            snprintf(p->note, sizeof p->note, "%.400s is listed whole and in parts: the whole one "
                                              "is fetched",
                     base);
            continue;
        }
        if (dl_plan_find(p, base) || !wanted(base, include, ninclude))
            continue; /* its shard is planned already, or not wanted */
        if (add_split(p, t, f->path, bl, err) < 0) {
            dl_plan_free(p);
            return -1;
        }
    }
    if (manifest) {
        struct verify_manifest m;
        struct buf merr = BUF_INIT;
        if (verify_manifest_parse(manifest, "sha256-manifest.txt", &m, &merr) < 0) {
            buf_printf(err, "the repository's %s", buf_str(&merr));
            buf_free(&merr);
            dl_plan_free(p);
            return -1;
        }
        for (int i = 0; i < m.n; i++) {
            struct dl_output *o = (struct dl_output *)dl_plan_find(p, m.e[i].path);
            if (!o)
                continue;
            for (int k = 0; k < 32; k++)
                snprintf(o->whole_sha256 + 2 * k, 3, "%02x", m.e[i].want[k]);
        }
        verify_manifest_free(&m);
        buf_free(&merr);
    }
    for (int i = 0; i < p->n; i++)
        p->bytes += p->o[i].size;
    return 0;
oom:
    buf_puts(err, "out of memory");
    dl_plan_free(p);
    return -1;
}

const struct dl_output *dl_plan_find(const struct dl_plan *p, const char *path)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->o[i].path, path) == 0)
            return &p->o[i];
    return NULL;
}

void dl_plan_free(struct dl_plan *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->o[i].path);
        free(p->o[i].p);
    }
    free(p->o);
    memset(p, 0, sizeof *p);
}
