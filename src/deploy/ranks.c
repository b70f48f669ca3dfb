#include "ranks.h"

#include <stdlib.h>
#include <string.h>

#include "rank_engine.h"
#include "interrupt.h"
#include "mono.h"
#include "runtime.h"
#include "text.h"

#define RANKS_TIMEOUT_MS 60000
/* a tail through the engine: status and launch wait on it, the CLI follows */
#define RANKS_TAIL_ENGINE_MS 10000

static void rank_name(char *out, size_t sz, int rank)
{
    snprintf(out, sz, "dsv41-r%d", rank);
}

/* An engine verb's failure into err, named by the node; its code back. */
static int said(const struct node *n, int rc, struct buf *why, struct buf *err)
{
    if (rc == -1)
        buf_printf(err, "%s: %s", n->name, buf_str(why));
    buf_free(why);
    return rc;
}

static int inspect_cli(struct node *n, const char *rt, int rank, struct container_info *ct,
                       struct buf *err);

/* The verbs below take the node's engine, opened by the caller (NULL: the
 * CLI), so that one rank's steps ask whether it answers once. */
static int inspect_with(struct node *n, const struct rank_engine *e, const char *rt, int rank,
                        struct container_info *ct, struct buf *err)
{
    if (e) {
        char name[32];
        rank_name(name, sizeof name, rank);
        struct buf why = BUF_INIT;
        int rc = said(n, engine_inspect_at(&e->at, name, RANKS_TIMEOUT_MS, ct, &why), &why, err);
        if (rc != ENGINE_NO_ANSWER)
            return rc == 0 ? 1 : rc == ENGINE_NOSUCH ? 0 : -1;
    }
    return inspect_cli(n, rt, rank, ct, err);
}

/* The node's engine, or NULL for the CLI. */
static const struct rank_engine *engine_of(struct node *n, const char *rt, struct rank_engine *e)
{
    return rank_engine_open(n, rt, e) ? e : NULL;
}

int ranks_inspect(struct node *n, const char *rt, int rank, struct container_info *ct,
                  struct buf *err)
{
    struct rank_engine e;
    return inspect_with(n, engine_of(n, rt, &e), rt, rank, ct, err);
}

static int inspect_cli(struct node *n, const char *rt, int rank, struct container_info *ct,
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
    if (res.exit_status == 0 && inspect_parse_line(buf_str(&res.out), ct) == 0)
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
    rank_name(name, sizeof name, rank);
    build(&cmd, rt, name);
    int rc = run_verb(n, &cmd, err);
    shcmd_free(&cmd);
    return rc;
}

/* Gone is what the caller wants: a container that was never there is too. */
static int remove_with(struct node *n, const struct rank_engine *e, const char *rt, int rank,
                       struct buf *err)
{
    if (e) {
        char name[32];
        rank_name(name, sizeof name, rank);
        struct buf why = BUF_INIT;
        int rc = said(n, engine_remove_at(&e->at, name, RANKS_TIMEOUT_MS, &why), &why, err);
        if (rc != ENGINE_NO_ANSWER)
            return rc == -1 ? -1 : 0;
    }
    return rank_verb(n, rt, rank, runtime_cmd_rm, err);
}

int ranks_remove(struct node *n, const char *rt, int rank, struct buf *err)
{
    struct rank_engine e;
    return remove_with(n, engine_of(n, rt, &e), rt, rank, err);
}

/* Created and never started: podman's StartedAt then is the zero time. */
static bool never_started(const struct container_info *ct)
{
    return ct->pid == 0 && (!ct->started[0] || strncmp(ct->started, "0001-01-01", 10) == 0);
}

/* ranks_kill through the engine; ENGINE_NO_ANSWER leaves the CLI. */
static int kill_engine(struct node *n, const struct rank_engine *e, const char *rt, int rank,
                       struct buf *err)
{
    char name[32];
    rank_name(name, sizeof name, rank);
    struct buf why = BUF_INIT;
    int rc = engine_kill_at(&e->at, name, "KILL", RANKS_TIMEOUT_MS, &why);
    if (rc == ENGINE_NOT_RUNNING) {
        /* exited (its log is kept) or, interrupted between create and
         * start, created: half-started, with no log worth keeping */
        struct container_info ct;
        buf_reset(&why);
        rc = engine_inspect_at(&e->at, name, RANKS_TIMEOUT_MS, &ct, &why);
        if (rc == 0 && never_started(&ct))
            rc = remove_with(n, e, rt, rank, &why);
    }
    rc = said(n, rc, &why, err);
    return rc == -1 || rc == ENGINE_NO_ANSWER ? rc : 0;
}

/* A container that does not exist or does not run has nothing to kill:
 * that is success (docker and podman word it alike, in any case). */
