/* The local node's snapshot from its files directly: the same framed text
 * the sampling script prints (so one parser serves both). The GPU comes
 * through NVML (nvidia-smi only where the library is not there); in a full
 * sample the runtime CLI runs as a command. The
 * console samples its own node every second; a shell and half a dozen
 * processes per sample were most of its idle cost. */
#include "snapshot.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "engine_at.h"
#include "nvml.h"
#include "runtime.h"

/* One inspect through the socket: a sample waits no longer (the engine
 * answers in milliseconds; one that hangs leaves the CLI to try) */
#define SNAP_ENGINE_MS 2000

static void section(struct buf *out, const char *marker, const char *name)
{
    buf_printf(out, "\n%s %s\n", marker, name);
}

static void file_into(struct buf *out, const char *root, const char *name, const char *only)
{
    struct buf path = BUF_INIT, text = BUF_INIT;
    buf_printf(&path, "%s/%s", root, name);
    if (buf_read_file(&text, buf_str(&path), 1 << 20) == 0) {
        if (!only) {
            buf_puts(out, buf_str(&text));
        } else { /* the lines that start with `only`, as grep '^only' */
            size_t ol = strlen(only);
            for (const char *p = buf_str(&text); *p;) {
                size_t n = strcspn(p, "\n");
                if (n >= ol && memcmp(p, only, ol) == 0) {
                    buf_append(out, p, n);
                    buf_puts(out, "\n");
                }
                p += n + (p[n] == '\n');
            }
        }
    }
    buf_free(&path);
    buf_free(&text);
}

/* True when cmd is an executable in PATH (no shell forked to learn it). */
static bool in_path(const char *cmd)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%.*s/%s", (int)n, p, cmd);
        if (n && access(full, X_OK) == 0)
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/* Runs cmd and appends its output (stderr too unless quiet); returns its
 * exit status (127: not run). */
static int run_into(struct buf *out, const struct shcmd *cmd, bool quiet)
{
    struct ssh_result res;
    struct buf err = BUF_INIT;
    int code = 127;
    if (node_run_local(cmd, 30000, 1 << 20, &res, &err) == 0) {
        buf_puts(out, buf_str(&res.out));
        if (!quiet)
            buf_puts(out, buf_str(&res.err));
        code = res.exit_status;
        ssh_result_free(&res);
    }
    buf_free(&err);
    return code;
}

static int smi_into(struct buf *out, const char *query, bool quiet)
{
    struct shcmd c = SHCMD_INIT;
    shcmd_exec(&c, "nvidia-smi", query, "--format=csv,noheader,nounits", (char *)NULL);
    int rc = run_into(out, &c, quiet);
    shcmd_free(&c);
    return rc;
}

static void ipv4_into(struct buf *out)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
            continue;
        char a[INET_ADDRSTRLEN];
        const struct sockaddr_in *sa = (const struct sockaddr_in *)(void *)i->ifa_addr;
        const struct sockaddr_in *nm = (const struct sockaddr_in *)(void *)i->ifa_netmask;
        if (!inet_ntop(AF_INET, &sa->sin_addr, a, sizeof a))
            continue;
        int prefix = __builtin_popcount(ntohl(nm->sin_addr.s_addr));
        buf_printf(out, "%s %s/%d\n", i->ifa_name, a, prefix);
    }
    freeifaddrs(ifs);
}

/* The ranks through the engine's API socket: the lines inspect would print
 * (one per rank; "no such container" for one that is not there) and its
 * exit status in *code. -1 when the socket does not answer the first
 * question: the CLI then runs, as before. */
static int engine_into(struct buf *out, const char *sock, const struct strv *names, int *code)
{
    struct buf lines = BUF_INIT, err = BUF_INIT;
    *code = 0;
    for (int i = 0; i < names->n; i++) {
        struct container_info c;
        buf_reset(&err);
        int r = engine_inspect(sock, names->v[i], SNAP_ENGINE_MS, &c, &err);
        if (r == -1 && i == 0) {
            buf_free(&lines);
            buf_free(&err);
            return -1;
        }
        if (engine_ct_line(&lines, names->v[i], r, &c, &err))
            *code = 1;
    }
    buf_puts(out, buf_str(&lines));
    buf_free(&lines);
    buf_free(&err);
    return 0;
}

int snapshot_local_text(const struct node *n, const char *runtime, int nranks, bool lite,
                        const char *marker, struct buf *out)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    section(out, marker, "host");
    buf_printf(out, "%s\n", host);
    section(out, marker, "meminfo");
    file_into(out, n->proc_root, "meminfo", NULL);
    section(out, marker, "vmstat");
    file_into(out, n->proc_root, "vmstat", "oom_kill ");
    section(out, marker, "psi");
    file_into(out, n->proc_root, "pressure/memory", NULL);
    section(out, marker, "page");
    buf_printf(out, "%ld\n", sysconf(_SC_PAGESIZE));
    section(out, marker, "buddy");
    file_into(out, n->proc_root, "buddyinfo", NULL);
    section(out, marker, "gpu");
    /* NVML in this process first: microseconds, no child; nvidia-smi where
     * the library is not there */
    struct buf gpu = BUF_INIT, apps = BUF_INIT, why = BUF_INIT;
    bool nvml = nvml_gpu_csv(&gpu, &why) == 0 && nvml_apps_csv(&apps, &why) == 0;
    int rc = 127;
    if (nvml) {
        buf_puts(out, buf_str(&gpu));
        rc = 0;
    } else if (in_path("nvidia-smi")) {
        rc = smi_into(out, "--query-gpu=" PROBE_GPU_QUERY, false);
    } else {
        buf_puts(out, "nvidia-smi: not found\n");
    }
    section(out, marker, "gpu_rc");
    buf_printf(out, "%d\n", rc);
    section(out, marker, "apps");
    if (nvml)
        buf_puts(out, buf_str(&apps));
    else if (rc == 0)
        smi_into(out, "--query-compute-apps=" PROBE_APPS_QUERY, true);
    buf_free(&gpu);
    buf_free(&apps);
    buf_free(&why);
    section(out, marker, "rdma");
    rdma_collect_local(n->sys_root, out);
    section(out, marker, "ipv4");
    ipv4_into(out);
    if (!lite) {
        struct shcmd cmd = SHCMD_INIT;
        struct strv names = STRV_INIT;
        runtime_rank_names(&names, nranks);
        runtime_cmd_inspect(&cmd, runtime, &names);
        section(out, marker, "ct");
        int code;
        if (!n->engine_sock[0] || engine_into(out, n->engine_sock, &names, &code) < 0)
            code = run_into(out, &cmd, false);
        strv_free(&names);
        section(out, marker, "ct_rc");
        buf_printf(out, "%d\n", code);
        shcmd_free(&cmd);
    }
    section(out, marker, "end");
    return 0;
}
