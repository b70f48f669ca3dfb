/* The ranks' cgroups: a second kill path that needs no runtime CLI. Under
 * cgroup v2 (kernel >= 5.14) writing "1" to a cgroup's cgroup.kill SIGKILLs
 * every process in it at once, the children a rank forked included, where
 * the pidfd reaches the rank's main process only. The file is opened when
 * the ranks are resolved, so the kill path does one write per rank and no
 * path lookup.
 *
 * A cgroup is used only when it is a container's (a path component names
 * docker, libpod, containerd or crio) and does not hold the guard itself:
 * on a cgroup v1 host (this test machine's podman, cgroupfs) a rank's v2
 * path is its parent's session scope, which must never be killed. */
#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The cgroup v2 path ("0::/x/y") in a /proc/PID/cgroup text; "" none. */
static void v2_path(const char *text, char *out, size_t sz)
{
    out[0] = '\0';
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        if (n > 3 && strncmp(l, "0::", 3) == 0) {
            snprintf(out, sz, "%.*s", (int)(n - 3), l + 3);
            return;
        }
        l += n + (l[n] == '\n');
    }
}

static int read_text(const char *path, char *buf, size_t sz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sz - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

static bool names_a_container(const char *path)
{
    static const char *const words[] = {"docker", "libpod", "containerd", "crio"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(path, words[i]))
            return true;
    return false;
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
        char mnt[512];
        /* id parent major:minor root mountpoint ... */
        if (sep && sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
            snprintf(out, sz, "%s", mnt);
            break;
        }
    }
    fclose(f);
}

int guard_cgroup_open(const struct guard *g, pid_t pid, char *why, size_t whysz)
{
    char path[1100], text[2048], cg[512], self[512] = "";
    snprintf(path, sizeof path, "%s/%ld/cgroup", g->o.proc_root, (long)pid);
    if (read_text(path, text, sizeof text) < 0) {
        snprintf(why, whysz, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    v2_path(text, cg, sizeof cg);
    if (read_text("/proc/self/cgroup", text, sizeof text) == 0)
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
