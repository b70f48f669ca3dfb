#include "cluster.h"

#include <string.h>

#include "runtime.h"

int cluster_open(const struct config *c, struct cluster *cl, struct buf *err)
{
    memset(cl, 0, sizeof *cl);
    long timeout_s;
    if (config_get_long(c, "SSH_TIMEOUT", &timeout_s, err) < 0 ||
        runtime_check(config_get(c, "RUNTIME"), err) < 0)
        return -1;
    struct cluster_node *h = &cl->nodes[0];
    node_init_local(&h->node, "head", config_get(c, "DSV41_PROC_ROOT"),
                    config_get(c, "DSV41_SYS_ROOT"));
    h->role = "head";
    h->rank = 0;
    h->configured = true;
    h->ov = (struct rdma_override){config_get(c, "HEAD_IP"), config_get(c, "HEAD_IFNAME"),
                                   config_get(c, "HEAD_HCAS")};
    h->model_dir = config_get(c, "MODEL_DIR");
    cl->n = 1;
    struct cluster_node *w = &cl->nodes[1];
    const char *target = config_get(c, "WORKER");
    w->role = "worker";
    w->rank = 1;
    w->ov = (struct rdma_override){config_get(c, "WORKER_IP"), config_get(c, "WORKER_IFNAME"),
                                   config_get(c, "WORKER_HCAS")};
    w->model_dir = config_get(c, "WORKER_MODEL_DIR");
    cl->n = 2;
    if (!target || !*target) {
        node_init_local(&w->node, "worker", "/proc", "/sys");
        w->node.local = false;
        w->configured = false;
        return 0;
    }
    if (node_init_remote(&w->node, "worker", target, config_get(c, "SSH_CONFIG"),
                         config_get(c, "SSH_KNOWN_HOSTS"), (int)timeout_s * 1000,
                         config_get(c, "WORKER_PROC_ROOT"), config_get(c, "WORKER_SYS_ROOT"),
                         err) < 0)
        return -1;
    w->configured = true;
    return 0;
}

void cluster_close(struct cluster *cl)
{
    for (int i = 0; i < cl->n; i++) {
        sampler_stop(cl->nodes[i].sampler);
        cl->nodes[i].sampler = NULL;
        node_free(&cl->nodes[i].node);
    }
    cl->n = 0;
}
