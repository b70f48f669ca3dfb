/* peer_cmd: what copy-to-peer's two paths share (peer_cmd.c: the command and
 * rsync; copy_streams.c: the streams). */
#ifndef DSV41_PEER_CMD_H
#define DSV41_PEER_CMD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "cluster.h"
#include "config.h"
#include "progress.h"
#include "xfer_wire.h"

struct copy_out {
    double every_s;
    const char *node;
    struct progress_out out;
};

/* Set by SIGINT/SIGTERM: the copy stops, keeping what landed. */
/* The worker's directory (its "~/" the worker's home) into dest, made there, and
 * for rsync, rsync there; 0, or 2 (said). */
int copy_prepare(struct cluster_node *cn, bool rsync, char *dest, size_t destsz);
/* EXL3 bank files (every file under exl3/) on the head and on the worker. */
int copy_compare_exl3(struct cluster_node *cn, const char *src, FILE *out);
int copy_streams(const struct config *c, struct cluster_node *cn, const char *src,
                 const struct xfer_plan *plan, int streams, bool dry_run, bool json,
                 struct copy_out *o);

#endif
