/* helper: see helper.h. */
#include "helper.h"

#include <limits.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>
#include <unistd.h>

#include "dirs.h"
#include "text.h"

int helper_read(const char *name, struct buf *data, struct buf *why)
{
    char self[PATH_MAX];
    if (dirs_exe_dir(self, sizeof self) < 0) {
        buf_puts(why, "cannot find the running binary");
        return -1;
    }
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/%s", self, name);
    int rc = buf_read_file(data, buf_str(&path), 64u << 20);
    if (rc < 0 || data->len < 1024)
        buf_printf(why, "%s is missing: build it with `make` or install it beside dsv41-top",
                   buf_str(&path));
    buf_free(&path);
    return rc < 0 || data->len < 1024 ? -1 : 0;
}

const char *helper_elf_machine(const struct buf *data)
{
    static const unsigned char magic[4] = {0x7f, 'E', 'L', 'F'};
    if (data->len < 20 || memcmp(data->data, magic, 4) != 0)
        return NULL;
    const unsigned char *h = (const unsigned char *)data->data;
    /* e_machine: 2 bytes at offset 18, in the file's byte order (EI_DATA) */
    unsigned m = h[5] == 2 ? (unsigned)(h[18] << 8 | h[19]) : (unsigned)(h[19] << 8 | h[18]);
    switch (m) {
    case 62: /* EM_X86_64 */
        return "x86_64";
    case 183: /* EM_AARCH64 */
        return "aarch64";
    case 3: /* EM_386 */
        return "i686";
    case 40: /* EM_ARM */
        return "armv7l";
    default:
        return "another CPU";
    }
}

int helper_check_machine(const char *node, const char *uname_m, const char *name,
                         const struct buf *data, struct buf *err)
{
    const char *elf = helper_elf_machine(data);
    if (!uname_m[0]) /* no uname on the node: the helper's own start will tell */
        return 0;
    /* uname -m says arm64 on some systems (BSD, macOS) for what Linux calls aarch64 */
    const char *m = strcmp(uname_m, "arm64") == 0 ? "aarch64" : uname_m;
    if (elf && strcmp(elf, m) == 0)
        return 0;
    if (!elf)
        buf_printf(err, "%s: the helper %s found next to this program is not an ELF program: "
                        "rebuild it with `make`", node, name);
    else
        buf_printf(err, "%s is %s, but the helper %s found next to this program is built for "
                        "%s: run this program on a node of the workers' kind, or build the "
                        "helpers for it (%s) and put them next to this program",
                   node, m, name, elf,
                   strcmp(m, "aarch64") == 0 ? "`make aarch64`: build-aarch64/" : "`make` there");
    return -1;
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

void helper_sha256_hex(const struct buf *data, char hex[65])
{
    unsigned char d[32];
    hex[0] = '\0';
    if (EVP_Digest(data->data, data->len, d, NULL, EVP_sha256(), NULL))
        for (int i = 0; i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int helper_send(struct cluster_node *cn, const char *state_dir, const char *name,
                const struct buf *data, struct buf *tmp, struct buf *err)
{
    /* a name of its own: two nodes that share a home (NFS) install into
     * one directory at once (launch starts every node's guard together) */
    unsigned char r[6] = {0};
    if (RAND_bytes(r, sizeof r) != 1) {
        buf_printf(err, "%s: cannot make a name for the copy of %s: no random bytes", cn->name,
                   name);
        return -1;
    }
    buf_printf(tmp, "%s/bin/%s.new-%02x%02x%02x%02x%02x%02x", state_dir, name, r[0], r[1], r[2],
               r[3], r[4], r[5]);
    return node_put(&cn->node, buf_str(tmp), data->data, data->len, 0700, err);
}

int helper_install(struct cluster_node *cn, const char *state_dir, const char *name,
                   const struct buf *data, struct buf *path, struct buf *err)
{
    struct buf dir = BUF_INIT, tmp = BUF_INIT;
    struct shcmd cmd = SHCMD_INIT;
    buf_printf(&dir, "%s/bin", state_dir);
    buf_printf(path, "%s/%s", buf_str(&dir), name);
    /* the directory made, the node's machine, and the sha256 of the copy
     * there, in one round trip: a helper that is there already is not sent
     * again, and one built for another CPU is not sent at all */
    char hex[65];
    helper_sha256_hex(data, hex);
    shcmd_script(&cmd, "umask 077 && mkdir -p -- \"$1\" 2>&1 || exit 3; uname -m; "
                       "[ -f \"$2\" ] && [ ! -L \"$2\" ] && sha256sum -- \"$2\" 2>/dev/null; exit 0");
    shcmd_arg(&cmd, buf_str(&dir));
    shcmd_arg(&cmd, buf_str(path));
    struct ssh_result res;
    int rc = node_run(&cn->node, &cmd, 30000, &res, err);
    shcmd_free(&cmd);
    bool there = false;
    if (rc == 0) {
        if (res.exit_status != 0) {
            buf_printf(err, "%s: cannot make its bin directory: ", cn->name);
            text_one_line(err, res.out.len ? buf_str(&res.out) : buf_str(&res.err),
                          res.out.len ? res.out.len : res.err.len, 300);
            rc = -1;
        }
        const char *out = buf_str(&res.out), *nl = strchr(out, '\n');
        char machine[32] = "";
        snprintf(machine, sizeof machine, "%.*s", nl ? (int)(nl - out) : 0, out);
        const char *sum = nl ? nl + 1 : "";
        there = hex[0] && strlen(sum) >= 64 && memcmp(sum, hex, 64) == 0;
        if (rc == 0 && helper_check_machine(cn->name, machine, name, data, err) < 0)
            rc = -1;
        ssh_result_free(&res);
    }
    if (rc == 0 && !there)
        rc = helper_send(cn, state_dir, name, data, &tmp, err);
    if (rc == 0 && !there) {
        shcmd_script(&cmd, "mv -f -- \"$1\" \"$2\" 2>&1 || { rm -f -- \"$1\"; exit 1; }");
        shcmd_arg(&cmd, buf_str(&tmp));
        shcmd_arg(&cmd, buf_str(path));
        rc = run_ok(cn, &cmd, "install the helper", err);
    }
    buf_free(&dir);
    buf_free(&tmp);
    return rc;
}
