#include "snapshot.h"

#include "memsig.h"
#include "runtime.h"
#include "text.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int snapshot_marker(char *out, size_t outsz)
{
    unsigned char r[8];
    if (RAND_bytes(r, sizeof r) != 1 || outsz < 32)
        return -1;
    snprintf(out, outsz, "@@dsv41-%02x%02x%02x%02x%02x%02x%02x%02x@@", r[0], r[1], r[2], r[3],
             r[4], r[5], r[6], r[7]);
    return 0;
}

/* The values come as parameters: marker, /proc root, /sys root, runtime,
 * W ("lite" or "full"), then the container names. The small files are read
 * by the shell itself (f): a process started costs more than its reading
 * (#32: ~5 ms each on a loaded node, and a console asks every second). */
#define SNAPSHOT_SH_BODY                                                                           \
    "s() { printf '\\n%s %s\\n' \"$M\" \"$1\"; }\n"                                                  \
    "f() { while IFS= read -r l || [ -n \"$l\" ]; do printf '%s\\n' \"$l\"; done < \"$1\"; }\n"      \
    "s host; { read -r h < /proc/sys/kernel/hostname && echo \"$h\"; } 2>/dev/null || "            \
    "hostname 2>/dev/null || cat /etc/hostname\n"                                                 \
    "s meminfo; f \"$P/meminfo\"\n"                                                                \
    "s vmstat; grep '^oom_kill ' \"$P/vmstat\"\n"                                                   \
    "s psi; f \"$P/pressure/memory\" 2>/dev/null\n"                                               \
    "s page; echo \"$PG\"\n"                                                                       \
    "s buddy; f \"$P/buddyinfo\" 2>/dev/null\n"                                                    \
    "s gpu; nvidia-smi --query-gpu=" PROBE_GPU_QUERY                                               \
    " --format=csv,noheader,nounits 2>&1; r=$?; s gpu_rc; echo $r\n"                               \
    "s apps; [ $r = 0 ] && nvidia-smi --query-compute-apps=" PROBE_APPS_QUERY                      \
    " --format=csv,noheader,nounits 2>/dev/null\n"                                                 \
    "s rdma; " RDMA_SH_SYSFS                                                                       \
    "s ipv4; ip -o -4 addr show 2>/dev/null\n"                                                     \
    "if [ \"${W:-full}\" != lite ]; then s ct; o=$(" RUNTIME_SH_INSPECT " 2>&1); r=$?; "            \
    "printf '%s\\n' \"$o\"\n"                                                                       \
    "s ct_rc; echo $r; fi\n"                                                                       \
    "s end\n"

int snapshot_cmd(struct shcmd *c, const char *marker, const char *proc_root,
                 const char *sys_root, const char *runtime, int nranks, enum snapshot_mode mode)
{
    /* the page size once per run (a loop's session): a 4 MiB block's order */
    shcmd_script(c, "M=$1 P=$2 SYS=$3 RT=$4 W=$5; shift 5; NAMES=$*\n"
                    "PG=$(getconf PAGESIZE 2>/dev/null)\n");
    if (mode == SNAPSHOT_LOOP) /* one snapshot per line read; the loop dies with the channel */
        shcmd_script(c, "while read -r W; do\n" SNAPSHOT_SH_BODY "done\n");
    else
        shcmd_script(c, SNAPSHOT_SH_BODY);
    shcmd_arg(c, marker);
    shcmd_arg(c, proc_root);
    shcmd_arg(c, sys_root);
    shcmd_arg(c, runtime);
    shcmd_arg(c, mode == SNAPSHOT_LITE ? "lite" : "full");
    struct strv names = STRV_INIT;
    runtime_rank_names(&names, nranks);
    shcmd_args(c, &names);
    strv_free(&names);
    return c->failed ? -1 : 0;
}

/* Finds section `name`; returns a malloc'ed copy of its body or NULL. */
static char *section(const char *text, const char *marker, const char *name)
{
    size_t ml = strlen(marker), nl = strlen(name);
    const char *p = text;
    while ((p = strstr(p, marker))) {
        bool at_line = p == text || p[-1] == '\n';
        const char *q = p + ml;
        if (at_line && *q == ' ' && strncmp(q + 1, name, nl) == 0 && q[1 + nl] == '\n') {
            const char *body = q + 2 + nl;
            const char *end = body;
            for (;;) {
                end = strstr(end, marker);
                if (!end || end[-1] == '\n')
                    break;
                end++;
            }
            size_t len = end ? (size_t)(end - body) : strlen(body);
            char *r = malloc(len + 1);
            if (r) {
                memcpy(r, body, len);
                r[len] = '\0';
            }
            return r;
        }
        p = q;
    }
    return NULL;
}

