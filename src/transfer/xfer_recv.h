/* xfer_recv: the worker's end of the copy, run by dsv41-xfer. It listens
 * for the head's streams, takes only connections that present the token,
 * writes each DATA frame with pwrite into NAME.incomplete (preallocated),
 * hashes every file's contiguous prefix as it grows (a thread reading back
 * from the page cache) and renames a file into place when it matches the
 * plan's sha256 or the one the head sent; a mismatch drops the file's bytes
 * and asks for it again. The report goes to out (xfer_wire.h); the state
 * (xfer_state.h) is saved every second and at the end. It ends when every
 * file is settled, when in_fd (the ssh channel's stdin) reaches its end, or
 * when cancel is set. */
#ifndef DSV41_XFER_RECV_H
#define DSV41_XFER_RECV_H

#include <stdatomic.h>
#include <stdio.h>

#include "xfer_wire.h"

struct xfer_recv_opts {
    const char *dir;
    const struct xfer_plan *plan;
    const char *token;    /* XFER_TOKEN_HEX hex digits */
    const char *listen;   /* an IPv4 or IPv6 address */
    const char *fallback; /* when listen is not this node's: this one (or NULL) */
    FILE *out;            /* the report */
    int in_fd;            /* its end ends the run; -1: none */
    atomic_int *cancel;
    int jobs;     /* threads hashing files found in place without a state */
    bool dry_run; /* say what is needed, then end */
};

/* 0 every file in place; 1 some failed or the run was cut; 2 could not start
 * (said on out). */
int xfer_recv_run(const struct xfer_recv_opts *o);

#endif
