#include "guards.h"

#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "guardctl.h"
#include "fanout.h"
#include "helper.h"
#include "text.h"

#define GUARD_BIN "dsv41-guard"

/* run_guard_as's answers of its own (the guard's exit codes are 0-2): the
 * node's guard is not the one it was asked for; the copy sent is not the
 * bytes sent (a write-back error that sftp did not report) and is removed;
 * 95 and 96: the bin directory or the rename failed (what the command said
 * is the first line of output) */
#define GUARD_NOT_THERE 97
#define GUARD_COPY_DAMAGED 94

/* The node's installed guard with args; its first line of output in out.
 * stop_first: the guard running there is stopped first, in the same round
 * trip (#32: the launch's overhead). sum (or NULL): run only if the file
 * there has this sha256, else GUARD_NOT_THERE with the node's `uname -m` in
 * out and its bin directory made - the probe helper_install makes, in this
 * round trip instead of one of its own; copies older than 10 minutes that
 * never reached their rename (a session that dropped mid-send) go then.
 * newbin (or NULL): a copy sent by helper_send, whose sha256 must be sum,
 * renamed over the guard first (helper_install's last round trip, folded
 * in here). */
static int run_guard_as(struct cluster_node *cn, const char *state_dir, const struct strv *args,
                        bool stop_first, const char *sum, const char *newbin,
                        const atomic_int *cancel, struct buf *out, struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd,
                 "G=$1 S=$2 STOP=$3 SUM=$4 NEW=$5; shift 5\n"
                 "is_sum() { [ -f \"$1\" ] && [ ! -L \"$1\" ] &&\n"
                 "  [ \"$(sha256sum < \"$1\" 2>/dev/null)\" = \"$SUM  -\" ]; }\n"
                 "if [ -n \"$NEW\" ]; then\n"
                 "  is_sum \"$NEW\" || { rm -f -- \"$NEW\"; exit 94; }\n"
                 "  mv -f -- \"$NEW\" \"$G\" 2>&1 || { rm -f -- \"$NEW\"; exit 96; }\n"
                 "elif [ -n \"$SUM\" ] && ! is_sum \"$G\"; then\n"
                 "  D=${G%/*} P=${G##*/}.new-*\n"
                 "  umask 077; mkdir -p -- \"$D\" 2>&1 || exit 95\n"
                 "  find \"$D\" -maxdepth 1 -name \"$P\" -mmin +10 -exec rm -f -- {} + 2>/dev/null\n"
                 "  uname -m; exit 97\n"
                 "fi\n"
                 "[ \"$STOP\" = 0 ] || \"$G\" --state-dir \"$S\" --stop >/dev/null 2>&1\n"
                 "exec \"$G\" --state-dir \"$S\" \"$@\" 2>&1");
    shcmd_argf(&cmd, "%s/bin/%s", state_dir, GUARD_BIN);
    shcmd_arg(&cmd, state_dir);
    shcmd_arg(&cmd, stop_first ? "1" : "0");
    shcmd_arg(&cmd, sum ? sum : "");
    shcmd_arg(&cmd, newbin ? newbin : "");
    shcmd_args(&cmd, args);
    struct ssh_result res;
    int rc = node_run_cancel(&cn->node, &cmd, 30000, cancel, &res, err);
    shcmd_free(&cmd);
    if (rc == 0) {
        char line[400];
        text_clean(line, sizeof line, buf_str(&res.out), strcspn(buf_str(&res.out), "\n"));
        buf_puts(out, line);
        rc = res.exit_status;
        ssh_result_free(&res);
    }
    return rc;
}

static int run_guard(struct cluster_node *cn, const char *state_dir, const struct strv *args,
                     struct buf *out, struct buf *err)
{
    return run_guard_as(cn, state_dir, args, false, NULL, NULL, NULL, out, err);
}

void guards_args(const struct config *c, struct cluster_node *cn, int nranks,
                 struct strv *args)
{
    strv_add(args, "--runtime");
    strv_add(args, config_str(c, CFG_RUNTIME));
    strv_add(args, "--ranks");
    strv_addf(args, "%d", nranks);
    static const struct {
        const char *flag;
        enum config_id key;
    } flags[] = {
        {"--floor", CFG_MEMGUARD_GIB},           {"--warn", CFG_MEMGUARD_WARN_GIB},
        {"--psi-warn", CFG_MEMGUARD_PSI_WARN},   {"--psi-kill", CFG_MEMGUARD_PSI_KILL},
        {"--frag-warn", CFG_MEMGUARD_FRAG_WARN}, {"--kmsg-warn", CFG_MEMGUARD_KMSG_WARN},
    };
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
        strv_add(args, flags[k].flag);
        strv_add(args, config_str(c, flags[k].key));
    }
    strv_add(args, "--proc-root");
    strv_add(args, cn->node.proc_root);
    /* RUNTIME_SOCKET is the head's, WORKER_RUNTIME_SOCKET the workers'
     * (empty: the one found on the worker, whose guard may run where its
     * environment lacks the variables that found it; else the guard finds
     * its own) */
    const char *sock = config_str(c, cn->node.local ? CFG_RUNTIME_SOCKET : CFG_WORKER_RUNTIME_SOCKET);
    char found[256];
    if ((!sock || !*sock) && !cn->node.local &&
        node_engine_sock(&cn->node, config_str(c, CFG_RUNTIME), NULL, found, sizeof found) == 1)
        sock = found;
    if (sock && *sock) {
        strv_add(args, "--socket");
        strv_add(args, sock);
    }
}

