#include "logbuf.h"

#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int logbuf_init(struct logbuf *lb, size_t max_lines, size_t max_bytes)
{
    memset(lb, 0, sizeof *lb);
    lb->ring = calloc(max_lines ? max_lines : 1, sizeof *lb->ring);
    if (!lb->ring)
        return -1;
    lb->cap = max_lines ? max_lines : 1;
    lb->max_bytes = max_bytes;
    return 0;
}

static void drop_front(struct logbuf *lb)
{
    struct logline *l = &lb->ring[lb->first % lb->cap];
    lb->bytes -= l->len;
    free(l->text);
    memset(l, 0, sizeof *l);
    lb->first++;
    lb->dropped++;
}

void logbuf_clear(struct logbuf *lb)
{
    while (lb->first < lb->end)
        drop_front(lb);
    lb->dropped = 0;
}

void logbuf_free(struct logbuf *lb)
{
    if (lb->ring)
        logbuf_clear(lb);
    free(lb->ring);
    lb->ring = NULL;
}

/* Length of a valid UTF-8 sequence at s (1..4) with its code point, or 0
 * when the bytes are not one (overlong, surrogate, beyond U+10FFFF, cut). */
static int utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0], need, min;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1, min = 0x80, c &= 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        need = 2, min = 0x800, c &= 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 3, min = 0x10000, c &= 0x07;
    else
        return 0;
    if (n < need + 1)
        return 0;
    for (unsigned k = 1; k <= need; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return (int)need + 1;
}

/* Code points that are invisible yet change how the rest of a line shows:
 * C1 controls, bidi embeddings/overrides/isolates, marks, BOM. */
static bool invisible(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

/* Index just past the escape sequence that starts at s[i] == ESC. */
static size_t skip_escape(const unsigned char *s, size_t len, size_t i)
{
    i++;
    if (i >= len)
        return i;
    unsigned char c = s[i++];
    if (c == '[') { /* CSI: parameters, intermediates, one final byte */
        while (i < len && s[i] >= 0x20 && s[i] <= 0x3f)
            i++;
        return i < len && s[i] >= 0x40 && s[i] <= 0x7e ? i + 1 : i;
    }
    if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') { /* strings to BEL or ST */
        for (; i < len; i++) {
            if (s[i] == 0x07)
                return i + 1;
            if (s[i] == 0x1b && i + 1 < len && s[i + 1] == '\\')
                return i + 2;
        }
        return i;
    }
    while (c >= 0x20 && c <= 0x2f && i < len) /* intermediates, then the final */
        c = s[i++];
    return i;
}

static size_t clean_into(char *dst, size_t dstsz, const char *src, size_t len, size_t *used)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0, i = 0;
    if (!dstsz)
        return 0;
    while (i < len) {
        unsigned char b = s[i];
        char tmp[8];
        size_t tn = 0, next = i + 1;
        if (b == 0x1b) {
            next = skip_escape(s, len, i);
        } else if (b == '\r') {
            if (i + 1 < len) /* a terminal would overwrite: keep what follows */
                o = 0;
        } else if (b == '\t') {
            size_t w = 8 - o % 8;
            memset(tmp, ' ', w);
            tn = w;
        } else if (b < 0x20 || b == 0x7f) {
            /* other controls vanish */
        } else if (b < 0x80) {
            tmp[tn++] = (char)b;
        } else {
            unsigned cp;
            int n = utf8_decode(s + i, len - i, &cp);
            if (n == 0) {
                tmp[tn++] = '?';
            } else {
                next = i + (size_t)n;
                if (!invisible(cp)) {
                    memcpy(tmp, s + i, (size_t)n);
                    tn = (size_t)n;
                }
            }
        }
        if (o + tn >= dstsz)
            break;
        memcpy(dst + o, tmp, tn);
        o += tn;
        i = next;
    }
    dst[o] = '\0';
    if (used)
        *used = i < len ? i : len;
    return o;
}

size_t logbuf_clean(char *dst, size_t dstsz, const char *src, size_t len)
{
    return clean_into(dst, dstsz, src, len, NULL);
}

void logbuf_push(struct logbuf *lb, const char *raw, size_t len)
{
    char line[LOGBUF_LINE_MAX + 48];
    size_t used;
    size_t n = clean_into(line, LOGBUF_LINE_MAX, raw, len, &used);
    if (used < len)
        n += (size_t)snprintf(line + n, sizeof line - n, " [... %zu bytes cut]", len - used);
    while (lb->end > lb->first && (lb->end - lb->first >= lb->cap || lb->bytes + n > lb->max_bytes))
        drop_front(lb);
    char *text = malloc(n + 1);
    if (!text) {
        lb->dropped++;
        return;
    }
    memcpy(text, line, n + 1);
    struct logline *l = &lb->ring[lb->end % lb->cap];
    l->text = text;
    l->len = (uint32_t)n;
    l->error = logbuf_is_error(text);
    lb->bytes += n;
    lb->end++;
}

const struct logline *logbuf_get(const struct logbuf *lb, uint64_t seq)
{
    if (seq < lb->first || seq >= lb->end)
        return NULL;
    return &lb->ring[seq % lb->cap];
}

bool logbuf_match(const char *text, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return true;
    for (; *text; text++)
        if (strncasecmp(text, needle, n) == 0)
            return true;
    return false;
}

bool logbuf_is_error(const char *t)
{
    static const char *const MARKS[] = {
        "ERROR",    "CRITICAL", "Traceback (most recent call last)", "Error:", "Exception:",
        "CUDA error", "NCCL WARN", "out of memory", "Killed", "RuntimeError", "core dumped"};
    for (size_t i = 0; i < sizeof MARKS / sizeof *MARKS; i++)
        if (strstr(t, MARKS[i]))
            return true;
    return false;
}

int64_t logbuf_find(const struct logbuf *lb, uint64_t seq, int dir, const char *needle)
{
    if (lb->end == lb->first)
        return -1;
    int64_t s = (int64_t)seq;
    if (s < (int64_t)lb->first - 1)
        s = (int64_t)lb->first - 1;
    if (s > (int64_t)lb->end)
        s = (int64_t)lb->end;
    for (s += dir; s >= (int64_t)lb->first && s < (int64_t)lb->end; s += dir) {
        const struct logline *l = logbuf_get(lb, (uint64_t)s);
        if (needle ? logbuf_match(l->text, needle) : l->error)
            return s;
    }
    return -1;
}
