#include "sse.h"

#include <string.h>

void sse_init(struct sse_parser *p, sse_event_fn fn, void *ctx, size_t max_event)
{
    memset(p, 0, sizeof *p);
    p->on_event = fn;
    p->ctx = ctx;
    p->max_event = max_event;
}

static int dispatch(struct sse_parser *p)
{
    int rc = 0;
    if (p->has_data && !p->overflow)
        rc = p->on_event(p->ctx, buf_str(&p->data), p->data.len);
    buf_reset(&p->data);
    p->has_data = false;
    p->overflow = false;
    return rc;
}

static int line_done(struct sse_parser *p)
{
    const char *l = buf_str(&p->line);
    size_t n = p->line.len;
    int rc = 0;
    if (n == 0) {
        rc = dispatch(p);
    } else if (l[0] != ':') {
        const char *colon = memchr(l, ':', n);
        size_t fl = colon ? (size_t)(colon - l) : n;
        if (fl == 4 && memcmp(l, "data", 4) == 0) {
            const char *v = colon ? colon + 1 : l + n;
            if (v < l + n && *v == ' ')
                v++;
            size_t vl = (size_t)(l + n - v);
            if (p->has_data && !p->overflow)
                buf_append(&p->data, "\n", 1);
            if (p->data.len + vl > p->max_event)
                p->overflow = true;
            else if (!p->overflow)
                buf_append(&p->data, v, vl);
            p->has_data = true;
        }
    }
    buf_reset(&p->line);
    return rc;
}

int sse_feed(struct sse_parser *p, const char *chunk, size_t len)
{
    size_t i = 0;
    if (p->last_cr && len && chunk[0] == '\n')
        i = 1; /* the LF of a CRLF split across chunks */
    p->last_cr = false;
    while (i < len) {
        size_t j = i;
        while (j < len && chunk[j] != '\n' && chunk[j] != '\r')
            j++;
        /* a line longer than an event can be is garbage: keep the cap */
        size_t take = j - i;
        if (p->line.len + take > p->max_event + 16) {
            take = p->line.len < p->max_event + 16 ? p->max_event + 16 - p->line.len : 0;
            p->overflow = true;
        }
        buf_append(&p->line, chunk + i, take);
        if (j == len)
            break;
        if (chunk[j] == '\r') {
            if (j + 1 < len) {
                if (chunk[j + 1] == '\n')
                    j++;
            } else {
                p->last_cr = true;
            }
        }
        int rc = line_done(p);
        if (rc)
            return rc;
        i = j + 1;
    }
    return 0;
}

int sse_finish(struct sse_parser *p)
{
    int rc = 0;
    if (p->line.len)
        rc = line_done(p);
    if (!rc)
        rc = dispatch(p);
    return rc;
}

bool sse_overflowed(const struct sse_parser *p)
{
    return p->overflow;
}

void sse_free(struct sse_parser *p)
{
    buf_free(&p->line);
    buf_free(&p->data);
}
