#include "guards.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GUARD_BIN "dsv41-guard"

/* dsv41-guard beside the running dsv41-top (the build dir, or PREFIX/bin). */
static int local_guard_binary(struct buf *data, struct buf *why)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        buf_puts(why, "cannot find the running binary");
        return -1;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    struct buf path = BUF_INIT;
    buf_printf(&path, "%.*s/%s", slash ? (int)(slash - self) : 0, self, GUARD_BIN);
    int rc = buf_read_file(data, buf_str(&path), 64u << 20);
    if (rc < 0 || data->len < 1024)
        buf_printf(why, "%s is missing: build it with `make` or install it beside dsv41-top",
                   buf_str(&path));
    buf_free(&path);
    return rc < 0 || data->len < 1024 ? -1 : 0;
}

static int run_guard(struct cluster_node *cn, const char *state_dir, const char *args,
                     struct buf *out, struct buf *err)
{
    struct buf cmd = BUF_INIT;
    buf_shell_quote(&cmd, state_dir);
    buf_printf(&cmd, "/bin/%s --state-dir ", GUARD_BIN);
    buf_shell_quote(&cmd, state_dir);
    buf_printf(&cmd, " %s 2>&1", args);
    struct ssh_result res;
    int rc = node_run(&cn->node, buf_str(&cmd), 30000, &res, err);
    buf_free(&cmd);
    if (rc == 0) {
        char line[400];
        probe_copy_field(line, sizeof line, buf_str(&res.out), strcspn(buf_str(&res.out), "\n"));
        buf_puts(out, line);
        rc = res.exit_status;
        ssh_result_free(&res);
    }
    return rc;
}

/* Installs and starts the guard on one node; 0 when it runs (or already did). */
static int start_one(const struct config *c, struct cluster_node *cn, int nranks,
                     const char *state_dir, const struct buf *bin, FILE *out)
{
    int bad = 0;
    struct buf dir = BUF_INIT, path = BUF_INIT, err = BUF_INIT, said = BUF_INIT, args = BUF_INIT;
    buf_printf(&dir, "%s/bin", state_dir);
    buf_printf(&path, "%s/%s", buf_str(&dir), GUARD_BIN);
    struct buf mk = BUF_INIT;
    buf_puts(&mk, "umask 077; mkdir -p ");
    buf_shell_quote(&mk, buf_str(&dir));
    struct ssh_result res;
    bool ok = node_run(&cn->node, buf_str(&mk), 30000, &res, &err) == 0;
    if (ok)
        ssh_result_free(&res);
    /* the binary goes in under another name and is renamed over (a
     * running executable cannot be written, but it can be replaced);
     * then the old guard stops (its floor may differ; a console's guard
     * lets go), which also works on a first launch with no binary yet */
    struct buf old = BUF_INIT, tmp = BUF_INIT, mv = BUF_INIT;
    buf_printf(&tmp, "%s.new", buf_str(&path));
    ok = ok && node_put(&cn->node, buf_str(&tmp), bin->data, bin->len, 0700, &err) == 0;
    buf_puts(&mv, "mv -f ");
    buf_shell_quote(&mv, buf_str(&tmp));
    buf_puts(&mv, " ");
    buf_shell_quote(&mv, buf_str(&path));
    if (ok && node_run(&cn->node, buf_str(&mv), 30000, &res, &err) == 0) {
        ok = res.exit_status == 0;
        if (!ok)
            buf_printf(&err, "%s: cannot install %s", cn->name, buf_str(&path));
        ssh_result_free(&res);
    } else {
        ok = false;
    }
    if (ok)
        run_guard(cn, state_dir, "--stop", &old, &err);
    buf_free(&old);
    buf_free(&tmp);
    buf_free(&mv);
    buf_printf(&args, "--runtime %s --ranks %d --floor %s --proc-root ",
               config_get(c, "RUNTIME"), nranks, config_get(c, "MEMGUARD_GIB"));
    buf_shell_quote(&args, cn->node.proc_root);
    buf_puts(&args, " --daemon");
    int rc = ok ? run_guard(cn, state_dir, buf_str(&args), &said, &err) : -1;
    if (rc == 0) {
        fprintf(out, "%s: memory guard up: %s\n", cn->name, buf_str(&said));
    } else if (ok && strstr(buf_str(&said), "another guard is running")) {
        fprintf(out, "%s: memory guard already running\n", cn->name);
    } else {
        fprintf(out, "%s: cannot start the memory guard: %s%s\n", cn->name, buf_str(&err),
                buf_str(&said));
        bad++;
    }
    buf_free(&mk);
    buf_free(&dir);
    buf_free(&path);
    buf_free(&err);
    buf_free(&said);
    buf_free(&args);
    return bad;
}

int guards_start_node(const struct config *c, struct cluster *cl, int i, const char *state_dir,
                      FILE *out)
{
    struct buf bin = BUF_INIT, why = BUF_INIT;
    int bad = 1;
    if (local_guard_binary(&bin, &why) < 0)
        fprintf(out, "head: no memory guard: %s\n", buf_str(&why));
    else
        bad = start_one(c, &cl->nodes[i], cl->n, state_dir, &bin, out);
    buf_free(&bin);
    buf_free(&why);
    return bad;
}

int guards_start(const struct config *c, struct cluster *cl, char (*state_dirs)[512], FILE *out)
{
    struct buf bin = BUF_INIT, why = BUF_INIT;
    if (local_guard_binary(&bin, &why) < 0) {
        fprintf(out, "head: no memory guard: %s\n", buf_str(&why));
        buf_free(&why);
        return cl->n;
    }
    int bad = 0;
    for (int i = 0; i < cl->n; i++)
        bad += start_one(c, &cl->nodes[i], cl->n, state_dirs[i], &bin, out);
    buf_free(&bin);
    buf_free(&why);
    return bad;
}

static int each(const struct config *c, struct cluster *cl, const char *args, FILE *out,
                bool report_rc)
{
    int bad = 0;
    for (int i = 0; i < cl->n; i++) {
        struct cluster_node *cn = &cl->nodes[i];
        if (!cn->configured)
            continue;
        char dir[512];
        struct buf err = BUF_INIT, said = BUF_INIT;
        int rc = cluster_state_dir(c, cn, dir, sizeof dir, &err);
        if (rc == 0)
            rc = run_guard(cn, dir, args, &said, &err);
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