/* Installs and starts the guard on one node; 0 when it runs (or already did). */
static int start_one(const struct config *c, struct cluster_node *cn, int nranks,
                     const char *state_dir, const struct buf *bin, const char *sum, FILE *out)
{
    int bad = 0;
    struct buf path = BUF_INIT, err = BUF_INIT, said = BUF_INIT;
    struct strv args = STRV_INIT;
    /* installed first, then the old guard stops (its floor may differ; a
     * console's guard lets go), which also works on a first launch with no
     * binary yet, and the new one starts. Where the node's copy is this
     * guard already (the usual launch), all of it is one round trip: the same
     * bytes passed helper_install's CPU check when they were sent. Where it
     * is not (a first launch, a new build), that round trip also made the
     * bin directory and said the node's CPU: the copy is sent and renamed
     * into place in the start's round trip (#32: two round trips fewer than
     * helper_install's). sum: bin's sha256, hashed once for every node. */
    guards_args(c, cn, nranks, &args);
    strv_add(&args, "--daemon");
    bool ok = true;
    int rc;
    if (sum[0]) {
        rc = run_guard_as(cn, state_dir, &args, true, sum, NULL, NULL, &said, &err);
        if (rc == GUARD_NOT_THERE) {
            ok = helper_check_machine(cn->name, buf_str(&said), GUARD_BIN, bin, &err) == 0 &&
                 helper_send(cn, state_dir, GUARD_BIN, bin, &path, &err) == 0;
            buf_reset(&said);
            rc = ok ? run_guard_as(cn, state_dir, &args, true, sum, buf_str(&path), NULL, &said,
                                   &err)
                    : -1;
            if (rc == GUARD_COPY_DAMAGED)
                buf_printf(&said, "the copy sent (%s) arrived with another sha256 and was removed: "
                           "is that disk full or failing?", buf_str(&path));
        }
    } else { /* the hash failed here: helper_install's own round trips */
        ok = helper_install(cn, state_dir, GUARD_BIN, bin, &path, &err) == 0;
        rc = ok ? run_guard_as(cn, state_dir, &args, true, NULL, NULL, NULL, &said, &err) : -1;
    }
    if (rc == 0) {
        fprintf(out, "%s: memory guard up: %s\n", cn->name, buf_str(&said));
    } else if (ok && strstr(buf_str(&said), "another guard is running")) {
        fprintf(out, "%s: memory guard already running\n", cn->name);
    } else {
        fprintf(out, "%s: cannot start the memory guard: %s%s\n", cn->name, buf_str(&err),
                buf_str(&said));
        bad++;
    }
    buf_free(&path);
    buf_free(&err);
    buf_free(&said);
    strv_free(&args);
    return bad;
}

/* The guard's binary from beside ours and its sha256, read and hashed once
 * for every node it starts on; -1 said on out when it is missing. */
static int guard_bin_load(struct buf *bin, char sum[65], FILE *out)
{
    struct buf why = BUF_INIT;
    int rc = helper_read(GUARD_BIN, bin, &why);
    if (rc < 0)
        fprintf(out, "head: no memory guard: %s\n", buf_str(&why));
    else
        helper_sha256_hex(bin, sum);
    buf_free(&why);
    return rc;
}

int guards_start_node(const struct config *c, struct cluster *cl, int i, const char *state_dir,
                      FILE *out)
{
    struct buf bin = BUF_INIT;
    char sum[65];
    int bad = 1;
    if (guard_bin_load(&bin, sum, out) == 0)
        bad = start_one(c, &cl->nodes[i], cl->n, state_dir, &bin, sum, out);
    buf_free(&bin);
    return bad;
}

struct start_all {
    const struct config *c;
    struct cluster *cl;
    char (*dirs)[512];
    const struct buf *bin;
    char sum[65];
};

static int start_each(int i, FILE *out, void *ctx)
{
    struct start_all *a = ctx;
    return start_one(a->c, &a->cl->nodes[i], a->cl->n, a->dirs[i], a->bin, a->sum, out);
}

int guards_start(const struct config *c, struct cluster *cl, char (*state_dirs)[512], FILE *out)
{
    struct buf bin = BUF_INIT;
    struct start_all a = {c, cl, state_dirs, &bin, ""};
    int bad = cl->n;
    if (guard_bin_load(&bin, a.sum, out) == 0)
        bad = fanout_run(cl->n, start_each, &a, out); /* every node's at once */
    buf_free(&bin);
    return bad;
}

