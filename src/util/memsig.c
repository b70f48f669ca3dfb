#include "memsig.h"

#include <string.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A decimal like "12.34" at t[*p]; advances *p. No strtod: the text is not
 * terminated and the locale must not matter. */
static bool decimal(const char *t, size_t len, size_t *p, double *out)
{
    double v = 0, scale = 1;
    bool any = false, frac = false;
    while (*p < len && (is_digit(t[*p]) || (t[*p] == '.' && !frac))) {
        if (t[*p] == '.') {
            frac = true;
        } else {
            any = true;
            if (frac)
                v += (t[*p] - '0') * (scale /= 10);
            else if (v < 1e12)
                v = v * 10 + (t[*p] - '0');
        }
        (*p)++;
    }
    *out = v;
    return any;
}

/* The avg10 value of the line that starts with word, if any. */
static bool psi_line(const char *t, size_t len, const char *word, double *out)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl + 7 <= len; i++) {
        if ((i != 0 && t[i - 1] != '\n') || memcmp(t + i, word, wl) != 0 ||
            memcmp(t + i + wl, " avg10=", 7) != 0)
            continue;
        size_t p = i + wl + 7;
        return decimal(t, len, &p, out) && (p == len || t[p] == ' ' || t[p] == '\n') &&
               *out <= 100;
    }
    return false;
}

int memsig_parse_psi(const char *t, size_t len, struct memsig_psi *out)
{
    memset(out, 0, sizeof *out);
    out->some_ok = psi_line(t, len, "some", &out->some_avg10);
    out->full_ok = psi_line(t, len, "full", &out->full_avg10);
    return out->full_ok ? 0 : -1;
}

long memsig_parse_buddy(const char *t, size_t len, int min_order)
{
    long sum = 0;
    bool any = false;
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && t[end] != '\n')
            end++;
        /* "Node N, zone NAME" then one count per order */
        if (end - i > 5 && memcmp(t + i, "Node ", 5) == 0) {
            size_t p = i + 5;
            while (p < end && t[p] != ',')
                p++;
            if (p + 6 < end && memcmp(t + p, ", zone", 6) == 0) {
                p += 6;
                while (p < end && t[p] == ' ')
                    p++;
                while (p < end && t[p] != ' ')
                    p++; /* the zone's name */
                int order = 0;
                bool line_ok = true;
                long line_sum = 0;
                for (;;) {
                    while (p < end && t[p] == ' ')
                        p++;
                    if (p >= end)
                        break;
                    long v = 0;
                    if (!is_digit(t[p])) {
                        line_ok = false;
                        break;
                    }
                    while (p < end && is_digit(t[p]) && v < 1L << 50)
                        v = v * 10 + (t[p++] - '0');
                    if (p < end && t[p] != ' ') {
                        line_ok = false;
                        break;
                    }
                    if (order++ >= min_order && line_sum < 1L << 52)
                        line_sum += v; /* saturates: a remote node's text can be any length */
                }
                if (line_ok && order > 0) {
                    any = true;
                    if (sum < 1L << 52)
                        sum += line_sum;
                }
            }
        }
        i = end + 1;
    }
    return any ? sum : -1;
}

static bool contains(const char *t, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++)
        if (memcmp(t + i, word, wl) == 0)
            return true;
    return false;
}

int memsig_parse_kmsg(const char *rec, size_t len, unsigned long long *seq, size_t *msg_off,
                      size_t *msg_len)
{
    size_t p = 0;
    while (p < len && is_digit(rec[p]))
        p++; /* the priority and facility */
    if (p == 0 || p >= len || rec[p] != ',')
        return -1;
    p++;
    unsigned long long s = 0;
    size_t digits = 0;
    while (p < len && is_digit(rec[p]) && s < 1ULL << 60) {
        s = s * 10 + (unsigned)(rec[p++] - '0');
        digits++;
    }
    if (!digits || p >= len || rec[p] != ',')
        return -1;
    while (p < len && rec[p] != ';' && rec[p] != '\n')
        p++; /* the time and flags */
    if (p >= len || rec[p] != ';')
        return -1;
    p++;
    size_t e = p;
    while (e < len && rec[e] != '\n')
        e++;
    *seq = s;
    *msg_off = p;
    *msg_len = e - p;
    /* "NVRM: Xid (PCI:...): 79, ..." and "NVRM: ... NV_ERR_NO_MEMORY" alike:
     * the driver prefixes every line it logs */
    return contains(rec + p, e - p, "NVRM") ? 1 : 0;
}

int memsig_buddy_order(long page_bytes)
{
    if (page_bytes <= 0 || page_bytes > MEMSIG_LARGE_BLOCK || (page_bytes & (page_bytes - 1)))
        return MEMSIG_BUDDY_ORDER;
    int order = 0;
    for (long b = page_bytes; b < MEMSIG_LARGE_BLOCK; b <<= 1)
        order++;
    return order;
}
