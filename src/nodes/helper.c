/* helper: see helper.h. */
#include "helper.h"

#include <limits.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

int helper_read(const char *name, struct buf *data, struct buf *why)
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
    buf_printf(&path, "%.*s/%s", slash ? (int)(slash - self) : 0, self, name);
    int rc = buf_read_file(data, buf_str(&path), 64u << 20);
    if (rc < 0 || data->len < 1024)
        buf_printf(why, "%s is missing: build it with `make` or install it beside dsv41-top",
                   buf_str(&path));
    buf_free(&path);
    return rc < 0 || data->len < 1024 ? -1 : 0;
}

/* A short command on the node that must exit 0. */
static int run_ok(struct cluster_node *cn, struct shcmd *cmd, const char *what, struct buf *err)
{
    struct ssh_result res;
    int rc = node_run(&cn->node, cmd, 30000, &res, err);
    shcmd_free(cmd);
    if (rc < 0)
        return -1;
    rc = res.exit_status == 0 ? 0 : -1;
    if (rc) {
        buf_printf(err, "%s: cannot %s: ", cn->name, what);
        text_one_line(err, res.out.len ? buf_str(&res.out) : buf_str(&res.err),
                      res.out.len ? res.out.len : res.err.len, 300);
    }
    ssh_result_free(&res);
    return rc;
}

/* True when the node's copy at path is data already (its sha256, asked
 * over ssh): the push of a few MB is skipped. Any doubt says no. */
static bool same_there(struct cluster_node *cn, const char *path, const struct buf *data)
{
    unsigned char d[32];
    char hex[65];
    if (!EVP_Digest(data->data, data->len, d, NULL, EVP_sha256(), NULL))
        return false;
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "[ -f \"$1\" ] && [ ! -L \"$1\" ] && exec sha256sum -- \"$1\" 2>/dev/null");
    shcmd_arg(&cmd, path);
    struct ssh_result res;
    struct buf err = BUF_INIT;
    bool same = false;
    if (node_run(&cn->node, &cmd, 30000, &res, &err) == 0) {
        same = res.exit_status == 0 && res.out.len >= 64 && memcmp(res.out.data, hex, 64) == 0;
        ssh_result_free(&res);
    }
    shcmd_free(&cmd);
    buf_free(&err);
    return same;
}

int helper_install(struct cluster_node *cn, const char *state_dir, const char *name,
                   const struct buf *data, struct buf *path, struct buf *err)
{
    struct buf dir = BUF_INIT, tmp = BUF_INIT;
    struct shcmd cmd = SHCMD_INIT;
    buf_printf(&dir, "%s/bin", state_dir);
    buf_printf(path, "%s/%s", buf_str(&dir), name);
    buf_printf(&tmp, "%s.new", buf_str(path));
    if (same_there(cn, buf_str(path), data)) {
        buf_free(&dir);
        buf_free(&tmp);
        return 0;
    }
    shcmd_script(&cmd, "umask 077 && exec mkdir -p -- \"$1\" 2>&1");
    shcmd_arg(&cmd, buf_str(&dir));
    int rc = run_ok(cn, &cmd, "make its bin directory", err);
    if (rc == 0)
        rc = node_put(&cn->node, buf_str(&tmp), data->data, data->len, 0700, err);
    if (rc == 0) {
        shcmd_script(&cmd, "exec mv -f -- \"$1\" \"$2\" 2>&1");
        shcmd_arg(&cmd, buf_str(&tmp));
        shcmd_arg(&cmd, buf_str(path));
        rc = run_ok(cn, &cmd, "install the helper", err);
    }
    buf_free(&dir);
    buf_free(&tmp);
    return rc;
}
