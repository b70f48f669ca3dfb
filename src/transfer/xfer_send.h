/* xfer_send: the head's end of the copy's streams. Several TCP connections
 * to the helper (xfer_recv on the worker), each presenting the token, then
 * frames (xfer_wire.h): a file whose sha256 the manifest knows goes in
 * ranges shared out over the connections, straight from the page cache
 * (sendfile); any other file is read in order on one connection, hashed as
 * it is read, and its sum sent after its last byte. Every frame is
 * acknowledged by the worker once it is written, so a cut connection's
 * unacknowledged frames are sent again on another. What the worker reports
 * (ok, bad, fail) comes in through xfer_send_report; a file asked for again
 * (bad) is queued again whole under its new generation. */
#ifndef DSV41_XFER_SEND_H
#define DSV41_XFER_SEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "xfer_wire.h"


struct xfer_send;

struct xfer_send_stats {
    int64_t sent; /* bytes sent, frames acknowledged or not */
    int64_t stream_sent[XFER_MAX_STREAMS];
    int streams, streams_up;
    int ok, failed, n; /* files */
    bool finished;     /* every file settled, the streams closed */
    char err[512];     /* when the streams gave up */
};

/* Whether a file of the plan may be read yet (download --to-workers: once it
 * is verified on the head). */
enum xfer_ready { XFER_WAIT, XFER_READY, XFER_NEVER /* it will not be: given up */ };

/* A run for plan (files under src), before any stream: the ranges wanted
 * are told with xfer_send_need. ready (by plan index; NULL: every file is)
 * holds a file back until it reads XFER_READY. NULL out of memory. */
struct xfer_send *xfer_send_new(const char *src, const struct xfer_plan *plan,
                                const _Atomic int *ready);
void xfer_send_need(struct xfer_send *s, int id, int64_t a, int64_t b);
/* The worker's word on a file: XR_OK, XR_BAD (a = the new generation),
 * XR_FAIL. Any thread. */
void xfer_send_report(struct xfer_send *s, const struct xfer_report *r);
/* streams connections to addr:port; -1 and why when none could start. */
int xfer_send_start(struct xfer_send *s, const char *addr, int port, const char *token, int streams,
                    struct buf *err);
void xfer_send_stats(struct xfer_send *s, struct xfer_send_stats *st);
/* Ends the streams (whatever is in flight) and frees the run. */
void xfer_send_free(struct xfer_send *s);

#endif
