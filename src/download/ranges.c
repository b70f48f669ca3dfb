/* ranges: see ranges.h. A download of 462 GB in 64 MiB ranges keeps a few
 * runs per file at a time, so arrays and memmove are enough. */
#include "ranges.h"

#include <stdlib.h>
#include <string.h>

static int reserve(struct ranges *s, int more)
{
    if (s->n + more <= s->cap)
        return 0;
    int nc = s->cap ? s->cap * 2 : 8;
    while (nc < s->n + more)
        nc *= 2;
    struct range *p = realloc(s->r, sizeof *p * (size_t)nc);
    if (!p)
        return -1;
    s->r = p;
    s->cap = nc;
    return 0;
}

int ranges_add(struct ranges *s, int64_t a, int64_t b)
{
    if (b <= a)
        return 0;
    /* the first run that ends at or after a, and the first that starts after b */
    int i = 0;
    while (i < s->n && s->r[i].b < a)
        i++;
    int j = i;
    while (j < s->n && s->r[j].a <= b)
        j++;
    if (i == j) { /* touches nothing: insert */
        if (reserve(s, 1) < 0)
            return -1;
        memmove(&s->r[i + 1], &s->r[i], sizeof *s->r * (size_t)(s->n - i));
        s->r[i] = (struct range){a, b};
        s->n++;
        return 0;
    }
    /* merge runs i..j-1 with [a, b) */
    if (s->r[i].a < a)
        a = s->r[i].a;
    if (s->r[j - 1].b > b)
        b = s->r[j - 1].b;
    s->r[i] = (struct range){a, b};
    memmove(&s->r[i + 1], &s->r[j], sizeof *s->r * (size_t)(s->n - j));
    s->n -= j - i - 1;
    return 0;
}

int ranges_sub(struct ranges *s, int64_t a, int64_t b)
{
    if (b <= a)
        return 0;
    for (int i = 0; i < s->n; i++) {
        struct range r = s->r[i];
        if (r.b <= a || r.a >= b)
            continue;
        if (r.a < a && r.b > b) { /* split in two */
            if (reserve(s, 1) < 0)
                return -1;
            memmove(&s->r[i + 2], &s->r[i + 1], sizeof *s->r * (size_t)(s->n - i - 1));
            s->r[i] = (struct range){r.a, a};
            s->r[i + 1] = (struct range){b, r.b};
            s->n++;
            return 0;
        }
        if (r.a < a) {
            s->r[i].b = a;
        } else if (r.b > b) {
            s->r[i].a = b;
        } else { /* wholly inside: gone */
            memmove(&s->r[i], &s->r[i + 1], sizeof *s->r * (size_t)(s->n - i - 1));
            s->n--;
            i--;
        }
    }
    return 0;
}

int64_t ranges_reach(const struct ranges *s, int64_t from)
{
    for (int i = 0; i < s->n; i++)
        if (s->r[i].a <= from && s->r[i].b > from)
            return s->r[i].b;
    return from;
}

int64_t ranges_count(const struct ranges *s, int64_t a, int64_t b)
{
    int64_t n = 0;
    for (int i = 0; i < s->n; i++) {
        int64_t x = s->r[i].a > a ? s->r[i].a : a, y = s->r[i].b < b ? s->r[i].b : b;
        if (y > x)
            n += y - x;
    }
    return n;
}

int64_t ranges_gap(const struct ranges *s, int64_t from, int64_t end, int64_t *len)
{
    int64_t at = from;
    for (int i = 0; i < s->n && at < end; i++) {
        if (s->r[i].b <= at)
            continue;
        if (s->r[i].a > at) { /* a gap before this run */
            int64_t stop = s->r[i].a < end ? s->r[i].a : end;
            *len = stop - at;
            return at;
        }
        at = s->r[i].b;
    }
    *len = at < end ? end - at : 0;
    return at;
}

int ranges_copy(struct ranges *dst, const struct ranges *src)
{
    dst->n = 0;
    if (reserve(dst, src->n) < 0)
        return -1;
    if (src->n)
        memcpy(dst->r, src->r, sizeof *src->r * (size_t)src->n);
    dst->n = src->n;
    return 0;
}

int ranges_intersect(struct ranges *dst, const struct ranges *a, const struct ranges *b)
{
    dst->n = 0;
    /* both sorted and merged: one walk, each overlap in order */
    for (int i = 0, k = 0; i < a->n && k < b->n;) {
        int64_t lo = a->r[i].a > b->r[k].a ? a->r[i].a : b->r[k].a;
        int64_t hi = a->r[i].b < b->r[k].b ? a->r[i].b : b->r[k].b;
        if (lo < hi) {
            if (reserve(dst, 1) < 0)
                return -1;
            dst->r[dst->n++] = (struct range){lo, hi};
        }
        if (a->r[i].b < b->r[k].b)
            i++;
        else
            k++;
    }
    return 0;
}

void ranges_clear(struct ranges *s)
{
    s->n = 0;
}

void ranges_free(struct ranges *s)
{
    free(s->r);
    memset(s, 0, sizeof *s);
}
