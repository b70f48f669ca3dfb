/* sse: the server-sent events wire format (WHATWG): lines ending in LF, CRLF
 * or CR; "data:" lines joined by '\n' into one event, dispatched by an empty
 * line; ':' comments; other fields ignored. Chunks may be split anywhere,
 * even inside a CRLF. Pure: bytes in, events out. */
#ifndef DSV41_SSE_H
#define DSV41_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Return non-zero to stop parsing (sse_feed then returns that value). */
typedef int (*sse_event_fn)(void *ctx, const char *data, size_t len);

struct sse_parser {
    sse_event_fn on_event;
    void *ctx;
    struct buf line;
    struct buf data;
    bool has_data;
    bool last_cr; /* the previous chunk ended in CR: a following LF is its pair */
    size_t max_event;
    bool overflow;
};

/* max_event caps one event's data (a hostile server cannot grow it without
 * bound); an event past it is dropped and reported by sse_overflowed. */
void sse_init(struct sse_parser *p, sse_event_fn fn, void *ctx, size_t max_event);
int sse_feed(struct sse_parser *p, const char *chunk, size_t len);
/* End of stream: an event without its final empty line is still delivered. */
int sse_finish(struct sse_parser *p);
bool sse_overflowed(const struct sse_parser *p);
void sse_free(struct sse_parser *p);

#endif