int ranks_kill(struct node *n, const char *rt, int rank, struct buf *err)
{
    struct rank_engine e;
    if (rank_engine_open(n, rt, &e)) {
        int rc = kill_engine(n, &e, rt, rank, err);
        if (rc != ENGINE_NO_ANSWER)
            return rc;
    }
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

static int add_engine_line(void *ctx, int stream, const char *line, size_t len)
{
    (void)stream; /* the CLI's logs merge both streams too */
    add_line(ctx, line, len);
    return 0;
}

int ranks_tail(struct node *n, const char *rt, int rank, int tail, struct strv *lines,
               struct buf *err)
{
    struct rank_engine e;
    if (rank_engine_open(n, rt, &e)) {
        char name[32];
        rank_name(name, sizeof name, rank);
        struct buf why = BUF_INIT;
        struct strv got = STRV_INIT;
        int rc = engine_logs_at(&e.at, name, tail, RANKS_TAIL_ENGINE_MS, add_engine_line, &got,
                                &why);
        for (int i = 0; rc == 0 && i < got.n; i++)
            strv_add(lines, got.v[i]);
        strv_free(&got);
        if (rc == ENGINE_NOSUCH)
            buf_printf(err, "%s: %s", n->name, buf_str(&why));
        buf_free(&why);
        if (rc == 0 || rc == ENGINE_NOSUCH)
            return rc == 0 ? 0 : -1;
        /* a log is only read: any other failure of the engine's leaves the
         * CLI, with what the engine gave dropped (no line twice) */
    }
    struct shcmd cmd = SHCMD_INIT;
    char name[32];
    rank_name(name, sizeof name, rank);
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

/* What the survey found of rank r on a node. */
enum found { FOUND_NONE, FOUND_OURS, FOUND_LEFT };

/* Every node, every rank name (one may be left anywhere): found[node][rank],
 * and whether it runs. A container dsv41-top did not start is named and left
 * unless force. Returns the nodes that could not be asked plus the ranks left. */
static int survey(struct cluster *cl, const char *rt, bool force,
                  enum found found[CLUSTER_MAX_NODES][CLUSTER_MAX_NODES],
                  bool running[CLUSTER_MAX_NODES][CLUSTER_MAX_NODES], FILE *out)
{
    int bad = 0;
    for (int i = 0; i < cl->n; i++) {
        struct cluster_node *cn = &cl->nodes[i];
        struct rank_engine eng;
        const struct rank_engine *e = cn->configured ? engine_of(&cn->node, rt, &eng) : NULL;
        for (int r = 0; cn->configured && r < cl->n; r++) {
            struct container_info ct;
            struct buf err = BUF_INIT;
            int have = inspect_with(&cn->node, e, rt, r, &ct, &err);
            if (have < 0) {
                fprintf(out, "%s: cannot stop ranks: %s\n", cn->name, buf_str(&err));
                bad++;
                buf_free(&err);
                break;
            }
            buf_free(&err);
            if (have == 1 && !ct.managed && !force) {
                fprintf(out, "%s: dsv41-r%d was not started by dsv41-top: left alone (--force "
                             "removes it)\n",
                        cn->name, r);
                bad++;
                found[i][r] = FOUND_LEFT;
            } else if (have == 1) {
                found[i][r] = FOUND_OURS;
                running[i][r] = ct.running;
            }
        }
    }
    return bad;
}

int ranks_stop_all(const struct config *c, struct cluster *cl, bool force, FILE *out)
{
    const char *rt = config_str(c, CFG_RUNTIME);
    enum found found[CLUSTER_MAX_NODES][CLUSTER_MAX_NODES] = {{FOUND_NONE}};
    bool running[CLUSTER_MAX_NODES][CLUSTER_MAX_NODES] = {{false}};
    int bad = survey(cl, rt, force, found, running, out), stopped = 0;
    for (int i = 0; i < cl->n; i++) {
        for (int r = 0; r < cl->n; r++) {
            if (found[i][r] != FOUND_OURS)
                continue;
            struct buf err = BUF_INIT;
            if (ranks_remove(&cl->nodes[i].node, rt, r, &err) < 0) {
                fprintf(out, "%s\n", buf_str(&err));
                bad++;
            } else {
                fprintf(out, "stopped dsv41-r%d on %s\n", r, cl->nodes[i].name);
                stopped++;
            }
            buf_free(&err);
        }
    }
    if (!stopped && !bad)
        fprintf(out, "no ranks running\n");
    return bad;
}

/* Says once that an interrupt turned the stop into --now. */
static bool now_after_interrupt(bool *said, FILE *out)
{
    int sig = interrupt_pending();
    if (sig && !*said) {
        fprintf(out, "interrupted by %s: removing the remaining ranks at once (as stop --now)\n",
                interrupt_name(sig));
        fflush(out);
        *said = true;
    }
    return sig != 0;
}

/* `RUNTIME stop -t`: *failed when it did not answer or failed (err says
 * why, unless an interrupt cut it). */
static void stop_cli(struct cluster_node *cn, const char *rt, int r, int timeout_s, bool *failed,
                     struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    char name[32];
    rank_name(name, sizeof name, r);
    runtime_cmd_stop(&cmd, rt, name, timeout_s);
    struct ssh_result res;
    /* the runtime kills at timeout_s; the margin is for a runtime that hangs */
    int rc = node_run_cancel(&cn->node, &cmd, (timeout_s + 30) * 1000, interrupt_token(), &res,
                             err);
    shcmd_free(&cmd);
    *failed = rc < 0 || res.exit_status != 0;
    if (rc == 0 && res.exit_status != 0) {
        buf_printf(err, "%s: `%s stop` failed: ", cn->name, rt);
        text_one_line(err, buf_str(&res.err), res.err.len, 300);
    }
    if (rc == 0)
        ssh_result_free(&res);
}

/* One running rank: stop -t, then remove. 0 when it is gone. */
static int stop_one(struct cluster_node *cn, const char *rt, int r, int timeout_s, bool *said_now,
                    FILE *out)
{
    struct buf err = BUF_INIT;
    if (r == 0)
        fprintf(out, "r0 %s: stopping dsv41-r0 (draining, up to %d s)...\n", cn->name, timeout_s);
    else
        fprintf(out, "r%d %s: stopping dsv41-r%d (up to %d s)...\n", r, cn->name, r, timeout_s);
    fflush(out);
    double t0 = mono_s();
    bool stop_failed = true, interrupted = false;
    struct rank_engine eng;
    const struct rank_engine *e = engine_of(&cn->node, rt, &eng);
    int rc = ENGINE_NO_ANSWER;
    if (e) {
        char name[32];
        rank_name(name, sizeof name, r);
        rc = engine_stop_at_cancel(&e->at, name, timeout_s, interrupt_fd(), &err);
        if (rc == ENGINE_NO_ANSWER)
            buf_reset(&err);
    }
    if (rc != ENGINE_NO_ANSWER) {
        interrupted = rc == ENGINE_CANCELLED && now_after_interrupt(said_now, out);
        stop_failed = rc != 0;
        if (stop_failed && !interrupted) {
            struct buf why = BUF_INIT;
            buf_printf(&why, "%s: %s", cn->name, buf_str(&err));
            buf_reset(&err);
            buf_puts(&err, buf_str(&why));
            buf_free(&why);
        }
    } else {
        stop_cli(cn, rt, r, timeout_s, &stop_failed, &err);
        interrupted = stop_failed && now_after_interrupt(said_now, out);
    }
    int elapsed = (int)(mono_s() - t0 + 0.5);
    if (stop_failed && !interrupted)
        fprintf(out, "%s (removing it)\n", buf_str(&err));
    /* the exit code tells a drained rank from one the runtime killed */
    struct container_info ct = {0};
    buf_reset(&err);
    int have = stop_failed ? 0 : inspect_with(&cn->node, e, rt, r, &ct, &err);
    buf_reset(&err);
    if (remove_with(&cn->node, e, rt, r, &err) < 0) {
        fprintf(out, "%s\n", buf_str(&err));
        buf_free(&err);
        return -1;
    }
    buf_free(&err);
    if (interrupted || stop_failed)
        fprintf(out, "stopped dsv41-r%d on %s (removed at once after %d s)\n", r, cn->name,
                elapsed);
    else if (have == 1 && ct.exit_code == 137)
        fprintf(out, "killed dsv41-r%d on %s after the %d s timeout (it did not exit on SIGTERM)\n",
                r, cn->name, timeout_s);
    else if (have == 1 && ct.exit_code != 0)
        fprintf(out, "stopped dsv41-r%d on %s after %d s (exit code %d)\n", r, cn->name, elapsed,
                ct.exit_code);
    else
        fprintf(out, "stopped dsv41-r%d on %s after %d s\n", r, cn->name, elapsed);
    fflush(out);
    return 0;
}

int ranks_stop_gracefully(const struct config *c, struct cluster *cl, bool force, int timeout_s,
                          FILE *out)
{
    const char *rt = config_str(c, CFG_RUNTIME);
    enum found found[CLUSTER_MAX_NODES][CLUSTER_MAX_NODES] = {{FOUND_NONE}};
    bool running[CLUSTER_MAX_NODES][CLUSTER_MAX_NODES] = {{false}};
    int bad = survey(cl, rt, force, found, running, out), stopped = 0;
    /* rank 0 everywhere, then rank 1, ...: the API goes first */
    bool said = false;
    for (int r = 0; r < cl->n; r++) {
        for (int i = 0; i < cl->n; i++) {
            if (found[i][r] != FOUND_OURS)
                continue;
            struct cluster_node *cn = &cl->nodes[i];
            struct buf err = BUF_INIT;
            int rc;
            if (!running[i][r] || now_after_interrupt(&said, out)) {
                rc = ranks_remove(&cn->node, rt, r, &err);
                if (rc == 0)
                    fprintf(out, "stopped dsv41-r%d on %s%s\n", r, cn->name,
                            running[i][r] ? "" : " (it was not running)");
                else
                    fprintf(out, "%s\n", buf_str(&err));
                fflush(out);
            } else {
                int t = r == 0 || timeout_s < RANKS_WORKER_STOP_S ? timeout_s : RANKS_WORKER_STOP_S;
                rc = stop_one(cn, rt, r, t, &said, out);
            }
            buf_free(&err);
            if (rc < 0)
                bad++;
            else
                stopped++;
        }
    }
    if (!stopped && !bad)
        fprintf(out, "no ranks running\n");
    return bad;
}
