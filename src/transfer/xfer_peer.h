/* xfer_peer: copy-to-peer's fast path, from the head's side. The plan (every
 * file of the checkpoint but the Engram .partNN pieces, .cache/ and our own
 * files; the sha256 of the manifest's files), the static dsv41-xfer and a
 * one-time token go to the worker over sftp (the token in a 0600 file, never
 * on a command line); the helper runs over the ssh session, says what it
 * needs and where it listens (the fabric address when the node has one,
 * else the address ssh reached), and the streams (xfer_send) send it. Each
 * file is verified on the worker as it lands; the copy is over when every
 * file is in place or failed. Closing the ssh channel ends the helper. */
#ifndef DSV41_XFER_PEER_H
#define DSV41_XFER_PEER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "cluster.h"
#include "config.h"
#include "xfer_send.h"
#include "xfer_wire.h"

struct xfer_peer_progress {
    int64_t total;  /* bytes of the plan */
    int64_t need;   /* of them wanted by the worker at the start */
    int64_t landed; /* written on the worker in this run */
    double elapsed_s;
    struct xfer_send_stats s;
};

struct xfer_peer_out {
    void (*text)(void *arg, const char *line);                   /* cleaned: the helper's or ours */
    void (*file)(void *arg, const char *path, int64_t size);     /* in place (or, dry: wanted) */
    void (*tick)(void *arg, const struct xfer_peer_progress *p); /* every 200 ms */
    void *arg;
};

/* Every file to copy from src; -1 and why. The manifest's sha256 where it
 * lists the file. */
int xfer_plan_build(const char *src, struct xfer_plan *p, struct buf *err);
/* 0 every file in place and verified; 1 some failed, or interrupted; -1 it
 * could not run (err). ready: as xfer_send_new's. streams 0: from both ends' cores. dry_run: what
 * the worker would be sent, nothing sent. */
int xfer_peer_run(const struct config *c, struct cluster_node *cn, const char *src,
                  const struct xfer_plan *plan, const _Atomic int *ready, int streams, bool dry_run,
                  const atomic_int *cancel, const struct xfer_peer_out *out, struct buf *err);

#endif
