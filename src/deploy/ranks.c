#include "ranks.h"

#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "text.h"

#define RANKS_TIMEOUT_MS 60000

int ranks_inspect(struct node *n, const char *rt, int rank, struct probe_container *ct,
                  struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    struct strv names = STRV_INIT;
    strv_addf(&names, "dsv41-r%d", rank);
    runtime_cmd_inspect(&cmd, rt, &names);
    strv_free(&names);
    struct ssh_result res;
    int rc = node_run(n, &cmd, RANKS_TIMEOUT_MS, &res, err);
    shcmd_free(&cmd);
    if (rc < 0)
        return -1;
    rc = -1;
    if (res.exit_status == 0 && probe_parse_inspect_line(buf_str(&res.out), ct) == 0)
        rc = 1;
    else if (strcasestr(buf_str(&res.out), "no such") || strcasestr(buf_str(&res.err), "no such"))
        rc = 0;
    else {
        buf_printf(err, "%s: %s container inspect failed: ", n->name, rt);
        text_one_line(err, buf_str(&res.out), res.out.len, 200);
        buf_puts(err, " ");
        text_one_line(err, buf_str(&res.err), res.err.len, 200);
    }
    ssh_result_free(&res);
    return rc;
}

static int run_verb(struct node *n, const struct shcmd *cmd, struct buf *err)
{
    struct ssh_result res;
    if (node_run(n, cmd, RANKS_TIMEOUT_MS, &res, err) < 0)
        return -1;
    int rc = 0;
    if (res.exit_status != 0) {
        struct buf words = BUF_INIT;
        shcmd_join(&cmd->args, &words);
        buf_printf(err, "%s: `%s` failed: ", n->name, buf_str(&words));
        text_one_line(err, buf_str(&res.err), res.err.len, 300);
        buf_free(&words);
        rc = -1;
    }
    ssh_result_free(&res);
    return rc;
}

/* A runtime verb on one rank's container: kill or rm -f. */
static int rank_verb(struct node *n, const char *rt, int rank,
                     void (*build)(struct shcmd *, const char *, const char *), struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    char name[32];
    snprintf(name, sizeof name, "dsv41-r%d", rank);
    build(&cmd, rt, name);
    int rc = run_verb(n, &cmd, err);
    shcmd_free(&cmd);
    return rc;
}

int ranks_remove(struct node *n, const char *rt, int rank, struct buf *err)
{
    return rank_verb(n, rt, rank, runtime_cmd_rm, err);
}

/* A container that does not exist or does not run has nothing to kill:
 * that is success (docker and podman word it alike, in any case). */
int ranks_kill(struct node *n, const char *rt, int rank, struct buf *err)
{
    struct buf why = BUF_INIT;
    int rc = rank_verb(n, rt, rank, runtime_cmd_kill, &why);
    if (rc < 0 && strcasestr(buf_str(&why), "in state created")) {
        /* a `run` interrupted between create and start (podman's words):
         * half-started, with no log worth keeping */
        buf_reset(&why);
        rc = ranks_remove(n, rt, rank, &why);
    } else if (rc < 0 && (strcasestr(buf_str(&why), "no such container") ||
                          strcasestr(buf_str(&why), "not running"))) {
        rc = 0;
    }
    if (rc < 0)
        buf_puts(err, buf_str(&why));
    buf_free(&why);
    return rc;
}

static void add_line(void *ctx, const char *line, size_t len)
{
    char clean[512];
    text_clean(clean, sizeof clean, line, len);
    strv_add(ctx, clean);
}

int ranks_tail(struct node *n, const char *rt, int rank, int tail, struct strv *lines,
               struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    char name[32];
    snprintf(name, sizeof name, "dsv41-r%d", rank);
    runtime_cmd_logs(&cmd, rt, name, false, tail);
    struct ssh_result res;
    int rc = node_run(n, &cmd, RANKS_TIMEOUT_MS, &res, err);
    shcmd_free(&cmd);
    if (rc < 0)
        return -1;
    buf_append(&res.out, "\n", 1);
    buf_drain_lines(&res.out, 4096, add_line, lines);
    ssh_result_free(&res);
    return 0;
}

int ranks_stop_all(const struct config *c, struct cluster *cl, bool force, FILE *out)
{
    const char *rt = config_get(c, "RUNTIME");
    int bad = 0, stopped = 0;
    for (int i = 0; i < cl->n; i++) {
        struct cluster_node *cn = &cl->nodes[i];
        if (!cn->configured)
            continue;
        /* a rank may have been left on any node: look for all of them */
        for (int r = 0; r < cl->n; r++) {
            struct probe_container ct;
            struct buf err = BUF_INIT;
            int have = ranks_inspect(&cn->node, rt, r, &ct, &err);
            if (have < 0) {
                fprintf(out, "%s: cannot stop ranks: %s\n", cn->name, buf_str(&err));
                bad++;
                buf_free(&err);
                break;
            }
            if (have == 1 && !ct.managed && !force) {
                fprintf(out, "%s: dsv41-r%d was not started by dsv41-top: left alone (--force "
                             "removes it)\n",
                        cn->name, r);
                bad++;
            } else if (have == 1) {
                if (ranks_remove(&cn->node, rt, r, &err) < 0) {
                    fprintf(out, "%s\n", buf_str(&err));
                    bad++;
                } else {
                    fprintf(out, "stopped dsv41-r%d on %s\n", r, cn->name);
                    stopped++;
                }
            }
            buf_free(&err);
        }
    }
    if (!stopped && !bad)
        fprintf(out, "no ranks running\n");
    return bad;
}
