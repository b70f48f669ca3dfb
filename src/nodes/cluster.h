/* cluster: the nodes of the deployment as the configuration describes them:
 * the head (this machine, rank 0) and the workers (WORKER, or WORKERS for
 * more than one; node i runs rank i), each with its fabric overrides, model
 * and state directories. */
#ifndef DSV41_CLUSTER_H
#define DSV41_CLUSTER_H

#include "config.h"
#include "node.h"
#include "rdma.h"
#include "sampler.h"

#define CLUSTER_MAX_NODES 8

struct cluster_node {
    struct node node;
    const char *role; /* "head" | "worker" */
    int rank;
    struct rdma_override ov;
    const char *model_dir_set; /* as set: a worker's "~/" is its home (cluster_model_dir) */
    char name[32];         /* "head", "worker", "worker2", ... */
    bool configured; /* false: WORKER unset; the node is listed but not probed */
    struct sampler *sampler; /* started by the first status_collect */
    /* what a layer above keeps of this node between its rounds (status.c's
     * memo: facts of the running rank), freed by cluster_close with memo_free */
    void *memo;
    void (*memo_free)(void *memo);
};

struct cluster {
    int n;
    struct cluster_node nodes[CLUSTER_MAX_NODES];
};

int cluster_open(const struct config *c, struct cluster *cl, struct buf *err);
/* cluster_open for a command: prints "dsv41-top CMD: reason" and returns -1
 * when the configuration cannot make a cluster. */
int cluster_open_for(const char *cmd, const struct config *c, struct cluster *cl);
void cluster_close(struct cluster *cl);
/* STATE_DIR on a node: the head's STATE_DIR; a worker's WORKER_STATE_DIR
 * (by default STATE_DIR as it was set), a "~/" in it that worker's own home
 * (asked over ssh once per session). -1 with the reason when the home
 * cannot be asked. */
int cluster_state_dir(const struct config *c, struct cluster_node *cn, char *out, size_t sz,
                      struct buf *err);
/* MODEL_DIR on a node: the head's MODEL_DIR; a worker's WORKER_MODEL_DIR,
 * its "~/" that worker's home, as cluster_state_dir. */
int cluster_model_dir(struct cluster_node *cn, char *out, size_t sz, struct buf *err);

#endif
