/* budget: does a rank fit in its node's memory before it starts? A GB10
 * shares one pool between CPU and GPU, and vLLM's own accounting leaves out
 * ~6 GiB of host-side use: a two-Spark GLM deployment hung at ~109.5 GiB
 * used although vLLM thought it fitted (REFERENCE.md §8). So:
 *
 *   need = weights on the rank + KV_BYTES + CUDA graphs + 6 GiB host side
 *   room = MemTotal - the guard floor (MEMGUARD_GIB)
 *
 * The weights and the graphs are what vLLM logged on that node's last boot
 * ("Model loading took X GiB memory", "Graph capturing finished in N secs,
 * took X GiB"), kept in STATE_DIR/budget.json for the same image, plan and
 * TP; WEIGHTS_GIB overrides. Before any boot the weights are n/a: the rest
 * is checked and no verdict is made up. Also: vLLM's start compares
 * GPU_UTIL x MemTotal with MemFree, so page cache (after an rsync) fails it
 * although MemAvailable is plenty. */
#ifndef DSV41_BUDGET_H
#define DSV41_BUDGET_H

#include <stdbool.h>
#include <stdio.h>

#include "buf.h"
#include "config.h"
#include "snapshot.h"

#define BUDGET_HOST_GIB 6.0
/* Per capture size, before a boot measured them (a rough figure: 0.6 GiB
 * for the default 10 sizes; the first boot logs the real one) */
#define BUDGET_GRAPH_GIB_PER_SIZE 0.0625

struct budget {
    /* in: < 0 for n/a */
    double total_gib, free_gib, cached_gib, floor_gib;
    double weights_gib, graphs_gib, kv_gib, host_gib, gpu_util;
    char weights_from[80], graphs_from[80];
    /* out */
    bool known;         /* the weights are known: fits is a verdict */
    bool fits;
    double need_gib, room_gib;
    char advice[320];   /* what to lower, when it does not fit */
    bool memfree_low;   /* vLLM's start check would fail on MemFree */
    char memfree_note[320];
};

/* Pure: the verdict and the advice from the figures in b. */
void budget_compute(struct budget *b);
/* The figures for one node from the configuration, its snapshot and the
 * record of its last boot; then budget_compute. */
void budget_for_node(const struct config *c, const char *node, const struct snapshot *s,
                     struct budget *b);
/* One line ("need ... of ... room") and the advice, for doctor and launch. */
void budget_describe(const struct budget *b, struct buf *line);
/* Keeps what vLLM logged on a node's boot (either < 0: unknown, left as
 * it was). */
int budget_record(const struct config *c, const char *node, double weights_gib, double graphs_gib,
                  struct buf *err);

#endif
