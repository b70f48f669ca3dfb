#include "guard.h"
#include "guardout.h"
#include "procid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "engine.h"
#include "fixstr.h"
#include "mono.h"

#define FILL_KIB_PER_S (6000L * 1024) /* earlyoom's assumed worst fill rate */
#define POLL_MIN_MS 2

void guard_log(struct guard *g, const char *fmt, ...)
{
    char line[512];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    size_t n = strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S ", &tm);
    /* the node's name: a shared STATE_DIR holds several nodes' lines */
    char host[65] = "";
    gethostname(host, sizeof host - 1);
    /* one byte kept for the newline */
    fixstr_appendf(line, sizeof line - 1, &n, "%.40s ", host[0] ? host : "node");
    va_list ap;
    va_start(ap, fmt);
    fixstr_vappendf(line, sizeof line - 1, &n, fmt, ap);
    va_end(ap);
    line[n++] = '\n';
    guardout_log(g, line, n); /* never waits on STATE_DIR */
    snprintf(g->lastevent, sizeof g->lastevent, "%.*s", (int)(n - 1), line);
    g->events++;
}

long guard_parse_available(const char *t, size_t len)
{
    static const char key[] = "MemAvailable:";
    for (size_t i = 0; i + sizeof key - 1 < len; i++) {
        if ((i == 0 || t[i - 1] == '\n') && memcmp(t + i, key, sizeof key - 1) == 0) {
            size_t p = i + sizeof key - 1;
            while (p < len && t[p] == ' ')
                p++;
            long v = 0;
            bool any = false;
            while (p < len && t[p] >= '0' && t[p] <= '9' && v < 1L << 50) {
                v = v * 10 + (t[p++] - '0');
                any = true;
            }
            return any ? v : -1;
        }
    }
    return -1;
}

void guard_opts_defaults(struct guard_opts *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->proc_root, sizeof o->proc_root, "/proc");
    o->floor_kib = 1L << 20;
    o->warn_kib = 4L << 20;
    o->psi_warn = 10;
    o->psi_kill = 60;
    o->frag_warn = 16;
    o->kmsg_warn = 1;
    o->trace_kib = 10L << 20;
    o->rearm_kib = 512L << 10;
    o->resolve_s = 2;
    o->nranks = 2;
}

int guard_parse_gib(const char *s, long *kib)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* !(v > 0) also refuses NaN; the bound keeps the product in a long */
    if (!*s || *end || errno || !(v > 0) || v > GUARD_MAX_GIB)
        return -1;
    *kib = (long)(v * 1048576);
    return *kib > 0 ? 0 : -1;
}

bool guard_runtime_ok(const char *rt)
{
    return strcmp(rt, "docker") == 0 || strcmp(rt, "podman") == 0;
}

void guard_file(const char *state_dir, const char *kind, char *out, size_t sz)
{
    char host[65] = "";
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        snprintf(host, sizeof host, "node");
    snprintf(out, sz, "%s/guard.%s.%s", state_dir, host, kind);
}

static int open_kind(const char *dir, const char *kind, int flags, mode_t mode)
{
    char path[768];
    guard_file(dir, kind, path, sizeof path);
    return open(path, flags | O_CLOEXEC, mode);
}

static int open_in(const char *dir, const char *name, int flags, mode_t mode)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return open(path, flags | O_CLOEXEC, mode);
}

