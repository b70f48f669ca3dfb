/* fanout: one job per node, each on a thread of its own (the nodes'
 * sessions are independent: a step that takes a round trip per node takes
 * one, not n). What a job prints goes to a stream of its own, written out
 * in node order once every job is done: the output reads as if the nodes
 * had gone one after the other. */
#ifndef DSV41_FANOUT_H
#define DSV41_FANOUT_H

#include <stdio.h>

/* A node's job: i is its index, out its own stream; nonzero is a failure. */
typedef int (*fanout_fn)(int i, FILE *out, void *ctx);

/* Runs fn for i = 0..n-1 at once and waits for all; their output to out
 * in order of i. Where a thread or a stream cannot be had, that job runs
 * on the caller's thread (to out directly). Returns how many failed. */
int fanout_run(int n, fanout_fn fn, void *ctx, FILE *out);

#endif