static int container_line(const char *line, size_t len, void *ctx)
{
    struct snapshot *s = ctx;
    char tmp[512];
    if (!len || len >= sizeof tmp || s->ncont == SNAP_MAX_CONTAINERS)
        return 0;
    memcpy(tmp, line, len);
    tmp[len] = '\0';
    struct container_info c;
    if (inspect_parse_line(tmp, &c) == 0) {
        if (strncmp(c.name, "dsv41-r", 7) == 0)
            s->cont[s->ncont++] = c;
    } else if (strcasestr(tmp, "no such")) {
        s->ct_missing++; /* a rank that does not exist: not a runtime fault */
    } else if (!s->runtime_note[0]) {
        text_copy_field(s->runtime_note, sizeof s->runtime_note, line, len);
    }
    return 0;
}

void snapshot_apply_ct(struct snapshot *s, const char *ct, int code)
{
    s->ct_sampled = true;
    s->ct_missing = 0;
    s->ncont = 0;
    s->runtime_note[0] = '\0';
    memset(s->cont, 0, sizeof s->cont);
    probe_for_each_line(ct, container_line, s);
    /* inspect fails when a name is missing; that alone is fine */
    s->runtime_ok = code == 0 || (code != 127 && !s->runtime_note[0]);
    if (code == 127)
        snprintf(s->runtime_note, sizeof s->runtime_note,
                 "container runtime not found (install it or set RUNTIME)");
    else if (!s->runtime_ok && !s->runtime_note[0])
        snprintf(s->runtime_note, sizeof s->runtime_note, "runtime failed (exit %d)", code);
}

static int first_line(const char *text, char *out, size_t outsz)
{
    while (*text == '\n')
        text++;
    text_copy_field(out, outsz, text, strcspn(text, "\n"));
    return 0;
}

int snapshot_parse(const char *text, const char *marker, const struct rdma_override *ov,
                   struct snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->reachable = true;
    char *end = section(text, marker, "end");
    if (!end) {
        snprintf(s->error, sizeof s->error, "node sent a truncated snapshot");
        s->reachable = false;
        return -1;
    }
    free(end);
    char *v;
    if ((v = section(text, marker, "host"))) {
        first_line(v, s->hostname, sizeof s->hostname);
        free(v);
    }
    if ((v = section(text, marker, "meminfo"))) {
        s->mem_ok = probe_parse_meminfo(v, &s->mem) == 0;
        free(v);
    }
    if ((v = section(text, marker, "vmstat"))) {
        probe_parse_vmstat_oom(v, &s->oom_kill);
        free(v);
    }
    if ((v = section(text, marker, "psi"))) {
        struct memsig_psi psi;
        if (memsig_parse_psi(v, strlen(v), &psi) == 0) {
            s->psi_full = (struct pval){true, psi.full_avg10};
            s->psi_some = (struct pval){psi.some_ok, psi.some_avg10};
        }
        free(v);
    }
    char *page = section(text, marker, "page");
    int order = memsig_buddy_order(page ? atol(page) : 0); /* not said: 4 KiB */
    free(page);
    if ((v = section(text, marker, "buddy"))) {
        long blocks = memsig_parse_buddy(v, strlen(v), order);
        if (blocks >= 0)
            s->frag_blocks = (struct pval){true, (double)blocks};
        free(v);
    }
    char *rc = section(text, marker, "gpu_rc");
    char *gpu = section(text, marker, "gpu");
    if (rc && gpu) {
        int code = atoi(rc);
        if (code == 127)
            snprintf(s->gpu_note, sizeof s->gpu_note, "nvidia-smi not found");
        else if (code != 0) {
            char first[120];
            first_line(gpu, first, sizeof first);
            snprintf(s->gpu_note, sizeof s->gpu_note, "nvidia-smi failed: %s", first);
        } else {
            s->ngpu = probe_parse_gpu_csv(gpu, s->gpu, SNAP_MAX_GPUS);
            if (s->ngpu < 0) {
                s->ngpu = 0;
                snprintf(s->gpu_note, sizeof s->gpu_note, "nvidia-smi printed unreadable CSV");
            } else if (s->ngpu == 0) {
                snprintf(s->gpu_note, sizeof s->gpu_note, "no GPU listed by nvidia-smi");
            }
        }
    }
    free(rc);
    free(gpu);
    if ((v = section(text, marker, "apps"))) {
        int n = probe_parse_compute_apps(v, s->procs, SNAP_MAX_PROCS);
        s->nprocs = n < 0 ? 0 : n;
        free(v);
    }
    if ((v = section(text, marker, "ipv4"))) {
        s->naddrs = rdma_parse_ipv4(v, s->addrs, SNAP_MAX_ADDRS);
        free(v);
    }
    if ((v = section(text, marker, "rdma"))) {
        int n = rdma_parse_sysfs(v, s->ports, RDMA_MAX_PORTS);
        s->nports = n < 0 ? 0 : n;
        free(v);
    }
    rdma_resolve(s->ports, s->nports, s->addrs, s->naddrs);
    rdma_detect_fabric(s->ports, s->nports, s->addrs, s->naddrs, ov, &s->fabric);
    rc = section(text, marker, "ct_rc");
    char *ct = section(text, marker, "ct");
    if (rc && ct)
        snapshot_apply_ct(s, ct, atoi(rc));
    free(rc);
    free(ct);
    return 0;
}