int guard_open(struct guard *g, const struct guard_opts *o, char *err, size_t errsz)
{
    memset(g, 0, sizeof *g);
    g->o = *o;
    g->meminfo_fd = g->log_fd = g->hb_fd = g->lock_fd = -1;
    g->sig.psi_fd = g->sig.buddy_fd = g->sig.kmsg_fd = -1;
    for (int i = 0; i < GUARD_MAX_RANKS; i++)
        g->pidfds[i] = g->cgkill_fds[i] = -1;
    g->armed = g->psi_armed = true;
    g->last_avail_kib = -1;
    mkdir(o->state_dir, 0700);
    g->lock_fd = open_kind(o->state_dir, "lock", O_RDWR | O_CREAT, 0600);
    if (g->lock_fd < 0 || flock(g->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        char lp[768];
        guard_file(o->state_dir, "lock", lp, sizeof lp);
        snprintf(err, errsz, "%s: %s", lp,
                 e == EWOULDBLOCK ? "another guard is running on this node" : strerror(e));
        guard_close(g);
        errno = e;
        return -1;
    }
    /* the lock file names its holder, for `guard --stop`: its PID, and when
     * and in which boot it started, so that a stale file never names a
     * stranger who got the number since (procid.h) */
    struct procid me;
    char idf[96] = "", pid[160];
    if (procid_of(getpid(), "/proc", &me) == 0)
        procid_format(&me, idf, sizeof idf);
    int pl = snprintf(pid, sizeof pid, "%ld%s%s\n", (long)getpid(),
                      o->embedded ? " console" : o->systemd ? " systemd" : "", idf);
    if (ftruncate(g->lock_fd, 0) < 0 || pwrite(g->lock_fd, pid, (size_t)pl, 0) != pl) {
        /* the lock still holds; --stop will not find the PID */
    }
    char path[512];
    snprintf(path, sizeof path, "%s/meminfo", o->proc_root);
    g->meminfo_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (g->meminfo_fd < 0) {
        snprintf(err, errsz, "cannot open %s: %s", path, strerror(errno));
        guard_close(g);
        return -1;
    }
    g->log_fd = open_in(o->state_dir, "memguard.log", O_WRONLY | O_CREAT | O_APPEND, 0600);
    g->hb_fd = open_kind(o->state_dir, "heartbeat", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (g->log_fd < 0 || g->hb_fd < 0) {
        snprintf(err, errsz, "cannot write in %s: %s", o->state_dir, strerror(errno));
        guard_close(g);
        return -1;
    }
    /* from here on the sampling thread writes nothing itself (guardout.h) */
    if (guardout_start(g) < 0)
        guard_log(g, "warning: no writer thread: log and heartbeat written inline");
    /* its own memory must not be what runs out, and it must be the last to go */
    if (mlockall(o->embedded ? MCL_CURRENT : MCL_CURRENT | MCL_FUTURE) < 0)
        guard_log(g, "warning: mlockall: %s (the guard's pages may be swapped)", strerror(errno));
    /* never raised: systemd's unit starts it at -1000 */
    int adj = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
    char cur[16] = "";
    if (adj >= 0 && pread(adj, cur, sizeof cur - 1, 0) > 0 && atoi(cur) <= -900) {
        /* low enough already */
    } else if (adj < 0 || write(adj, "-900", 4) != 4) {
        guard_log(g, "warning: cannot lower oom_score_adj: %s", strerror(errno));
    }
    if (adj >= 0)
        close(adj);
    guardsig_open(g);
    guard_log(g,
              "guard started (pid %ld): floor %ld MiB, warn below %ld MiB, PSI full avg10 "
              "warn %d%% kill %d%%, 4 MiB blocks warn under %ld, NVRM lines warn at %d, trace "
              "below %ld MiB (0: off)",
              (long)getpid(), o->floor_kib / 1024, o->warn_kib / 1024, o->psi_warn, o->psi_kill,
              o->frag_warn, o->kmsg_warn, o->trace_kib / 1024);
    return 0;
}

/* Whether pid's cgroup names container id: docker's (docker-ID.scope,
 * /docker/ID) and podman's (libpod-ID.scope, /libpod_parent/libpod-ID) paths
 * carry the whole id, in either cgroup version. Read while pidfd says the
 * process lives, so the file was that process's. */
static bool in_container(const struct guard *g, pid_t pid, int pidfd, const char *id, char *why,
                         size_t whysz)
{
    char path[1100], text[8192];
    snprintf(path, sizeof path, "%s/%ld/cgroup", g->o.proc_root, (long)pid);
    if (buf_read_small(path, text, sizeof text) < 0) {
        snprintf(why, whysz, "cannot read its cgroup: %s", strerror(errno));
        return false;
    }
    if (pidfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
        snprintf(why, whysz, "its process is gone");
        return false;
    }
    if (strlen(id) < 12 || !strstr(text, id)) {
        snprintf(why, whysz, "its cgroup does not name container %.12s", id);
        return false;
    }
    return true;
}

int guard_drop_ambient(void)
{
    return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

void guard_set_pids(struct guard *g, const pid_t *pids, int n)
{
    struct guard_rank ranks[GUARD_MAX_RANKS];
    for (int i = 0; i < n && i < GUARD_MAX_RANKS; i++)
        ranks[i] = (struct guard_rank){pids[i], ""};
    guard_set_ranks(g, ranks, n < GUARD_MAX_RANKS ? n : GUARD_MAX_RANKS);
}

void guard_set_ranks(struct guard *g, const struct guard_rank *ranks, int n)
{
    bool same = n == g->npids;
    for (int i = 0; same && i < n; i++)
        same = ranks[i].pid == g->pids[i];
    if (same)
        return;
    for (int i = 0; i < g->npids; i++) {
        if (g->pidfds[i] >= 0)
            close(g->pidfds[i]);
        if (g->cgkill_fds[i] >= 0)
            close(g->cgkill_fds[i]);
        g->pidfds[i] = g->cgkill_fds[i] = -1;
    }
    g->npids = 0;
    char list[160] = "", cgwhy[300] = "";
    int ncg = 0;
    size_t ll = 0;
    for (int i = 0; i < n && i < GUARD_MAX_RANKS; i++) {
        pid_t pid = ranks[i].pid;
        /* a pidfd names this process, not whoever reuses the number later */
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        char why[300];
        if (ranks[i].id[0] && !in_container(g, pid, fd, ranks[i].id, why, sizeof why)) {
            guard_log(g, "the runtime's PID %ld for a rank is not its container's (%s): never "
                      "signalled", (long)pid, why);
            if (fd >= 0)
                close(fd);
            continue;
        }
        g->pids[g->npids] = pid;
        g->cgkill_fds[g->npids] = guard_cgroup_open(g, pid, fd, why, sizeof why);
        if (g->cgkill_fds[g->npids] >= 0)
            ncg++;
        else if (!cgwhy[0])
            snprintf(cgwhy, sizeof cgwhy, "%s", why);
        g->pidfds[g->npids++] = fd;
        fixstr_appendf_whole(list, sizeof list, &ll, "%s%ld%s", ll ? " " : "", (long)pid,
                             fd < 0 ? "(gone)" : "");
    }
    if (!n)
        guard_log(g, "ranks resolved: none running");
    else if (ncg == g->npids)
        guard_log(g, "ranks resolved: %s; their cgroups' cgroup.kill ready", list);
    else
        guard_log(g, "ranks resolved: %s; cgroup.kill for %d of %d (%s)", list, ncg, g->npids,
                  cgwhy);
}

/* The runtime with the words of verb, then "--" and the rank names: no
 * shell. Its stdout (cut at outsz) in out; waited for at most timeout_ms,
 * then killed. Its exit status, or -1 when it could not run. */
int guard_runtime_run(struct guard *g, const char *const *verb, char *out, size_t outsz,
                      int timeout_ms)
{
    char names[GUARD_MAX_RANKS][16];
    char *argv[16 + GUARD_MAX_RANKS];
    int n = 0;
    argv[n++] = g->o.runtime;
    for (int i = 0; verb[i] && n < 16; i++)
        argv[n++] = (char *)verb[i];
    argv[n++] = "--";
    for (int i = 0; i < g->o.nranks && i < GUARD_MAX_RANKS; i++) {
        snprintf(names[i], sizeof names[i], "dsv41-r%d", i);
        argv[n++] = names[i];
    }
    argv[n] = NULL;
    int p[2], null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0)
        return -1;
    if (pipe2(p, O_CLOEXEC) < 0) {
        close(null_fd);
        return -1;
    }
    pid_t pid;
    int e = child_spawn(g->o.runtime, true, argv, p[1], null_fd, &pid);
    close(p[1]);
    close(null_fd);
    if (e) {
        close(p[0]);
        return -1;
    }
    size_t got = 0;
    double deadline = mono_s() + timeout_ms / 1000.0;
    for (;;) {
        int left = (int)((deadline - mono_s()) * 1000);
        struct pollfd pf = {p[0], POLLIN, 0};
        if (left <= 0 || (poll(&pf, 1, left) < 0 && errno != EINTR)) {
            kill(-pid, SIGKILL); /* under memory pressure the CLI may hang */
            break;
        }
        char tmp[512];
        ssize_t r = read(p[0], tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t take = outsz > got + 1 ? outsz - got - 1 : 0;
        if ((size_t)r < take)
            take = (size_t)r;
        memcpy(out + got, tmp, take);
        got += take;
    }
    close(p[0]);
    if (outsz)
        out[got] = '\0';
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One question to the API socket: the CLI that follows a silent socket
 * still has its own 10 s */
#define GUARD_ENGINE_MS 3000

/* The running ranks' PIDs through the runtime's API socket, each question
 * with its own deadline; -1 when the socket is not there or does not answer
 * the first one (the CLI then), else how many run. */
static int engine_pids(struct guard *g, struct guard_rank *ranks, char *out, size_t outsz)
{
    char sock[256];
    struct buf err = BUF_INIT;
    int n = 0;
    if (engine_socket(g->o.runtime, g->o.socket, sock, sizeof sock, &err) < 0)
        n = -1;
    for (int i = 0; n >= 0 && i < g->o.nranks && i < GUARD_MAX_RANKS; i++) {
        char name[16];
        snprintf(name, sizeof name, "dsv41-r%d", i);
        struct container_info c;
        buf_reset(&err);
        int r = engine_inspect(sock, name, GUARD_ENGINE_MS, &c, &err);
        if (r == -1 && i == 0)
            n = -1;
        else if (r == 0 && c.running && c.pid > 0) {
            ranks[n].pid = (pid_t)c.pid;
            snprintf(ranks[n++].id, sizeof ranks[0].id, "%s", c.id);
        }
        else if (r == -1)
            snprintf(out, outsz, "%s", buf_str(&err));
    }
    buf_free(&err);
    return n;
}

int guard_inspect(struct guard *g, struct guard_rank *ranks, char *out, size_t outsz)
{
    out[0] = '\0';
    int n = engine_pids(g, ranks, out, outsz);
    if (n >= 0)
        return n;
    static const char *const verb[] = {"container", "inspect", "-f",
                                       "{{.State.Running}} {{.State.Pid}} {{.Id}}", NULL};
    out[0] = '\0';
    n = 0;
    if (guard_runtime_run(g, verb, out, outsz, 10000) < 0 && !out[0])
        return -1;
    for (char *line = out; *line && n < GUARD_MAX_RANKS;) {
        size_t l = strcspn(line, "\n");
        long pid;
        char id[72] = "";
        if (strncmp(line, "true ", 5) == 0 && sscanf(line + 5, "%ld %71[0-9a-f]", &pid, id) >= 1 &&
            pid > 0) {
            ranks[n].pid = (pid_t)pid;
            snprintf(ranks[n++].id, sizeof ranks[0].id, "%s", id);
        }
        line += l + (line[l] == '\n');
    }
    return n;
}

int guard_resolve(struct guard *g)
{
    if (!g->o.runtime[0])
        return g->npids;
    char out[1024];
    struct guard_rank ranks[GUARD_MAX_RANKS];
    int n = guard_inspect(g, ranks, out, sizeof out);
    if (n < 0)
        return g->npids;
    guard_set_ranks(g, ranks, n);
    return n;
}

static void heartbeat(struct guard *g, long avail)
{
    char hb[240], sig[96];
    guardsig_format(g, sig, sizeof sig);
    /* the first five fields as before: older readers stop there */
    int n = snprintf(hb, sizeof hb, "%ld %ld %ld %ld %s%s\n", (long)time(NULL), (long)getpid(),
                     avail, g->o.floor_kib, g->armed && g->psi_armed ? "armed" : "fired", sig);
    if (n > 0)
        guardout_heartbeat(g, hb, (size_t)(n < (int)sizeof hb ? n : (int)sizeof hb - 1));
}

/* The biggest processes by RSS, for the log: what is eating the memory. */
static void trace_top(struct guard *g, long avail)
{
    DIR *d = opendir(g->o.proc_root);
    struct {
        long pid, rss;
        char comm[32];
    } top[5] = {{0, 0, ""}};
    struct dirent *e;
    long page_kib = sysconf(_SC_PAGESIZE) / 1024;
    while (d && (e = readdir(d))) {
        long pid = atol(e->d_name);
        if (pid <= 0)
            continue;
        char path[600], buf[256];
        snprintf(path, sizeof path, "%s/%ld/statm", g->o.proc_root, pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        long size, rss;
        if (sscanf(buf, "%ld %ld", &size, &rss) != 2)
            continue;
        rss *= page_kib;
        int slot = -1;
        for (int i = 0; i < 5; i++)
            if (rss > top[i].rss && (slot < 0 || top[i].rss < top[slot].rss))
                slot = i;
        if (slot < 0)
            continue;
        top[slot].pid = pid;
        top[slot].rss = rss;
        snprintf(path, sizeof path, "%s/%ld/comm", g->o.proc_root, pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        r = fd >= 0 ? read(fd, top[slot].comm, sizeof top[slot].comm - 1) : -1;
        if (fd >= 0)
            close(fd);
        top[slot].comm[r > 0 ? r : 0] = '\0';
        char *nl = strchr(top[slot].comm, '\n');
        if (nl)
            *nl = '\0';
    }
    if (d)
        closedir(d);
    char list[400] = "";
    size_t ll = 0;
    for (int i = 0; i < 5; i++) {
        int best = -1;
        for (int k = 0; k < 5; k++)
            if (top[k].rss > 0 && (best < 0 || top[k].rss > top[best].rss))
                best = k;
        if (best < 0)
            break;
        fixstr_appendf_whole(list, sizeof list, &ll, "%s%s(%ld) %ld MiB", ll ? ", " : "",
                             top[best].comm, top[best].pid, top[best].rss / 1024);
        top[best].rss = 0;
    }
    guard_log(g, "trace: MemAvailable %ld MiB; biggest: %s", avail / 1024, list);
}

/* The kill path: no allocation, no fork - unless no rank is known yet (a
 * rank that started a moment ago): then asking the runtime first is the
 * only way to do any good. */
static void fire(struct guard *g, long avail, bool by_psi)
{
    /* with the resolver thread the kill path never waits on the CLI: the
     * runtime kill below reaches ranks whose PIDs are not known yet */
    if (g->npids == 0 && g->o.runtime[0] && !g->res)
        guard_resolve(g);
    if (by_psi && g->npids == 0) {
        /* a stall with no rank here (a big copy): nothing of ours to kill,
         * and no firing to report. The floor still fires without PIDs: its
         * runtime kill below is the second way to the ranks. */
        if (!g->psi_idle_said)
            guard_log(g, "memory pressure (PSI full avg10) %.1f%% at the kill level, but no "
                         "rank runs here",
                      g->sig.psi.full_avg10);
        g->psi_idle_said = true;
        return;
    }
    /* the FIRED line says when, on the clock of dmesg's [seconds] (both
     * count from boot; near enough to line the kill up with the kernel's
     * lines) and of make bench's crossing (tests/bench/guard.sh) */
    double t0 = mono_s();
    int killed = 0;
    bool sent[GUARD_MAX_RANKS] = {false};
    for (int i = 0; i < g->npids; i++)
        if (g->pidfds[i] >= 0 && syscall(SYS_pidfd_send_signal, g->pidfds[i], SIGKILL, NULL, 0) == 0)
            sent[i] = true, killed++;
    double dt = mono_s() - t0;
    /* then each container's whole cgroup: what the rank forked goes too */
    int cgs = 0;
    for (int i = 0; i < g->npids; i++)
        cgs += guard_cgroup_kill(g->cgkill_fds[i]);
    int boosted = 0, gone = 0, refused = 0;
    for (int i = 0; i < g->npids; i++)
        if (sent[i]) { /* never a rank the SIGKILL did not reach: it would live on at -20 */
            int b = guard_boost_dying(g, i, &refused);
            boosted += b > 0 ? b : 0;
            gone += b < 0; /* it exited before it could be boosted: nothing put off */
        }
    char gone_s[112] = "";
    size_t at = 0;
    if (gone)
        fixstr_appendf(gone_s, sizeof gone_s, &at, " (%d rank(s) exited before that)", gone);
    if (refused)
        fixstr_appendf(gone_s, sizeof gone_s, &at, " (%d thread(s) not reniced: no CAP_SYS_NICE?)",
                       refused);
    g->kills += (unsigned long)killed;
    if (by_psi)
        g->psi_armed = false;
    else
        g->armed = false;
    if (by_psi)
        guard_log(g,
                  "FIRED: memory pressure (PSI full avg10) %.1f%% >= %d%% (MemAvailable %ld MiB): "
                  "SIGKILL to %d of %d rank(s) in %.3f ms at monotonic %.6f s, cgroup.kill of %d, "
                  "nice -20 for %d thread(s)%s",
                  g->sig.psi.full_avg10, g->o.psi_kill, avail / 1024, killed, g->npids, dt * 1e3,
                  t0, cgs, boosted, gone_s);
    else
        guard_log(g,
                  "FIRED: MemAvailable %ld MiB < floor %ld MiB: SIGKILL to %d of %d rank(s) in "
                  "%.3f ms at monotonic %.6f s, cgroup.kill of %d, nice -20 for %d thread(s)%s",
                  avail / 1024, g->o.floor_kib / 1024, killed, g->npids, dt * 1e3, t0, cgs, boosted,
                  gone_s);
    /* then the runtime removes what is left: in the resolver's thread, asked
     * before the reap so that a rank not known here is not kept waiting on
     * it (its outcome is logged when it is back), else here after it. Where
     * it killed ranks itself, the CLI first waits for their exit, at most
     * GUARD_KILL_WAIT_MS (guardres.c wait_dying), rather than take a core
     * from them. --ranks counts the cluster's ranks, not this node's: a
     * node's guard knows the ones the last inspect found here, so a rank
     * started since (the CLI's to kill) waits for their exit too, at most
     * GUARD_KILL_WAIT_MS. With none known here (a rank that started a
     * moment ago) it goes at once. */
    bool cli = g->o.runtime[0] && g->o.nranks > 0;
    int dying[GUARD_MAX_RANKS], ndying = 0;
    for (int i = 0; i < g->npids; i++)
        if (sent[i])
            dying[ndying++] = g->pidfds[i];
    bool asked = cli && guard_resolver_kill(g, dying, ndying);
    if (killed) {
        char said[256];
        guard_reap_dying(g, sent, said, sizeof said);
        guard_log(g, "%s", said);
    }
    if (cli && !asked) {
        static const char *const verb[] = {"kill", NULL};
        char out[256] = "";
        int rc = guard_runtime_run(g, verb, out, sizeof out, 30000);
        guard_log(g, "runtime kill of the ranks: exit %d", rc);
    }
}

int guard_tick(struct guard *g, double now)
{
    char buf[8192];
    ssize_t n = pread(g->meminfo_fd, buf, sizeof buf, 0);
    long avail = n > 0 ? guard_parse_available(buf, (size_t)n) : -1;
    if (avail < 0) {
        if (g->last_avail_kib != -2)
            guard_log(g, "cannot read MemAvailable from %s/meminfo", g->o.proc_root);
        g->last_avail_kib = -2;
        return 1000;
    }
    if (avail < g->o.floor_kib && g->armed)
        fire(g, avail, false);
    /* PSI after the crossing's check: it must not delay that kill */
    bool psi_kill = guardsig_read_psi(g);
    if (psi_kill && g->psi_armed)
        fire(g, avail, true);
    /* each kill level re-arms on its own signal: a pressure that lingers
     * must not leave the floor disarmed, nor the other way round */
    const struct memsig_psi *psi = &g->sig.psi;
    bool psi_low = !psi->full_ok || g->o.psi_kill <= 0 || psi->full_avg10 < g->o.psi_kill / 2.0;
    if (psi_low)
        g->psi_idle_said = false;
    if (!g->armed && avail >= g->o.floor_kib + g->o.rearm_kib) {
        g->armed = true;
        guard_log(g, "re-armed: MemAvailable %ld MiB", avail / 1024);
    }
    if (!g->psi_armed && psi_low) {
        g->psi_armed = true;
        guard_log(g, "re-armed: memory pressure (PSI full avg10) %.1f%%", psi->full_avg10);
    }
    guardsig_read_rest(g, now, avail);
    if (avail < g->o.trace_kib && now - g->last_trace_s >= 10) {
        g->last_trace_s = now;
        trace_top(g, avail);
    }
    g->last_avail_kib = avail;
    g->last_sample_s = now;
    heartbeat(g, avail);
    /* earlyoom's rule, with lmkd's fast polling near the floor: 1 s with
     * 6 GiB to spare, 2 ms within 12 MiB (a pread of meminfo costs ~20 us:
     * 1 % of a core while memory stays that close, where a 10 ms step made
     * the firing's p99 the step itself) */
    long headroom = avail - g->o.floor_kib;
    long ms = headroom <= 0 ? POLL_MIN_MS : (long)((double)headroom * 1000.0 / (double)FILL_KIB_PER_S);
    /* under pressure a kill level may come before the floor: 100 ms */
    if (psi->full_ok && g->o.psi_warn > 0 && psi->full_avg10 >= g->o.psi_warn && ms > 100)
        ms = 100;
    return ms < POLL_MIN_MS ? POLL_MIN_MS : ms > 1000 ? 1000 : (int)ms;
}

/* True when a guarded rank has exited (its pidfd turns readable). */
static bool a_rank_exited(struct guard *g)
{
    struct pollfd p[GUARD_MAX_RANKS];
    int n = 0;
    for (int i = 0; i < g->npids; i++)
        if (g->pidfds[i] >= 0)
            p[n++] = (struct pollfd){g->pidfds[i], POLLIN, 0};
    return n && poll(p, (nfds_t)n, 0) > 0;
}

/* A guard that waits behind a busy core fires late (make bench: p99 under
 * load). The sampling thread alone runs SCHED_RR: it sleeps between reads of
 * meminfo and never blocks on a child; the threads and children made after
 * (the resolver, the runtime's CLI) do not inherit it (SCHED_RESET_ON_FORK),
 * and the kernel's RT throttling bounds what a fault in it could take. */
static void sampling_first(struct guard *g)
{
    struct sched_param sp = {.sched_priority = 1};
    if (sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &sp) < 0)
        guard_log(g, "sampling at normal priority (no SCHED_RR: %s): a busy node may delay a firing",
                  strerror(errno));
}

void guard_run(struct guard *g, atomic_int *stop, atomic_int *resolve_now)
{
    if (guard_resolver_start(g) < 0)
        guard_log(g, "warning: no resolver thread: the runtime CLI runs in the guard's loop");
    sampling_first(g); /* after the resolver's start: it stays SCHED_OTHER */
    /* atomics: set from signal handlers and, in the console, other threads */
    while (!atomic_load(stop)) {
        double now = mono_s();
        if (resolve_now && atomic_exchange(resolve_now, 0)) {
            g->last_resolve_s = 0; /* launch just started the ranks */
        }
        /* the runtime CLI is costly: asked every resolve_s while no rank is
         * known, when a known one exits (a restart brings a new PID), and
         * once a minute in case of one started behind our back */
        double since = now - g->last_resolve_s;
        bool want = g->npids == 0 ? since >= g->o.resolve_s : (since >= 60 || a_rank_exited(g));
        if (g->o.runtime[0] && want && (g->res ? guard_resolver_inspect(g) : true)) {
            g->last_resolve_s = now;
            if (!g->res)
                guard_resolve(g); /* no thread could start: the old way */
        }
        guard_resolver_take(g);
        int ms = guard_tick(g, now);
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !atomic_load(stop))
            ;
    }
    guard_resolver_stop(g);
    guard_log(g, "guard stopped");
}

void guard_close(struct guard *g)
{
    guardout_stop(g);
    for (int i = 0; i < g->npids; i++) {
        if (g->pidfds[i] >= 0)
            close(g->pidfds[i]);
        if (g->cgkill_fds[i] >= 0)
            close(g->cgkill_fds[i]);
    }
    g->npids = 0;
    guardsig_close(g);
    int *fds[] = {&g->meminfo_fd, &g->log_fd, &g->hb_fd, &g->lock_fd};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}
