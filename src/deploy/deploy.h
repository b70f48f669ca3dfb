/* deploy: the deployment plan. From the configuration and each node's
 * fabric it builds every rank's container command, vLLM arguments and
 * environment exactly as REFERENCE.md §1 measured them. Pure: no I/O, so
 * every flag is checked by golden tests. */
#ifndef DSV41_DEPLOY_H
#define DSV41_DEPLOY_H

#include <stdbool.h>

#include "config.h"
#include "strv.h"

#define DEPLOY_MAX_NODES 8
#define DEPLOY_SERVED_NAME "deepseek-v4.1-flash"
#define DEPLOY_LABEL "dsv41-top.managed"
/* Where rank 0 finds the API key file (mounted read-only), and the script
 * its /bin/sh runs: the key into VLLM_API_KEY, then VLLM_CMD and vLLM's
 * arguments. A key file without a final newline still reads. */
#define DEPLOY_KEY_PATH "/run/dsv41/api_key"
#define DEPLOY_KEY_SCRIPT                                                                          \
    "IFS= read -r VLLM_API_KEY < " DEPLOY_KEY_PATH " || [ -n \"$VLLM_API_KEY\" ] || "               \
    "{ echo \"$0: cannot read the API key from " DEPLOY_KEY_PATH "\" >&2; exit 1; }; "            \
    "export VLLM_API_KEY; exec \"$@\""

/* What launch learned about a node. */
struct deploy_node {
    const char *name;      /* "head", "worker", "worker2" ... */
    const char *ifname;    /* fabric netdev */
    const char *ipv4;      /* fabric IPv4 */
    const char *hcas;      /* RDMA devices for NCCL_IB_HCA */
    int gid_index;         /* RoCE v2 IPv4 GID index; -1 unknown */
    const char *model_dir; /* on that node */
    const char *state_dir; /* on that node */
    /* non-NULL when the node's fabric is not known (a dry run of a node
     * that cannot be asked): its address, netdev, HCAs and GID index read
     * as this text ("unknown (worker unreachable)"), never a made-up value */
    const char *unknown;
};

struct deploy_rank {
    int rank;
    char container[32]; /* dsv41-r<rank> */
    char env_file[512]; /* STATE_DIR/dsv41-r<rank>.env on its node */
    struct strv run;    /* runtime arguments after the runtime's name: run -d ... -- IMG ... */
    struct strv args;   /* vLLM's arguments (the tail of run) */
    struct strv env;    /* KEY=VALUE, the secret excluded */
    bool gid_guessed;   /* NCCL_IB_GID_INDEX fell back to 3 */
};

struct deploy_plan {
    int nnodes, tp, pp, cap;
    bool incomplete; /* a node's facts were unknown: a plan to show, never to run */
    int capture_sizes[64];
    int ncapture;
    struct deploy_rank ranks[DEPLOY_MAX_NODES];
};

/* CUDA graph capture sizes of §1: 1..min(NSPEC+1, CAP), then NSPEC+1 to CAP
 * in steps of 4, plus CAP; sorted, no duplicates. Returns the count. */
int deploy_capture_sizes(int max_seqs, int nspec, int *sizes, int max);
/* Builds the plan for nodes[0..n) (node i runs rank i). -1 with a reason in
 * err for settings that cannot make a deployment, or a node without a
 * fabric address that is not marked unknown. */
int deploy_build(const struct config *c, const struct deploy_node *nodes, int n,
                 struct deploy_plan *p, struct buf *err);
/* The env file's text (nothing secret: the key has its own file). */
int deploy_env_text(const struct deploy_rank *r, struct buf *out);
void deploy_free(struct deploy_plan *p);

#endif
