/* ranks: the rank containers (dsv41-r<i>) on the nodes: their state, their
 * logs, and stopping them. A container of that name that launch did not make
 * (no dsv41-top label) is left alone unless forced. */
#ifndef DSV41_RANKS_H
#define DSV41_RANKS_H

#include <stdbool.h>
#include <stdio.h>

#include "cluster.h"
#include "probe.h"
#include "strv.h"

/* 1 with its state, 0 when no such container, -1 when the node or the
 * runtime did not answer (err says why). */
int ranks_inspect(struct node *n, const char *rt, int rank, struct container_info *ct,
                  struct buf *err);
/* The last `tail` lines of the rank's log, control bytes replaced. */
int ranks_tail(struct node *n, const char *rt, int rank, int tail, struct strv *lines,
               struct buf *err);
int ranks_remove(struct node *n, const char *rt, int rank, struct buf *err);
int ranks_kill(struct node *n, const char *rt, int rank, struct buf *err);
/* Removes every rank container on every node; reports to out. Returns the
 * number of nodes that could not be reached or refused (0: all stopped). */
int ranks_stop_all(const struct config *c, struct cluster *cl, bool force, FILE *out);
/* The graceful stop: SIGTERM to rank 0 first (the API: no new requests;
 * vLLM finishes the ones in flight), up to timeout_s before it is killed,
 * then the workers (nothing to drain: at most RANKS_WORKER_STOP_S each) -
 * a worker that left first would wedge rank 0 in NCCL with the requests in
 * flight. Every container is removed afterwards. An interrupt (Ctrl-C, the
 * console's cancel) switches to ranks_stop_all's immediate removal for
 * what is left, so no rank is left half-stopped. The command must have
 * called interrupt_catch(). Returns as ranks_stop_all. */
int ranks_stop_gracefully(const struct config *c, struct cluster *cl, bool force, int timeout_s,
                          FILE *out);

#define RANKS_WORKER_STOP_S 10

#endif
