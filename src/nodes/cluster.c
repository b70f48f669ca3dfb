#include "cluster.h"

#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "runtime.h"

static int open_worker(const struct config *c, struct cluster *cl, const char *target,
                       bool only_one, long timeout_s, struct buf *err)
{
    struct cluster_node *w = &cl->nodes[cl->n];
    w->rank = cl->n;
    w->role = "worker";
    if (w->rank == 1)
        snprintf(w->name, sizeof w->name, "worker");
    else
        snprintf(w->name, sizeof w->name, "worker%d", w->rank);
    /* per-node overrides name one node: with several workers they would
     * give all of them the same address, so they apply to a lone worker */
    if (only_one)
        w->ov =
            (struct rdma_override){config_str(c, CFG_WORKER_IP), config_str(c, CFG_WORKER_IFNAME),
                                   config_str(c, CFG_WORKER_HCAS)};
    w->model_dir_set = config_str(c, CFG_WORKER_MODEL_DIR);
    cl->n++;
    if (node_init_remote(&w->node, w->name, target, config_str(c, CFG_SSH_CONFIG),
                         config_str(c, CFG_SSH_KNOWN_HOSTS), (int)timeout_s * 1000,
                         config_str(c, CFG_WORKER_PROC_ROOT), config_str(c, CFG_WORKER_SYS_ROOT),
                         err) < 0)
        return -1;
    /* what the ssh config asks that we do not do, said once per run */
    if (w->node.t.notes[0])
        fprintf(stderr, "warning: %s: ssh config: %s\n", w->name, w->node.t.notes);
    /* the engine's socket there: found by the worker's own rules (empty),
     * or the setting's (none, or a path the check let through that is still
     * no unix socket, leave the CLI) */
    const char *ws = config_str(c, CFG_WORKER_RUNTIME_SOCKET);
    struct buf why = BUF_INIT;
    if (!ws || !*ws)
        w->node.worker_sock_find = true;
    else if (engine_socket(config_str(c, CFG_RUNTIME), ws, w->node.worker_sock,
                           sizeof w->node.worker_sock, &why) < 0)
        w->node.worker_sock[0] = '\0';
    buf_free(&why);
    w->configured = true;
    return 0;
}

int cluster_open(const struct config *c, struct cluster *cl, struct buf *err)
{
    memset(cl, 0, sizeof *cl);
    long timeout_s;
    if (config_get_long(c, CFG_SSH_TIMEOUT, &timeout_s, err) < 0 ||
        runtime_check(config_str(c, CFG_RUNTIME), err) < 0)
        return -1;
    struct cluster_node *h = &cl->nodes[0];
    snprintf(h->name, sizeof h->name, "head");
    node_init_local(&h->node, "head", config_str(c, CFG_DSV41_PROC_ROOT),
                    config_str(c, CFG_DSV41_SYS_ROOT));
    /* the API socket: a setting that names none that can be used (tcp://)
     * leaves the CLI, as "none" does */
    const char *sock = config_str(c, CFG_RUNTIME_SOCKET);
    struct buf why = BUF_INIT;
    if (engine_socket(config_str(c, CFG_RUNTIME), sock, h->node.engine_sock,
                      sizeof h->node.engine_sock, &why) < 0)
        h->node.engine_sock[0] = '\0';
    buf_free(&why);
    h->role = "head";
    h->rank = 0;
    h->configured = true;
    h->ov = (struct rdma_override){config_str(c, CFG_HEAD_IP), config_str(c, CFG_HEAD_IFNAME),
                                   config_str(c, CFG_HEAD_HCAS)};
    h->model_dir_set = config_str(c, CFG_MODEL_DIR);
    cl->n = 1;
    const char *many = config_str(c, CFG_WORKERS);
    if (many && *many) {
        int count = 1;
        for (const char *p = many; *p; p++)
            count += *p == ',';
        if (count + 1 > CLUSTER_MAX_NODES) {
            buf_printf(err, "WORKERS names %d nodes; at most %d are supported", count,
                       CLUSTER_MAX_NODES - 1);
            return -1;
        }
        const char *p = many;
        while (*p) {
            size_t l = strcspn(p, ",");
            char target[256];
            snprintf(target, sizeof target, "%.*s", (int)l, p);
            if (!target[0] || open_worker(c, cl, target, count == 1, timeout_s, err) < 0) {
                if (!target[0])
                    buf_printf(err, "WORKERS=%s has an empty entry", many);
                cluster_close(cl);
                return -1;
            }
            p += l;
            if (*p == ',')
                p++;
        }
        return 0;
    }
    const char *target = config_str(c, CFG_WORKER);
    if (!target || !*target) {
        /* listed, so that status says what is missing */
        struct cluster_node *w = &cl->nodes[1];
        snprintf(w->name, sizeof w->name, "worker");
        node_init_local(&w->node, "worker", "/proc", "/sys");
        w->node.local = false;
        w->role = "worker";
        w->rank = 1;
        w->model_dir_set = config_str(c, CFG_WORKER_MODEL_DIR);
        w->configured = false;
        cl->n = 2;
        return 0;
    }
    if (open_worker(c, cl, target, true, timeout_s, err) < 0) {
        cluster_close(cl);
        return -1;
    }
    return 0;
}

int cluster_open_for(const char *cmd, const struct config *c, struct cluster *cl)
{
    struct buf err = BUF_INIT;
    int rc = cluster_open(c, cl, &err);
    if (rc < 0)
        fprintf(stderr, "dsv41-top %s: %s\n", cmd, buf_str(&err));
    buf_free(&err);
    return rc;
}

void cluster_close(struct cluster *cl)
{
    for (int i = 0; i < cl->n; i++) {
        sampler_stop(cl->nodes[i].sampler);
        cl->nodes[i].sampler = NULL;
        if (cl->nodes[i].memo && cl->nodes[i].memo_free)
            cl->nodes[i].memo_free(cl->nodes[i].memo);
        cl->nodes[i].memo = NULL;
        node_free(&cl->nodes[i].node);
    }
    cl->n = 0;
}

int cluster_state_dir(const struct config *c, struct cluster_node *cn, char *out, size_t sz,
                      struct buf *err)
{
    /* the head's "~/" was expanded with the settings (it is this machine) */
    return node_expand_path(&cn->node,
                            config_str(c, cn->rank == 0 ? CFG_STATE_DIR : CFG_WORKER_STATE_DIR),
                            out, sz, err);
}

int cluster_model_dir(struct cluster_node *cn, char *out, size_t sz, struct buf *err)
{
    return node_expand_path(&cn->node, cn->model_dir_set, out, sz, err);
}