void guard_opts_from_config(const struct config *c, struct guard_opts *o)
{
    guard_opts_defaults(o);
    snprintf(o->proc_root, sizeof o->proc_root, "%s", config_str(c, CFG_DSV41_PROC_ROOT));
    snprintf(o->state_dir, sizeof o->state_dir, "%s", config_str(c, CFG_STATE_DIR));
    snprintf(o->runtime, sizeof o->runtime, "%s", config_str(c, CFG_RUNTIME));
    const char *sock = config_str(c, CFG_RUNTIME_SOCKET);
    snprintf(o->socket, sizeof o->socket, "%s", sock ? sock : "");
    const char *w = config_str(c, CFG_WORKERS);
    o->nranks = 2;
    if (w && *w) {
        o->nranks = 2;
        for (const char *p = w; *p; p++)
            o->nranks += *p == ',';
    }
    if (guard_parse_gib(config_str(c, CFG_MEMGUARD_GIB), &o->floor_kib) < 0)
        o->floor_kib = 0; /* refused below with the setting's name */
    if (guard_parse_gib(config_str(c, CFG_MEMGUARD_WARN_GIB), &o->warn_kib) < 0)
        o->warn_kib = 0;
    /* the settings were checked on load (CK_INT ranges) */
    o->psi_warn = (int)config_long(c, CFG_MEMGUARD_PSI_WARN);
    o->psi_kill = (int)config_long(c, CFG_MEMGUARD_PSI_KILL);
    o->frag_warn = config_long(c, CFG_MEMGUARD_FRAG_WARN);
    o->kmsg_warn = (int)config_long(c, CFG_MEMGUARD_KMSG_WARN);
}

int guards_describe(const struct config *c, struct cluster_node *cn, char *out, size_t sz,
                    const atomic_int *cancel)
{
    char dir[512];
    struct buf err = BUF_INIT, said = BUF_INIT;
    struct strv args = STRV_INIT;
    strv_add(&args, "--status");
    int rc = cluster_state_dir(c, cn, dir, sizeof dir, &err);
    if (rc == 0 && cn->node.local) {
        /* the files themselves: no process started, and the console's own
         * guard (no binary installed) counts too */
        char desc[400];
        rc = guardctl_heartbeat(dir, GUARD_FRESH_S, desc, sizeof desc) ? 0 : 1;
        if (rc && strstr(desc, "no guard heartbeat"))
            rc = 127; /* no guard has run here: none installed, as on a remote node */
        snprintf(out, sz, "%s%s", rc ? "NOT GUARDED: " : "", desc);
        strv_free(&args);
        buf_free(&err);
        return rc;
    }
    if (rc == 0)
        rc = run_guard_as(cn, dir, &args, false, NULL, NULL, cancel, &said, &err);
    if (rc == 127 || (rc != 0 && strstr(buf_str(&said), "not found"))) {
        rc = 127;
        snprintf(out, sz, "no memory guard installed (launch installs and starts it)");
    } else {
        snprintf(out, sz, "%s", rc < 0 ? buf_str(&err) : buf_str(&said));
    }
    strv_free(&args);
    buf_free(&err);
    buf_free(&said);
    return rc;
}

static int each(const struct config *c, struct cluster *cl, const char *action, FILE *out,
                bool report_rc)
{
    int bad = 0;
    struct strv args = STRV_INIT;
    strv_add(&args, action);
    for (int i = 0; i < cl->n; i++) {
        struct cluster_node *cn = &cl->nodes[i];
        if (!cn->configured)
            continue;
        char dir[512];
        struct buf err = BUF_INIT, said = BUF_INIT;
        int rc = cluster_state_dir(c, cn, dir, sizeof dir, &err);
        if (rc == 0)
            rc = run_guard(cn, dir, &args, &said, &err);
        if (rc == 127 || (rc != 0 && strstr(buf_str(&said), "not found")))
            fprintf(out, "%s: no memory guard installed\n", cn->name);
        else if (rc < 0)
            fprintf(out, "%s: %s\n", cn->name, buf_str(&err));
        else
            fprintf(out, "%s: %s\n", cn->name, buf_str(&said));
        bad += report_rc ? rc != 0 : rc < 0;
        buf_free(&err);
        buf_free(&said);
    }
    strv_free(&args);
    return bad;
}

void guards_resolve(const struct config *c, struct cluster *cl, FILE *out)
{
    FILE *sink = fopen("/dev/null", "w");
    each(c, cl, "--resolve", sink ? sink : out, false);
    if (sink)
        fclose(sink);
}

int guards_stop(const struct config *c, struct cluster *cl, FILE *out)
{
    return each(c, cl, "--stop", out, false);
}

int guards_status(const struct config *c, struct cluster *cl, FILE *out)
{
    return each(c, cl, "--status", out, true);
}
