/* guards: the memory guard on every node of the cluster. launch pushes the
 * static dsv41-guard (found next to dsv41-top) into each node's
 * STATE_DIR/bin over sftp and starts it detached, so it outlives the ssh
 * session and the console; stop stops them. */
#ifndef DSV41_GUARDS_H
#define DSV41_GUARDS_H

#include <stdatomic.h>
#include <stdio.h>

#include "cluster.h"

/* Starts (or finds running) a guard on each node; state_dirs[i] is node i's.
 * Returns the number of nodes left without a guard. */
int guards_start(const struct config *c, struct cluster *cl, char (*state_dirs)[512], FILE *out);
/* The same for node i alone (the console hands its own guard over to a
 * daemon when it quits while ranks run). */
int guards_start_node(const struct config *c, struct cluster *cl, int i, const char *state_dir,
                      FILE *out);
/* Tells every guard that the ranks just started (they look at once). */
void guards_resolve(const struct config *c, struct cluster *cl, FILE *out);
/* Stops the guards (idempotent); returns the number of failures. */
int guards_stop(const struct config *c, struct cluster *cl, FILE *out);
/* A line per node: the guard's heartbeat and its last log line. */
int guards_status(const struct config *c, struct cluster *cl, FILE *out);
/* One node's guard in one line (its heartbeat and signals, "NOT GUARDED:
 * ..." when none runs); 0 guarded, 1 not (stopped, hung, gone), 127 none
 * installed (none ever ran, on the local node), -1 the node could not be
 * asked (or cancel, when not NULL, turned nonzero). */
int guards_describe(const struct config *c, struct cluster_node *cn, char *out, size_t sz,
                    const atomic_int *cancel);
/* This node's guard settings from the configuration (nranks: every rank
 * name; floor_kib 0 when MEMGUARD_GIB is not a floor). */
struct guard_opts;
/* The static guard's settings flags for node cn, from the configuration
 * (what launch starts it with, less --state-dir and the action). */
struct strv;
void guards_args(const struct config *c, struct cluster_node *cn, int nranks,
                 struct strv *args);
void guard_opts_from_config(const struct config *c, struct guard_opts *o);

#endif
