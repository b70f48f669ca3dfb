#include "drift.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fixstr.h"
#include "probe.h"
#include "shcmd.h"

static void take(const char *line, const char *key, char *out, size_t sz)
{
    size_t kl = strlen(key);
    if (strncmp(line, key, kl) == 0 && line[kl] == '=')
        text_copy_field(out, sz, line + kl + 1, strlen(line + kl + 1));
}

void drift_parse_env(const char *text, struct drift_start *d)
{
    memset(d, 0, sizeof *d);
    d->gid_index = -1;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        char line[400];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
        p += n + (p[n] == '\n');
        char gid[16] = "";
        take(line, "NCCL_SOCKET_IFNAME", d->ifname, sizeof d->ifname);
        take(line, "VLLM_HOST_IP", d->ipv4, sizeof d->ipv4);
        take(line, "NCCL_IB_HCA", d->hcas, sizeof d->hcas);
        take(line, "NCCL_IB_GID_INDEX", gid, sizeof gid);
        char *end;
        long g = gid[0] ? strtol(gid, &end, 10) : -1;
        if (gid[0] && !*end && g >= 0 && g < 1 << 16)
            d->gid_index = (int)g;
    }
    d->known = d->ipv4[0] || d->ifname[0] || d->gid_index >= 0;
}

bool drift_check(const struct drift_start *d, const struct rdma_fabric *now, char *why,
                 size_t whysz)
{
    why[0] = '\0';
    if (!d->known)
        return false;
    if (!now->ok) {
        snprintf(why, whysz, "the fabric the rank uses is gone: %s", now->why);
        return true;
    }
    size_t n = 0;
    /* a GID index that is not detected now was a guess at start too */
    if (d->gid_index >= 0 && now->gid_index >= 0 && now->gid_index != d->gid_index)
        fixstr_appendf(why, whysz, &n, "RoCE v2 IPv4 GID index %d -> %d", d->gid_index,
                       now->gid_index);
    if (d->ipv4[0] && strcmp(d->ipv4, now->ipv4) != 0)
        fixstr_appendf(why, whysz, &n, "%sIPv4 %s -> %s", n ? ", " : "", d->ipv4, now->ipv4);
    if (d->ifname[0] && strcmp(d->ifname, now->ifname) != 0)
        fixstr_appendf(why, whysz, &n, "%snetdev %s -> %s", n ? ", " : "", d->ifname,
                       now->ifname);
    if (d->hcas[0] && strcmp(d->hcas, now->hcas) != 0)
        fixstr_appendf(why, whysz, &n, "%sHCAs %s -> %s", n ? ", " : "", d->hcas, now->hcas);
    return n > 0;
}

int drift_read(const struct config *c, struct cluster_node *cn, const atomic_int *cancel,
               struct drift_start *d)
{
    memset(d, 0, sizeof *d);
    char dir[512];
    struct buf err = BUF_INIT;
    int rc = cluster_state_dir(c, cn, dir, sizeof dir, &err);
    if (rc == 0 && cn->node.local) {
        /* the file itself: no `cat` started (absent: nothing known, as cat's failure) */
        struct buf text = BUF_INIT;
        char path[600];
        snprintf(path, sizeof path, "%s/dsv41-r%d.env", dir, cn->rank);
        if (buf_read_file(&text, path, 1u << 20) == 0)
            drift_parse_env(buf_str(&text), d);
        buf_free(&text);
    } else if (rc == 0) {
        struct shcmd cmd = SHCMD_INIT;
        shcmd_script(&cmd, "cat -- \"$1/dsv41-r$2.env\"");
        shcmd_arg(&cmd, dir);
        shcmd_argf(&cmd, "%d", cn->rank);
        struct ssh_result res;
        rc = node_run_cancel(&cn->node, &cmd, 15000, cancel, &res, &err);
        if (rc == 0) {
            if (res.exit_status == 0)
                drift_parse_env(buf_str(&res.out), d);
            ssh_result_free(&res);
        }
        shcmd_free(&cmd);
    }
    buf_free(&err);
    return rc;
}
