#include "logbuf.h"
#include "fixstr.h"

#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

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

void logbuf_push(struct logbuf *lb, const char *raw, size_t len)
{
    char line[LOGBUF_LINE_MAX + 48];
    size_t used;
    size_t n = text_clean_used(line, LOGBUF_LINE_MAX, raw, len, &used);
    if (used < len)
        fixstr_appendf(line, sizeof line, &n, " [... %zu bytes cut]", len - used);
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
