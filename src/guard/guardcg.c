/* The ranks' cgroups: a second kill path that needs no runtime CLI. Under
 * cgroup v2 (kernel >= 5.14) writing "1" to a cgroup's cgroup.kill SIGKILLs
 * every process in it at once, the children a rank forked included, where
 * the pidfd reaches the rank's main process only. The file is opened when
 * the ranks are resolved, so the kill path does one write per rank and no
 * path lookup.
 *
 * A cgroup is used only when it is a container's (a path component is the
 * container's ID, bare or in a runtime's scope name, at most one level
 * above the leaf) and does not hold the guard itself:
 * on a cgroup v1 host (this test machine's podman, cgroupfs) a rank's v2
 * path is its parent's session scope, which must never be killed. */
#include "guard.h"
#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The cgroup v2 path ("0::/x/y") in a /proc/PID/cgroup text, whole and
 * newline-ended; "" none (a cut line could name a parent). */
static void v2_path(const char *text, char *out, size_t sz)
{
    out[0] = '\0';
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        if (n > 3 && strncmp(l, "0::", 3) == 0 && l[n] == '\n' && n - 3 < sz) {
            snprintf(out, sz, "%.*s", (int)(n - 3), l + 3);
            return;
        }
        l += n + (l[n] == '\n');
    }
}

/* One path component that is a container's own: its 64-hex ID, bare
 * (cgroupfs: /docker/<id>) or as a runtime's scope (docker-<id>.scope,
 * libpod-<id>.scope, crio-<id>.scope, cri-containerd-<id>.scope). A
 * runtime's service (containerd.service) or slice is no container. */
static bool hex64(const char *c)
{
    for (int k = 0; k < 64; k++)
        if (!((c[k] >= '0' && c[k] <= '9') || (c[k] >= 'a' && c[k] <= 'f')))
            return false;
    return true;
}

static bool container_component(const char *c, size_t n)
{
    if (n == 64)
        return hex64(c);
    static const char *const pre[] = {"docker-", "libpod-", "crio-", "cri-containerd-"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
        size_t pl = strlen(pre[i]);
        if (strncmp(c, pre[i], pl) != 0)
            continue;
        bool scope = n == pl + 64 + 6 && memcmp(c + pl + 64, ".scope", 6) == 0;
        if ((scope || n == pl + 64) && hex64(c + pl))
            return true;
    }
    return false;
}

/* The path has a container's component, with at most a leaf of the
 * runtime's below it (podman: libpod-<id>.scope/container), and no "..". */
static bool names_a_container(const char *path)
{
    int depth_below = -1;
    for (const char *c = path; *c;) {
        while (*c == '/')
            c++;
        size_t n = strcspn(c, "/");
        if (!n)
            break;
        if ((n == 2 && memcmp(c, "..", 2) == 0) || (n == 1 && *c == '.'))
            return false;
        if (container_component(c, n))
            depth_below = 0;
        else if (depth_below >= 0)
            depth_below++;
        c += n;
    }
    return depth_below == 0 || depth_below == 1;
}

/* Where cgroup2 is mounted, from mountinfo; "" none. */
static void v2_mount(char *out, size_t sz)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *sep = strstr(line, " - cgroup2 ");
        char root[512], mnt[512];
        /* id parent major:minor root mountpoint ...: the whole hierarchy's
         * mount (root "/"), not a bind of a part of it */
        if (sep && sscanf(line, "%*s %*s %*s %511s %511s", root, mnt) == 2 &&
            strcmp(root, "/") == 0) {
            snprintf(out, sz, "%s", mnt);
            break;
        }
    }
    fclose(f);
}

int guard_cgroup_open(const struct guard *g, pid_t pid, int pidfd, char *why, size_t whysz)
{
    char path[1100], text[8192], cg[512], self[512] = "";
    if (pidfd < 0) {
        snprintf(why, whysz, "the rank's process is gone");
        return -1;
    }
    snprintf(path, sizeof path, "%s/%ld/cgroup", g->o.proc_root, (long)pid);
    if (buf_read_small(path, text, sizeof text) < 0) {
        snprintf(why, whysz, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    v2_path(text, cg, sizeof cg);
    /* the number read is still the rank's: its pidfd says it lives, so the
     * file read was not a newer process's */
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
        snprintf(why, whysz, "the rank's process is gone");
        return -1;
    }
    if (buf_read_small("/proc/self/cgroup", text, sizeof text) == 0)
        v2_path(text, self, sizeof self);
    size_t cl = strlen(cg);
    if (!cg[0] || strcmp(cg, "/") == 0 || !names_a_container(cg)) {
        snprintf(why, whysz, "no container cgroup of its own (cgroup v2 path '%s')", cg);
        return -1;
    }
    if (strncmp(self, cg, cl) == 0 && (self[cl] == '\0' || self[cl] == '/')) {
        snprintf(why, whysz, "its cgroup %s holds the guard too", cg);
        return -1;
    }
    char root[512];
    if (g->o.cg_root[0])
        snprintf(root, sizeof root, "%s", g->o.cg_root);
    else
        v2_mount(root, sizeof root);
    if (!root[0]) {
        snprintf(why, whysz, "no cgroup2 mount");
        return -1;
    }
    snprintf(path, sizeof path, "%s%s/cgroup.kill", root, cg);
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        snprintf(why, whysz, "cannot open %s: %s%s", path, strerror(errno),
                 errno == ENOENT   ? " (a kernel before 5.14?)"
                 : errno == EACCES ? " (the guard runs as a user that may not kill it)"
                                   : "");
    return fd;
}

bool guard_cgroup_kill(int fd)
{
    return fd >= 0 && pwrite(fd, "1", 1, 0) == 1;
}
