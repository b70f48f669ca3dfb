/* ranges: a set of byte ranges [a, b) of one file, kept sorted and merged -
 * what has landed of a file whose pieces arrive out of order. */
#ifndef DSV41_RANGES_H
#define DSV41_RANGES_H

#include <stdbool.h>
#include <stdint.h>

struct range {
    int64_t a, b; /* [a, b) */
};

struct ranges {
    struct range *r;
    int n, cap;
};

int ranges_add(struct ranges *s, int64_t a, int64_t b);
/* Removes [a, b) (a piece whose hash failed is fetched again). */
int ranges_sub(struct ranges *s, int64_t a, int64_t b);
/* The end of the run that covers from, or from when from is not covered. */
int64_t ranges_reach(const struct ranges *s, int64_t from);
/* Bytes of [a, b) that are in the set. */
int64_t ranges_count(const struct ranges *s, int64_t a, int64_t b);
/* The first gap at or after from within [from, end): its start and length
 * (0 when [from, end) is all covered). */
int64_t ranges_gap(const struct ranges *s, int64_t from, int64_t end, int64_t *len);
int ranges_copy(struct ranges *dst, const struct ranges *src);
/* dst = a and b (dst may be neither). */
int ranges_intersect(struct ranges *dst, const struct ranges *a, const struct ranges *b);
void ranges_clear(struct ranges *s);
void ranges_free(struct ranges *s);

#endif