int snapshot_collect(struct node *n, const char *runtime, int nranks,
                     const struct rdma_override *ov, int timeout_ms, struct snapshot *s)
{
    return snapshot_collect_opt(n, runtime, nranks, ov, timeout_ms, false, s);
}

/* NUL bytes from a file must not cut the text short of its frames. */
static void nul_to_qmark(struct buf *b)
{
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] == '\0')
            b->data[i] = '?';
}

int snapshot_collect_opt(struct node *n, const char *runtime, int nranks,
                         const struct rdma_override *ov, int timeout_ms, bool lite,
                         struct snapshot *s)
{
    if (!n->local)
        return snapshot_collect_script(n, runtime, nranks, ov, timeout_ms, lite, s);
    char marker[40];
    struct buf text = BUF_INIT;
    memset(s, 0, sizeof *s);
    int rc = snapshot_marker(marker, sizeof marker);
    if (rc == 0) {
        snapshot_local_text(n, runtime, nranks, lite, marker, &text);
        nul_to_qmark(&text);
        rc = snapshot_parse(buf_str(&text), marker, ov, s);
    } else {
        snprintf(s->error, sizeof s->error, "%s: no random bytes for the snapshot", n->name);
    }
    buf_free(&text);
    return rc;
}

int snapshot_collect_script(struct node *n, const char *runtime, int nranks,
                            const struct rdma_override *ov, int timeout_ms, bool lite,
                            struct snapshot *s)
{
    char marker[40];
    struct shcmd script = SHCMD_INIT;
    struct buf err = BUF_INIT;
    struct ssh_result res;
    memset(s, 0, sizeof *s);
    if (snapshot_marker(marker, sizeof marker) < 0 ||
        snapshot_cmd(&script, marker, n->proc_root, n->sys_root, runtime, nranks,
                     lite ? SNAPSHOT_LITE : SNAPSHOT_FULL) < 0) {
        snprintf(s->error, sizeof s->error, "%s: cannot build the sampling script", n->name);
        shcmd_free(&script);
        return -1;
    }
    int rc = node_run(n, &script, timeout_ms, &res, &err);
    if (rc < 0) {
        snprintf(s->error, sizeof s->error, "%s", buf_str(&err));
    } else {
        nul_to_qmark(&res.out);
        rc = snapshot_parse(buf_str(&res.out), marker, ov, s);
        if (rc < 0) {
            char why[320];
            text_clean(why, sizeof why, buf_str(&res.err), res.err.len);
            snprintf(s->error, sizeof s->error, "%s: sampling script failed: %s", n->name, why);
        }
        ssh_result_free(&res);
    }
    shcmd_free(&script);
    buf_free(&err);
    return rc;
}

const struct container_info *snapshot_rank_container(const struct snapshot *s, int rank)
{
    char want[16];
    snprintf(want, sizeof want, "dsv41-r%d", rank);
    for (int k = 0; k < s->ncont; k++)
        if (strcmp(s->cont[k].name, want) == 0)
            return &s->cont[k];
    return NULL;
}
