/* cluster: the nodes of the deployment as the configuration describes them:
 * the head (this machine, rank 0) and the worker (WORKER, over ssh), each with
 * its fabric overrides and model directory. */
#ifndef DSV41_CLUSTER_H
#define DSV41_CLUSTER_H

#include "config.h"
#include "node.h"
#include "rdma.h"
#include "sampler.h"

#define CLUSTER_MAX_NODES 2

struct cluster_node {
    struct node node;
    const char *role; /* "head" | "worker" */
    int rank;
    struct rdma_override ov;
    const char *model_dir;
    bool configured; /* false: WORKER unset; the node is listed but not probed */
    struct sampler *sampler; /* started by the first status_collect */
};

struct cluster {
    int n;
    struct cluster_node nodes[CLUSTER_MAX_NODES];
};

int cluster_open(const struct config *c, struct cluster *cl, struct buf *err);
void cluster_close(struct cluster *cl);

#endif
