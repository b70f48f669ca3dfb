/* sampler: fresh snapshots of one node on demand. A remote node keeps one
 * long-lived channel running a small sh loop that prints a framed snapshot
 * each time it reads a line on stdin: no new connection and no login shell
 * per sample, and the loop ends with the channel, so nothing is left behind
 * on the node. The local node runs the same script directly. */
#ifndef DSV41_SAMPLER_H
#define DSV41_SAMPLER_H

#include <stdint.h>

#include "node.h"
#include "snapshot.h"

struct sampler;

struct sampler *sampler_start(struct node *n, const char *runtime, int nranks,
                              const struct rdma_override *ov);
/* Asks for a new snapshot and waits for it (at most timeout_ms). Returns 0,
 * or -1 with out->reachable false and out->error set. */
int sampler_request(struct sampler *s, int timeout_ms, struct snapshot *out);
/* lite: without the containers (see snapshot_collect_opt). */
int sampler_request_opt(struct sampler *s, int timeout_ms, bool lite, struct snapshot *out);
/* For a display that must not wait on one node: asks (unless a request is
 * still on its way) and waits at most wait_ms; then, while the session is
 * up, gives the last snapshot with late_s set; before the node's first
 * snapshot, one marked pending (no verdict yet). The node is called
 * unreachable once sshio drops a silent session (see sshio's liveness). */
int sampler_sample(struct sampler *s, int wait_ms, bool lite, struct snapshot *out);
void sampler_stop(struct sampler *s);

#endif
