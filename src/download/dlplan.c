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
    if (p->n == p->cap) { /* doubling: a realloc per output copied them all each time */
        int cap = p->cap ? p->cap * 2 : 64;
        struct dl_output *no = realloc(p->o, sizeof *no * (size_t)cap);
        if (!no)
            return NULL;
        p->o = no;
        p->cap = cap;
    }
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

/* A part of a split shard: its file, its number, the length of its shard's
 * name (the path up to ".partNN"). */
struct part {
    const struct hub_file *f;
    int num;
    size_t bl;
};

/* By the shard's name, then the part's number: each shard's parts side by
 * side, in order, after one sort (a listing may hold 100,000 files: nothing
 * here may look at every file for every shard). */
static int by_shard(const void *a, const void *b)
{
    const struct part *x = a, *y = b;
    size_t n = x->bl < y->bl ? x->bl : y->bl;
    int c = memcmp(x->f->path, y->f->path, n);
    if (c)
        return c;
    if (x->bl != y->bl)
        return x->bl < y->bl ? -1 : 1;
    return (x->num > y->num) - (x->num < y->num);
}

static int by_out_path(const void *a, const void *b)
{
    return strcmp(((const struct dl_output *)a)->path, ((const struct dl_output *)b)->path);
}

/* One shard from its parts (sorted, all of one name): -1 on a gap, a repeat
 * or a first part that is neither 0 nor 1. */
static int add_split(struct dl_plan *p, const struct part *parts, int n, struct buf *err)
{
    const char *base = parts[0].f->path;
    size_t bl = parts[0].bl;
    for (int i = 0; i < n; i++)
        if (parts[i].num != parts[0].num + i || (parts[0].num != 0 && parts[0].num != 1)) {
            buf_printf(err, "%.*s: the listing has parts %s and no part numbered %d before it",
                       (int)bl, base, parts[i].f->path, parts[0].num + i);
            return -1;
        }
    struct dl_output *o = add_output(p, base, bl);
    if (!o)
        return -1;
    o->split = true;
    for (int i = 0; i < n; i++) {
        if (add_piece(o, parts[i].f) < 0)
            return -1;
        o->p[o->np - 1].off = o->size;
        o->size += parts[i].f->size;
    }
    return 0;
}

int dl_plan_build(const struct hub_tree *t, const char *manifest, char *const *include,
                  int ninclude, struct dl_plan *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    struct part *parts = malloc(sizeof *parts * (size_t)(t->n ? t->n : 1));
    int np = 0;
    if (!parts)
        goto oom;
    for (int i = 0; i < t->n; i++) {
        const struct hub_file *f = &t->f[i];
        int num;
        size_t bl = part_of(f->path, &num);
        if (bl) {
            parts[np++] = (struct part){f, num, bl};
            continue;
        }
        if (!wanted(f->path, include, ninclude))
            continue;
        struct dl_output *o = add_output(p, f->path, strlen(f->path));
        if (!o || add_piece(o, f) < 0)
            goto oom;
        o->size = f->size;
    }
    qsort(parts, (size_t)np, sizeof *parts, by_shard);
    for (int g = 0, e; g < np; g = e) {
        for (e = g + 1; e < np && by_shard(&(struct part){parts[g].f, 0, parts[g].bl},
                                             &(struct part){parts[e].f, 0, parts[e].bl}) == 0;
             e++)
            ;
        char base[1024];
        snprintf(base, sizeof base, "%.*s", (int)parts[g].bl, parts[g].f->path);
        /* the shard's name is made here, not listed: checked as a listed one
         * is, before any byte ("...part01" names "..", "d/.part01" "d/") */
        const char *why = hub_path_problem(base);
        if (why) {
            buf_printf(err, "listing entry '%s': the shard it is part of, '%s': %s",
                       parts[g].f->path, base, why);
            goto fail;
        }
        if (hub_tree_find(t, base)) { /* the whole shard is listed too: take it */
            snprintf(p->note, sizeof p->note, "%.400s is listed whole and in parts: the whole one "
                                              "is fetched",
                     base);
            continue;
        }
        if (!wanted(base, include, ninclude))
            continue;
        if (add_split(p, parts + g, e - g, err) < 0) {
            if (!err->len)
                buf_puts(err, "out of memory");
            goto fail;
        }
    }
    free(parts);
    parts = NULL;
    /* by name, for dl_plan_find's binary search */
    qsort(p->o, (size_t)p->n, sizeof *p->o, by_out_path);
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
fail:
    free(parts);
    dl_plan_free(p);
    return -1;
}

const struct dl_output *dl_plan_find(const struct dl_plan *p, const char *path)
{
    struct dl_output key = {.path = (char *)path};
    return p->n ? bsearch(&key, p->o, (size_t)p->n, sizeof *p->o, by_out_path) : NULL;
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

const char *dl_output_sha256(const struct dl_output *o)
{
    if (o->split || o->whole_sha256[0])
        return o->whole_sha256;
    return o->np == 1 && o->p[0].f->lfs ? o->p[0].f->sha256 : "";
}

const char *dl_output_git_sha1(const struct dl_output *o)
{
    return !o->split && o->np == 1 && !o->p[0].f->lfs ? o->p[0].f->sha1 : "";
}

bool dl_split_pays(int64_t left, double open_s, double conn_rate)
{
    if (left < (1LL << 20))
        return false;
    if (!(open_s > 0) || !(conn_rate > 0))
        return left >= (4LL << 20);
    return (double)left >= 4 * open_s * conn_rate;
}
