/* alike: are the nodes alike where it matters? Two-Spark deployments hung
 * in NCCL after 20-55 minutes until both nodes loaded the same NCCL build -
 * both said 2.28.9, the binaries differed (REFERENCE.md §10). So per node,
 * in one round trip: the kernel, the NVIDIA driver, the image id of IMG,
 * CUDA inside the image (its CUDA_VERSION), and the NCCL library the rank
 * has mapped (from /proc/PID/maps) with its sha256 (read through
 * /proc/PID/root, so nothing runs inside the container). Any difference
 * is a warning that names both values. */
#ifndef DSV41_ALIKE_H
#define DSV41_ALIKE_H

#include <stdbool.h>
#include <stddef.h>

#include "cluster.h"
#include "config.h"

#define ALIKE_FIELDS 5

struct alike_print {
    bool asked;        /* the node answered */
    char error[200];   /* why not */
    /* kernel, driver, image, cuda, nccl: "" for n/a, with why in note */
    char value[ALIKE_FIELDS][120];
    char note[ALIKE_FIELDS][120];
    char nccl_path[200];
};

/* The name of field i, for messages ("kernel", "NVIDIA driver", ...). */
const char *alike_field_name(int i);
/* Pure: the script's output into p. */
void alike_parse(const char *text, struct alike_print *p);
/* Asks node cn (its rank is cn->rank). */
int alike_collect(const struct config *c, struct cluster_node *cn, struct alike_print *p);
/* The same answers found in this process on the local node (no process
 * started: the second half of alike.c); -1 when the engine's API socket is not set or
 * does not answer, and the script is the way (alike_collect does that). */
int alike_collect_local(const struct config *c, struct cluster_node *cn, struct alike_print *p);
/* Pure: the first mapped file in a /proc/PID/maps text whose path holds
 * "libnccl", as `grep -o '/[^ ]*libnccl[^ ]*' | head -n 1` finds it, into
 * path (cut to sz); false when none. */
bool alike_maps_nccl(const char *maps, size_t len, char *path, size_t sz);
/* Pure: a warning per field whose known values differ between nodes,
 * naming each node's value; returns how many were written (at most max). */
int alike_compare(const struct alike_print *p, const char *const *names, int n, char (*warn)[320],
                  int max);

#endif
