/* The memory guard on a fake /proc whose MemAvailable the test scripts over
 * time, with real child processes standing in for the ranks and for an
 * unrelated process that must survive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <time.h>
#include <sys/file.h>
#include <fcntl.h>
#include <dirent.h>

#include "buf.h"
#include "guard.h"
#include "guardctl.h"
#include "guardout.h"
#include "procid.h"

static char dir[64];

static void set_avail(long kib)
{
    char path[128];
    snprintf(path, sizeof path, "%s/proc/meminfo", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "MemTotal:       127601496 kB\nMemFree:         %ld kB\nMemAvailable:   %ld kB\n"
               "Cached:          1843200 kB\n",
            kib / 2, kib);
    fclose(f);
}

static pid_t child(void)
{
    pid_t p = fork();
    if (p == 0) {
        for (;;)
            pause();
    }
    return p;
}

static bool killed_by_sigkill(pid_t p)
{
    int st;
    for (int i = 0; i < 100; i++) {
        if (waitpid(p, &st, WNOHANG) == p)
            return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        usleep(10000);
    }
    return false;
}

static bool alive(pid_t p)
{
    int st;
    return waitpid(p, &st, WNOHANG) == 0;
}

/* The guard's log as the writer has it (guardout.h): flushed first. */
static char *log_text(struct guard *g)
{
    if (g)
        assert_true(guardout_flush(g, 5000));
    struct buf b = BUF_INIT, path = BUF_INIT;
    buf_printf(&path, "%s/state/memguard.log", dir);
    buf_read_file(&b, buf_str(&path), 1 << 20);
    buf_free(&path);
    return b.data ? b.data : strdup("");
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/dsv41-guard-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char p[128];
    snprintf(p, sizeof p, "%s/proc", dir);
    if (mkdir(p, 0700) < 0)
        return -1;
    snprintf(p, sizeof p, "%s/proc/pressure", dir);
    if (mkdir(p, 0700) < 0)
        return -1;
    snprintf(p, sizeof p, "%s/kmsg", dir);
    FILE *f = fopen(p, "w");
    return f && fclose(f) == 0 ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct guard_opts opts(void)
{
    struct guard_opts o;
    guard_opts_defaults(&o); /* warn 4 GiB, PSI warn 10 kill 60, 16 blocks, 1 NVRM line */
    snprintf(o.proc_root, sizeof o.proc_root, "%s/proc", dir);
    snprintf(o.state_dir, sizeof o.state_dir, "%s/state", dir);
    snprintf(o.kmsg_path, sizeof o.kmsg_path, "%s/kmsg", dir);
    o.floor_kib = 1L << 20;        /* 1 GiB */
    o.trace_kib = 10L << 20;       /* 10 GiB */
    o.rearm_kib = 512L << 10;      /* 512 MiB */
    o.resolve_s = 5;
    o.nranks = 0;
    return o;
}

/* Writes a file under the test's directory (rel like "proc/buddyinfo"). */
static void put_file(const char *rel, const char *text, const char *mode)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void make_dir(const char *rel)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    assert_int_equal(mkdir(path, 0700), 0);
}

static char *fixture(const char *rel)
{
    struct buf b = BUF_INIT, path = BUF_INIT;
    const char *root = getenv("DSV41_FIXTURES");
    buf_printf(&path, "%s/%s", root ? root : "tests/fixtures", rel);
    assert_int_equal(buf_read_file(&b, buf_str(&path), 1 << 20), 0);
    buf_free(&path);
    return b.data;
}

static char *heartbeat_text(struct guard *g)
{
    assert_true(guardout_flush(g, 5000));
    char sd[300], hbp[600];
    snprintf(sd, sizeof sd, "%s/state", dir);
    guard_file(sd, "heartbeat", hbp, sizeof hbp);
    struct buf hb = BUF_INIT;
    assert_int_equal(buf_read_file(&hb, hbp, 4096), 0);
    return hb.data;
}

static void parse(void **st)
{
    (void)st;
    const char *t = "MemTotal: 100 kB\nMemAvailable:   4203344 kB\n";
    assert_int_equal(guard_parse_available(t, strlen(t)), 4203344);
    assert_int_equal(guard_parse_available("MemTotal: 1 kB\n", 15), -1);
    assert_int_equal(guard_parse_available("XMemAvailable: 5 kB\n", 20), -1);
    assert_int_equal(guard_parse_available("MemAvailable: x kB\n", 19), -1);
    /* truncated right after the key */
    assert_int_equal(guard_parse_available("MemAvailable:", 13), -1);
}

static void floor_kill_hysteresis_rearm(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(5L << 20);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    pid_t r0 = child(), r1 = child(), other = child();
    pid_t ranks[2] = {r0, r1};
    guard_set_pids(&g, ranks, 2);

    int ms = guard_tick(&g, 100.0);
    assert_true(ms > 600 && ms < 750); /* 4 GiB headroom at 6000 MiB/s */
    assert_true(alive(r0) && alive(r1));
    set_avail(2L << 20);
    ms = guard_tick(&g, 101.0);
    assert_true(ms >= 100 && ms < 200);

    set_avail((1L << 20) - 1);
    assert_int_equal(guard_tick(&g, 102.0), 2); /* below the floor: the fastest poll */
    assert_true(killed_by_sigkill(r0));
    assert_true(killed_by_sigkill(r1));
    assert_true(alive(other));
    assert_int_equal(g.kills, 2);
    char *log = log_text(&g);
    assert_int_equal(count(log, "FIRED: MemAvailable 1023 MiB < floor 1024 MiB: SIGKILL to 2 of 2"), 1);
    /* then their memory reaped (or they had exited); qemu-user, which runs
     * the aarch64 build here, may know no process_mrelease: said so */
    assert_int_equal(count(log, "killed rank(s) unmapped by the guard in"), 1);
    assert_int_equal(count(log, " not: "), count(log, "not: this kernel has no process_mrelease"));
    free(log);

    /* still below: no second firing; a little above: not re-armed yet */
    guard_tick(&g, 102.5);
    set_avail((1L << 20) + (256L << 10));
    guard_tick(&g, 103.0);
    assert_false(g.armed);
    set_avail((1L << 20) + (600L << 10));
    guard_tick(&g, 104.0);
    assert_true(g.armed);

    /* ranks restarted: new PIDs resolved, the new ones die next time */
    pid_t n0 = child();
    guard_set_pids(&g, &n0, 1);
    set_avail(100L << 10);
    guard_tick(&g, 105.0);
    assert_true(killed_by_sigkill(n0));
    assert_true(alive(other));
    log = log_text(&g);
    assert_int_equal(count(log, "FIRED"), 2);
    assert_int_equal(count(log, "re-armed"), 1);
    assert_int_equal(count(log, "ranks resolved"), 2);
    free(log);
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);
    guard_close(&g);
}

/* The second kill path: each rank's container cgroup gets "1" in its
 * cgroup.kill when the guard fires; a rank whose cgroup is no container's
 * (a v1 host's session scope) gets none, and the resolve says why. */
/* proc/PID/cgroup in the fake /proc, for a real child PID. */
static void fake_cgroup(pid_t pid, const char *text)
{
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%ld", (long)pid);
    make_dir(rel);
    snprintf(rel, sizeof rel, "proc/%ld/cgroup", (long)pid);
    put_file(rel, text, "w");
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
static void cgroup_kill_second_path(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    snprintf(o.cg_root, sizeof o.cg_root, "%s/cg", dir);
    char err[256];
    set_avail(5L << 20);
    pid_t r0 = child(), r1 = child();
    fake_cgroup(r0, "12:memory:/x\n0::/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope/container\n");
    fake_cgroup(r1, "0::/user.slice/user-0.slice/session-3.scope\n");
    /* a runtime's service, and a path that climbs out: no container's */
    pid_t r2 = child(), r3 = child();
    fake_cgroup(r2, "0::/system.slice/containerd.service\n");
    fake_cgroup(r3, "0::/machine.slice/libpod-" ID64 ".scope/../..\n");
    make_dir("cg");
    make_dir("cg/machine.slice");
    make_dir("cg/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope");
    make_dir("cg/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope/container");
    put_file("cg/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope/container/cgroup.kill", "", "w");
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    pid_t ranks[4] = {r0, r1, r2, r3};
    guard_set_pids(&g, ranks, 4);
    assert_true(g.cgkill_fds[0] >= 0);
    assert_int_equal(g.cgkill_fds[1], -1);
    assert_int_equal(g.cgkill_fds[2], -1);
    assert_int_equal(g.cgkill_fds[3], -1);
    set_avail(100L << 10);
    guard_tick(&g, 100.0);
    assert_true(killed_by_sigkill(r0));
    assert_true(killed_by_sigkill(r1));
    assert_true(killed_by_sigkill(r2));
    assert_true(killed_by_sigkill(r3));
    struct buf kill = BUF_INIT, path = BUF_INIT;
    buf_printf(&path, "%s/cg/machine.slice/libpod-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope/container/cgroup.kill", dir);
    assert_int_equal(buf_read_file(&kill, buf_str(&path), 64), 0);
    assert_string_equal(buf_str(&kill), "1");
    char *log = log_text(&g);
    assert_int_equal(count(log, "cgroup.kill for 1 of 4 (no container cgroup of its own "
                               "(cgroup v2 path '/user.slice/user-0.slice/session-3.scope'))"), 1);
    assert_int_equal(count(log, "SIGKILL to 4 of 4 rank(s)"), 1);
    assert_int_equal(count(log, "cgroup.kill of 1"), 1);
    free(log);
    buf_free(&kill);
    buf_free(&path);
    guard_close(&g);
}

/* The same on the kernel's own cgroup2 (root, kernel >= 5.14): a rank in a
 * container-named cgroup forks a child; the pidfd reaches the rank, and
 * cgroup.kill the child the guard never knew of. Skipped where no cgroup2
 * can be made. */
static void cgroup_kill_on_the_kernel(void **st)
{
    (void)st;
    char mnt[256] = "", line[1024];
    FILE *mi = fopen("/proc/self/mountinfo", "re");
    while (mi && fgets(line, sizeof line, mi))
        if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %255s", mnt) == 1)
            break;
    if (mi)
        fclose(mi);
    char cg[512];
    /* a container's scope name: libpod-<64 hex>.scope (this test's PID in it) */
    snprintf(cg, sizeof cg, "%s/libpod-%064lx.scope", mnt, (long)getpid());
    struct stat sb;
    if (!mnt[0] || mkdir(cg, 0755) < 0 ||
        (snprintf(line, sizeof line, "%s/cgroup.kill", cg), stat(line, &sb) < 0)) {
        rmdir(cg);
        print_message("no cgroup2 to make a cgroup in (not root, or no cgroup.kill): skipped\n");
        skip();
    }
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t rank = fork();
    if (rank == 0) {
        char procs[600], me[32];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", cg);
        FILE *f = fopen(procs, "w");
        snprintf(me, sizeof me, "%ld", (long)getpid());
        if (!f || fputs(me, f) < 0 || fclose(f) != 0)
            _exit(3);
        pid_t grandchild = fork(); /* in the same cgroup */
        if (grandchild == 0)
            for (;;)
                pause();
        if (write(ready[1], &grandchild, sizeof grandchild) != (ssize_t)sizeof grandchild)
            _exit(4);
        for (;;)
            pause();
    }
    pid_t grandchild = 0;
    assert_int_equal(read(ready[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    close(ready[0]);
    close(ready[1]);
    char link[256], target[64];
    snprintf(link, sizeof link, "%s/proc/%ld", dir, (long)rank);
    snprintf(target, sizeof target, "/proc/%ld", (long)rank);
    assert_int_equal(symlink(target, link), 0);
    struct guard g;
    struct guard_opts o = opts(); /* cg_root "": found in mountinfo */
    char err[256];
    set_avail(5L << 20);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    guard_set_pids(&g, &rank, 1);
    assert_true(g.cgkill_fds[0] >= 0);
    set_avail(100L << 10);
    guard_tick(&g, 100.0);
    assert_true(killed_by_sigkill(rank));
    /* the grandchild is not ours to wait for: it is gone when kill -0 fails */
    bool gone = false;
    for (int i = 0; i < 200 && !gone; i++) {
        gone = kill(grandchild, 0) < 0 && errno == ESRCH;
        if (!gone)
            usleep(10000);
    }
    assert_true(gone);
    char *log = log_text(&g);
    assert_int_equal(count(log, "cgroup.kill of 1"), 1);
    free(log);
    guard_close(&g);
    for (int i = 0; i < 100 && rmdir(cg) < 0; i++)
        usleep(10000);
}

static void trace_every_10s_and_heartbeat(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(8L << 20); /* under the trace threshold, above the floor */
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    char *before = log_text(&g);
    int t0 = count(before, "trace:");
    free(before);
    guard_tick(&g, 1000.0);
    guard_tick(&g, 1005.0);
    guard_tick(&g, 1011.0);
    char *log = log_text(&g);
    assert_int_equal(count(log, "trace:") - t0, 2);
    assert_non_null(strstr(log, "trace: MemAvailable 8192 MiB; biggest:"));
    free(log);
    struct buf hb = BUF_INIT, path = BUF_INIT;
    char hbp[600];
    char sd[300];
    snprintf(sd, sizeof sd, "%s/state", dir);
    guard_file(sd, "heartbeat", hbp, sizeof hbp);
    buf_puts(&path, hbp);
    assert_int_equal(buf_read_file(&hb, buf_str(&path), 4096), 0);
    long ts, pid, avail, fl;
    char state[16];
    assert_int_equal(sscanf(buf_str(&hb), "%ld %ld %ld %ld %15s", &ts, &pid, &avail, &fl, state), 5);
    assert_int_equal(pid, getpid());
    assert_int_equal(avail, 8L << 20);
    assert_string_equal(state, "armed");
    buf_free(&hb);
    buf_free(&path);
    /* one guard per node */
    struct guard g2;
    int rc = guard_open(&g2, &o, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "another guard is running on this node"));
    guard_close(&g);
    assert_int_equal(guard_open(&g2, &o, err, sizeof err), 0);
    guard_close(&g2);
}

/* A path longer than its field is refused, never cut into another path;
 * one that fits exactly is taken whole. */
static void parse_refuses_long_paths(void **st)
{
    (void)st;
    char longest[256], over[257];
    memset(longest, 'a', sizeof longest - 1);
    longest[0] = '/';
    longest[sizeof longest - 1] = '\0';
    memset(over, 'a', sizeof over - 1);
    over[0] = '/';
    over[sizeof over - 1] = '\0';
    struct guard_opts o;
    enum guardctl_action a;
    int bad = -1;
    guard_opts_defaults(&o);
    char *fit[] = {"dsv41-guard", "--state-dir", "/s", "--socket", longest, "--stop", NULL};
    assert_int_equal(guardctl_parse(6, fit, &o, &a, &bad), 0);
    assert_string_equal(o.socket, longest);
    assert_int_equal(a, GUARD_STOP);
    const char *flags[] = {"--socket", "--kmsg", "--proc-root"};
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
        guard_opts_defaults(&o);
        char *cut[] = {"dsv41-guard", "--state-dir", "/s", (char *)flags[k], over, NULL};
        assert_int_equal(guardctl_parse(5, cut, &o, &a, &bad), -1);
        assert_int_equal(bad, 3);
    }
    char sdir[600];
    memset(sdir, 'd', sizeof sdir - 1);
    sdir[0] = '/';
    sdir[sizeof sdir - 1] = '\0';
    guard_opts_defaults(&o);
    char *sd[] = {"dsv41-guard", "--state-dir", sdir, NULL};
    assert_int_equal(guardctl_parse(3, sd, &o, &a, &bad), -1);
    assert_int_equal(bad, 1);
    assert_string_not_equal(o.state_dir, sdir);
}

static void unreadable_meminfo(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(5L << 20);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/proc/meminfo", dir);
    FILE *f = fopen(path, "w");
    fputs("garbage\n\x01\x02", f);
    fclose(f);
    assert_int_equal(guard_tick(&g, 1.0), 1000);
    assert_int_equal(g.kills, 0);
    char *log = log_text(&g);
    assert_non_null(strstr(log, "cannot read MemAvailable"));
    free(log);
    guard_close(&g);
    snprintf(o.proc_root, sizeof o.proc_root, "%s/nowhere", dir);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
}

/* This process's ambient capability set, from /proc/self/status. */
static unsigned long long cap_amb(void)
{
    struct buf b = BUF_INIT;
    buf_read_file(&b, "/proc/self/status", 1 << 16);
    const char *p = b.data ? strstr(b.data, "CapAmb:") : NULL;
    unsigned long long v = p ? strtoull(p + 7, NULL, 16) : ~0ULL;
    buf_free(&b);
    return v;
}

/* As dsv41-guard.service starts it (AmbientCapabilities=CAP_KILL ...), the
 * guard holds ambient capabilities that every program it starts would
 * inherit; it clears them, and a program it starts then has none. In a child
 * process: raising one needs root (the tests run as root; skipped otherwise). */
static void ambient_capabilities_stop_at_the_guard(void **st)
{
    (void)st;
    if (geteuid() != 0)
        skip();
    pid_t p = fork();
    if (p == 0) {
        struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) < 0)
            _exit(77);
        d[0].inheritable |= 1u << CAP_KILL;
        if (syscall(SYS_capset, &h, d) < 0 ||
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_KILL, 0, 0) < 0)
            _exit(77); /* a sandbox (or qemu-user) without them */
        if (cap_amb() != 1ULL << CAP_KILL)
            _exit(12); /* raised: what the unit gives */
        if (guard_drop_ambient() < 0 || cap_amb() != 0)
            _exit(13);
        /* a program started now: none either */
        int r = system("grep -q '^CapAmb:[[:space:]]*0000000000000000$' /proc/self/status");
        _exit(r == 0 ? 0 : 14);
    }
    int status;
    assert_int_equal(waitpid(p, &status, 0), p);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip();
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The fake /proc's cgroup file of pid: the line a podman container's process has. */
static void cgroup_of(pid_t pid, const char *id)
{
    char path[160];
    snprintf(path, sizeof path, "%s/proc/%ld", dir, (long)pid);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/proc/%ld/cgroup", dir, (long)pid);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "0::/libpod_parent/libpod-%s\n", id);
    fclose(f);
}

/* The PID the engine reports for a rank is taken only when its cgroup names
 * the rank's container: a number the engine got wrong, or that is another
 * process's by now, is logged and never signalled. */
static void engine_pid_checked_against_the_container(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(5L << 20);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    const char *id0 = "3f2a9c0b11d04e6f8a7b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f";
    const char *id1 = "aa2a9c0b11d04e6f8a7b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f";
    pid_t rank = child(), stranger = child();
    cgroup_of(rank, id0);
    cgroup_of(stranger, "0000000000000000000000000000000000000000000000000000000000000000");
    struct guard_rank ranks[2] = {{rank, ""}, {stranger, ""}};
    snprintf(ranks[0].id, sizeof ranks[0].id, "%s", id0);
    snprintf(ranks[1].id, sizeof ranks[1].id, "%s", id1); /* the engine says it is rank 1's */
    guard_set_ranks(&g, ranks, 2);
    assert_int_equal(g.npids, 1);
    char *log = log_text(&g);
    assert_int_equal(count(log, "is not its container's (its cgroup does not name container "
                                "aa2a9c0b11d0): never signalled"), 1);
    free(log);
    set_avail(100L << 10);
    guard_tick(&g, 100.0);
    assert_true(killed_by_sigkill(rank));
    assert_true(alive(stranger));
    kill(stranger, SIGKILL);
    waitpid(stranger, NULL, 0);
    guard_close(&g);
}

/* Writes the lock and a fresh heartbeat as a guard that is gone left
 * them, naming pid with extra fields (the identity a lock carries). */
static void stale_files(pid_t pid, const char *fields)
{
    struct guard_opts o = opts();
    mkdir(o.state_dir, 0700);
    char path[768];
    guard_file(o.state_dir, "lock", path, sizeof path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%ld%s\n", (long)pid, fields);
    fclose(f);
    guard_file(o.state_dir, "heartbeat", path, sizeof path);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%ld %ld 9999999 1048576 armed\n", (long)time(NULL), (long)pid);
    fclose(f);
}

/* A guard's lock and heartbeat outlive it (a `timeout`, a crash, a reboot),
 * and the number they name may belong to anyone since: --stop and --resolve
 * signal nobody then (issue: a sleep died of SIGTERM). Only a process that
 * holds the lock and matches the identity the lock recorded is signalled. */
static void stop_never_signals_a_stranger(void **st)
{
    (void)st;
    struct guard_opts o = opts();
    pid_t stranger = child();
    struct procid sid;
    assert_int_equal(procid_of(stranger, "/proc", &sid), 0);
    char right[96], wrong[96];
    procid_format(&sid, right, sizeof right);
    /* the lock nobody holds: whatever it says, no signal */
    const char *fields[] = {"", " systemd", right, " console"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        stale_files(stranger, fields[i]);
        assert_int_equal(guardctl(&o, GUARD_STOP), 0);
        assert_int_equal(guardctl(&o, GUARD_RESOLVE), 1);
        assert_true(alive(stranger));
    }
    /* held by a process that is not the one named (the number reused since) */
    struct procid then = sid;
    then.start--;
    procid_format(&then, wrong, sizeof wrong);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t holder = fork();
    if (holder == 0) {
        char path[768];
        guard_file(o.state_dir, "lock", path, sizeof path);
        int fd = open(path, O_RDWR);
        if (fd < 0 || flock(fd, LOCK_EX) < 0)
            _exit(1);
        if (write(pipefd[1], "!", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    char c;
    stale_files(stranger, wrong);
    assert_int_equal(read(pipefd[0], &c, 1), 1);
    assert_int_equal(guardctl(&o, GUARD_STOP), 0);
    assert_int_equal(guardctl(&o, GUARD_RESOLVE), 1);
    assert_true(alive(stranger));
    assert_true(alive(holder));
    kill(stranger, SIGKILL);
    waitpid(stranger, NULL, 0);
    /* the holder named rightly: stopped */
    struct procid hid;
    assert_int_equal(procid_of(holder, "/proc", &hid), 0);
    procid_format(&hid, right, sizeof right);
    stale_files(holder, right);
    assert_int_equal(guardctl(&o, GUARD_STOP), 0);
    int status;
    assert_int_equal(waitpid(holder, &status, 0), holder);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    close(pipefd[0]);
    close(pipefd[1]);
    /* a guard that has exited but is not reaped yet is gone (kill(pid, 0)
     * still answers for a zombie: a status right after a stop called it alive) */
    pid_t z = fork();
    if (z == 0)
        _exit(0);
    for (int i = 0; i < 100 && procid_alive(z, "/proc"); i++)
        usleep(10000);
    assert_int_equal(kill(z, 0), 0);
    assert_false(procid_alive(z, "/proc"));
    assert_true(procid_alive(getpid(), "/proc"));
    waitpid(z, NULL, 0);
}

/* A 4 MiB block's order with each page size a kernel may use (arm64 has
 * 4, 16 and 64 KiB); nonsense falls back to 4 KiB's. */
static void buddy_order_by_page_size(void **st)
{
    (void)st;
    assert_int_equal(memsig_buddy_order(4096), 10);
    assert_int_equal(memsig_buddy_order(16384), 8);
    assert_int_equal(memsig_buddy_order(65536), 6);
    assert_int_equal(memsig_buddy_order(4L << 20), 0);
    assert_int_equal(memsig_buddy_order(0), MEMSIG_BUDDY_ORDER);
    assert_int_equal(memsig_buddy_order(-1), MEMSIG_BUDDY_ORDER);
    assert_int_equal(memsig_buddy_order(12288), MEMSIG_BUDDY_ORDER);
    assert_int_equal(memsig_buddy_order(8L << 20), MEMSIG_BUDDY_ORDER);
    /* the same buddyinfo counts fewer 4 MiB blocks with 4 KiB pages than with 64 KiB */
    const char *b = "Node 0, zone   Normal   1 1 1 1 1 1 1 1 1 1 1\n";
    assert_int_equal(memsig_parse_buddy(b, strlen(b), memsig_buddy_order(4096)), 1);
    assert_int_equal(memsig_parse_buddy(b, strlen(b), memsig_buddy_order(65536)), 5);
}

static void memsig_fixtures(void **st)
{
    (void)st;
    struct memsig_psi psi;
    char *t = fixture("proc/spark/pressure/memory");
    assert_int_equal(memsig_parse_psi(t, strlen(t), &psi), 0);
    assert_true(psi.some_ok && psi.full_ok);
    assert_float_equal(psi.some_avg10, 0.31, 1e-9);
    assert_float_equal(psi.full_avg10, 0.0, 1e-9);
    free(t);
    t = fixture("proc/fragmented/pressure/memory");
    assert_int_equal(memsig_parse_psi(t, strlen(t), &psi), 0);
    assert_float_equal(psi.full_avg10, 71.55, 1e-9);
    free(t);
    /* kernels with only the "some" line, garbage, out of range, cut short */
    const char *some = "some avg10=1.00 avg60=0.00 avg300=0.00 total=1\n";
    assert_int_equal(memsig_parse_psi(some, strlen(some), &psi), -1);
    assert_true(psi.some_ok && !psi.full_ok);
    assert_int_equal(memsig_parse_psi("full avg10=abc\n", 15, &psi), -1);
    assert_int_equal(memsig_parse_psi("full avg10=101.0 avg60=0\n", 25, &psi), -1);
    assert_int_equal(memsig_parse_psi("full avg10=", 11, &psi), -1);
    assert_int_equal(memsig_parse_psi("full avg10=1.5x", 15, &psi), -1);
    assert_int_equal(memsig_parse_psi("xfull avg10=5.0\n", 16, &psi), -1);
    assert_int_equal(memsig_parse_psi("", 0, &psi), -1);

    t = fixture("proc/spark/buddyinfo");
    assert_int_equal(memsig_parse_buddy(t, strlen(t), MEMSIG_BUDDY_ORDER), 3 + 302 + 8119);
    assert_int_equal(memsig_parse_buddy(t, strlen(t), 9), 1 + 3 + 15 + 302 + 140 + 8119);
    free(t);
    t = fixture("proc/fragmented/buddyinfo");
    assert_int_equal(memsig_parse_buddy(t, strlen(t), MEMSIG_BUDDY_ORDER), 0);
    free(t);
    const char *bad = "Node 0, zone   Normal   1 2 x\nnonsense\n";
    assert_int_equal(memsig_parse_buddy(bad, strlen(bad), 0), -1);
    assert_int_equal(memsig_parse_buddy("Node 0", 6, 0), -1);
    const char *cut = "Node 0, zone Normal 5 6"; /* no newline at the end */
    assert_int_equal(memsig_parse_buddy(cut, strlen(cut), 1), 6);

    unsigned long long seq;
    size_t off, len;
    const char *r = "4,3304,912500002,-;NVRM: Xid (PCI:000f:01:00): 31, pid=4242\n SUBSYSTEM=pci\n";
    assert_int_equal(memsig_parse_kmsg(r, strlen(r), &seq, &off, &len), 1);
    assert_int_equal(seq, 3304);
    assert_int_equal(len, strlen("NVRM: Xid (PCI:000f:01:00): 31, pid=4242"));
    assert_memory_equal(r + off, "NVRM: Xid", 9);
    r = "6,12,5,-;usb 1-1: new device\n";
    assert_int_equal(memsig_parse_kmsg(r, strlen(r), &seq, &off, &len), 0);
    assert_int_equal(seq, 12);
    /* real records of an H200 host: flags "c", priorities 3 and 4 */
    char *h = fixture("kmsg/h200-nvrm-boot.txt");
    int nv = 0;
    for (char *p = h; *p;) {
        size_t n = strcspn(p, "\n");
        if (memsig_parse_kmsg(p, n, &seq, &off, &len) == 1) {
            nv++;
            assert_memory_equal(p + off, "NVRM: ", 6);
        }
        p += n + (p[n] == '\n');
    }
    assert_int_equal(nv, 3);
    free(h);
    assert_int_equal(memsig_parse_kmsg("garbage", 7, &seq, &off, &len), -1);
    assert_int_equal(memsig_parse_kmsg("6,,1,-;x", 8, &seq, &off, &len), -1);
    assert_int_equal(memsig_parse_kmsg("6,1,1,- NVRM", 12, &seq, &off, &len), -1);
}

static void set_psi(double full)
{
    char t[160];
    snprintf(t, sizeof t, "some avg10=%.2f avg60=0.00 avg300=0.00 total=1\n"
                          "full avg10=%.2f avg60=0.00 avg300=0.00 total=1\n",
             full, full);
    put_file("proc/pressure/memory", t, "w");
}

static void psi_kill_and_warnings(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(50L << 20); /* MemAvailable is fine: the pressure is not */
    set_psi(3.0);
    char *b = fixture("proc/spark/buddyinfo");
    put_file("proc/buddyinfo", b, "w");
    free(b);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    pid_t r0 = child(), r1 = child(), other = child();
    pid_t ranks[2] = {r0, r1};
    guard_set_pids(&g, ranks, 2);
    assert_int_equal(guard_tick(&g, 10.0), 1000);
    char *hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, " armed psi=3.0 frag=8424 kmsg=0 warn=-"));
    free(hb);

    set_psi(20.0); /* a warning, and samples ten times a second */
    assert_int_equal(guard_tick(&g, 11.0), 100);
    assert_true(alive(r0) && alive(r1));
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "warn=psi"));
    free(hb);
    b = fixture("proc/fragmented/pressure/memory"); /* full avg10=71.55 */
    put_file("proc/pressure/memory", b, "w");
    free(b);
    guard_tick(&g, 12.0);
    assert_true(killed_by_sigkill(r0));
    assert_true(killed_by_sigkill(r1));
    assert_true(alive(other));
    char *log = log_text(&g);
    assert_int_equal(count(log, "FIRED: memory pressure (PSI full avg10) 71.5% >= 60% "
                                "(MemAvailable 51200 MiB): SIGKILL to 2 of 2"), 1);
    free(log);
    /* armed again only once the pressure has fallen under half the kill
     * level; the floor stayed armed all along */
    set_psi(40.0);
    guard_tick(&g, 13.0);
    assert_false(g.psi_armed);
    assert_true(g.armed);
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, " fired psi=40.0"));
    free(hb);
    set_psi(5.0);
    guard_tick(&g, 14.0);
    assert_true(g.psi_armed);
    log = log_text(&g);
    assert_int_equal(count(log, "FIRED"), 1);
    assert_int_equal(count(log, "re-armed: memory pressure (PSI full avg10) 5.0%"), 1);
    assert_int_equal(count(log, "warning: memory pressure (PSI full avg10) 20.0% at or above 10%"), 1);
    assert_int_equal(count(log, "cleared: memory pressure (PSI full avg10) 5.0% back under 10%"), 1);
    free(log);
    /* pressure with no rank here: nothing killed, nothing fired, said once */
    guard_set_pids(&g, NULL, 0);
    set_psi(90.0);
    guard_tick(&g, 14.5);
    guard_tick(&g, 14.6);
    assert_true(g.psi_armed);
    log = log_text(&g);
    assert_int_equal(count(log, "FIRED"), 1);
    assert_int_equal(count(log, "at the kill level, but no rank runs here"), 1);
    free(log);
    /* switched off: no kill however high */
    pid_t r2 = child();
    guard_set_pids(&g, &r2, 1);
    g.o.psi_kill = 0;
    set_psi(99.0);
    guard_tick(&g, 15.0);
    assert_true(alive(r2));
    kill(r2, SIGKILL);
    waitpid(r2, NULL, 0);
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);
    guard_close(&g);
}

static void fragmentation_warns_and_clears(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(50L << 20);
    set_psi(0);
    char *b = fixture("proc/fragmented/buddyinfo");
    put_file("proc/buddyinfo", b, "w");
    free(b);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    guard_tick(&g, 10.0);
    char *hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "frag=0 kmsg=0 warn=frag"));
    free(hb);
    b = fixture("proc/spark/buddyinfo");
    put_file("proc/buddyinfo", b, "w");
    free(b);
    guard_tick(&g, 10.5); /* buddyinfo is read once a second */
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "warn=frag"));
    free(hb);
    guard_tick(&g, 11.0);
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "frag=8424 kmsg=0 warn=-"));
    free(hb);
    /* MemAvailable under the warning level, above the floor */
    set_avail(3L << 20);
    guard_tick(&g, 12.0);
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "warn=mem"));
    free(hb);
    char *log = log_text(&g);
    assert_int_equal(count(log, "warning: 0 free blocks of 4 MiB or more (order >= 10) under 16"), 1);
    assert_int_equal(count(log, "cleared: 8424 free blocks"), 1);
    assert_int_equal(count(log, "warning: MemAvailable 3072 MiB below the warning level 4096 MiB"), 1);
    assert_int_equal(g.kills, 0);
    free(log);
    guard_close(&g);
}

static void kernel_log_read_once(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(50L << 20);
    set_psi(0);
    /* before the guard's start: not its to report */
    put_file("kmsg", "4,10,5,-;NVRM: an old boot's line\n", "w");
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    guard_tick(&g, 10.0);
    char *hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "kmsg=0 warn=-"));
    free(hb);
    char *k = fixture("kmsg/gb10-nvrm.txt");
    put_file("kmsg", k, "a");
    free(k);
    guard_tick(&g, 11.0);
    guard_tick(&g, 12.0);
    /* a record seen already (a reopened log) and hostile bytes */
    put_file("kmsg", "4,3302,912400001,-;NVRM: again\n"
                     "4,3310,912700000,-;NVRM: \x1b[2Jevil\x1b]0;title\x07\n", "a");
    guard_tick(&g, 13.0);
    char *log = log_text(&g);
    assert_int_equal(count(log, "kernel: NVRM"), 4);
    assert_int_equal(count(log, "an old boot"), 0);
    assert_int_equal(count(log, "NVRM: again"), 0);
    assert_non_null(strstr(log, "kernel: NVRM: Xid (PCI:000f:01:00): 31, pid=4242"));
    assert_null(strchr(log, '\x1b'));
    assert_int_equal(count(log, "warning: 3 NVRM line(s) in the kernel log"), 1);
    free(log);
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "kmsg=4 warn=kmsg"));
    free(hb);
    /* ten minutes on, the warning clears; the count stays */
    guard_tick(&g, 700.0);
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, "kmsg=4 warn=-"));
    free(hb);
    guard_close(&g);
}

static void signals_missing(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(50L << 20);
    char p[128];
    snprintf(p, sizeof p, "%s/proc/pressure/memory", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/proc/buddyinfo", dir);
    unlink(p);
    snprintf(o.kmsg_path, sizeof o.kmsg_path, "%s/no-kmsg", dir);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    assert_int_equal(guard_tick(&g, 1.0), 1000);
    char *hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, " armed psi=n/a frag=n/a kmsg=n/a warn=-"));
    free(hb);
    char *log = log_text(&g);
    assert_non_null(strstr(log, "memory pressure (PSI): n/a"));
    assert_non_null(strstr(log, "fragmentation: n/a"));
    assert_non_null(strstr(log, "kernel log: n/a"));
    free(log);
    guard_close(&g);
    /* present but garbage: n/a too, and no kill */
    put_file("proc/pressure/memory", "full avg10=\x01\x02 garbage\n", "w");
    put_file("proc/buddyinfo", "Node 0, zone Normal 1 2 zz\n", "w");
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    guard_tick(&g, 1.0);
    hb = heartbeat_text(&g);
    assert_non_null(strstr(hb, " armed psi=n/a frag=n/a kmsg=n/a warn=-"));
    free(hb);
    assert_int_equal(g.kills, 0);
    guard_close(&g);
}

struct run_arg {
    struct guard *g;
    atomic_int stop;
};

static void *run_thread(void *arg)
{
    struct run_arg *a = arg;
    guard_run(a->g, &a->stop, NULL);
    return NULL;
}

static bool exists(const char *rel)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return access(path, F_OK) == 0;
}

static bool wait_file(const char *rel, int tenths)
{
    for (int i = 0; i < tenths; i++) {
        if (exists(rel))
            return true;
        usleep(100000);
    }
    return false;
}

static struct timespec hb_mtime(void)
{
    char sd[300], hbp[600];
    snprintf(sd, sizeof sd, "%s/state", dir);
    guard_file(sd, "heartbeat", hbp, sizeof hbp);
    struct stat st;
    memset(&st, 0, sizeof st);
    stat(hbp, &st);
    return st.st_mtim;
}

/* A fake `podman` with script, first in PATH; the PATH before it in oldpath. */
static void fake_podman(const char *script, char *oldpath, size_t oldsz)
{
    char bin[128], path[160];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    mkdir(bin, 0700);
    snprintf(path, sizeof path, "%s/podman", bin);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(script, f);
    fclose(f);
    chmod(path, 0700);
    snprintf(oldpath, oldsz, "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    char newpath[4300];
    snprintf(newpath, sizeof newpath, "%s:%s", bin, oldpath);
    setenv("PATH", newpath, 1);
}

/* This process's open descriptors. */
static int fds_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* The runtime CLI slow to answer (as under memory pressure): the guard's
 * loop goes on sampling while the inspect runs, in the resolver's thread,
 * and the kill needs no answer from it. A fake `podman` first in PATH
 * sleeps 4 s on inspect. */
static void sampling_never_waits_on_the_cli(void **st)
{
    (void)st;
    pid_t victim = child();
    char script[700], oldpath[4096];
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "case \"$1\" in\n"
             "container) : > %s/inspect-start; sleep 4; echo \"true %ld\"; : > %s/inspect-end ;;\n"
             "kill) : > %s/killed ;;\n"
             "esac\n",
             dir, (long)victim, dir, dir);
    fake_podman(script, oldpath, sizeof oldpath);
    int fds_before = fds_open();

    struct guard g;
    struct guard_opts o = opts();
    snprintf(o.runtime, sizeof o.runtime, "podman");
    o.nranks = 2; /* the cluster's: this node finds one of them (a worker's guard) */
    o.resolve_s = 1;
    char err[256];
    set_avail((1L << 20) + (1L << 20)); /* 1 GiB above the floor: ~170 ms between samples */
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    struct run_arg a = {&g, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_thread, &a), 0);
    assert_true(wait_file("inspect-start", 100));
    struct timespec t0 = hb_mtime();
    usleep(1500000); /* the inspect still sleeps */
    struct timespec t1 = hb_mtime();
    assert_false(exists("inspect-end"));
    assert_true(t1.tv_sec > t0.tv_sec || (t1.tv_sec == t0.tv_sec && t1.tv_nsec > t0.tv_nsec));
    /* the PIDs arrive; below the floor the victim dies at once, and the
     * runtime's clean-up runs in the thread */
    assert_true(wait_file("inspect-end", 100));
    char *log = NULL;
    for (int i = 0; i < 50; i++) {
        free(log);
        log = log_text(&g);
        if (strstr(log, "ranks resolved: "))
            break;
        usleep(100000);
    }
    char want[64];
    snprintf(want, sizeof want, "ranks resolved: %ld", (long)victim);
    assert_non_null(strstr(log, want));
    free(log);
    set_avail((1L << 20) - 4096);
    assert_true(killed_by_sigkill(victim));
    assert_true(wait_file("killed", 100));
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    log = log_text(&g);
    assert_int_equal(count(log, "FIRED: MemAvailable"), 1);
    /* the rank it killed: the CLI waited for its exit (or 250 ms, where a
     * stalled machine kept the rank from exiting sooner), not beside it */
    assert_int_equal(count(log, "runtime kill of the ranks: exit 0 ("), 1);
    free(log);
    guard_close(&g);
    assert_int_equal(fds_open(), fds_before); /* the pidfds' copies closed */
    setenv("PATH", oldpath, 1);
}

/* No rank known when the floor is crossed (one started a moment ago): the
 * runtime's kill, the only way to it, goes at once. */
static void cli_kill_at_once_with_no_rank_known(void **st)
{
    (void)st;
    char script[300], oldpath[4096];
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "case \"$1\" in\n"
             "container) echo 'false 0' ;;\n"
             "kill) : > %s/killed ;;\n"
             "esac\n",
             dir);
    fake_podman(script, oldpath, sizeof oldpath);
    struct guard g;
    struct guard_opts o = opts();
    snprintf(o.runtime, sizeof o.runtime, "podman");
    o.nranks = 2;
    char err[256];
    set_avail((1L << 20) - 4096);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    struct run_arg a = {&g, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_thread, &a), 0);
    assert_true(wait_file("killed", 100));
    atomic_store(&a.stop, 1); /* the resolver's stop joins it and logs its line */
    pthread_join(th, NULL);
    char *log = log_text(&g);
    assert_int_equal(count(log, "FIRED: MemAvailable"), 1);
    assert_int_equal(count(log, "runtime kill of the ranks: exit 0\n"), 1);
    free(log);
    guard_close(&g);
    setenv("PATH", oldpath, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(parse, setup, teardown),
        cmocka_unit_test_setup_teardown(memsig_fixtures, setup, teardown),
        cmocka_unit_test(buddy_order_by_page_size),
        cmocka_unit_test_setup_teardown(stop_never_signals_a_stranger, setup, teardown),
        cmocka_unit_test_setup_teardown(engine_pid_checked_against_the_container, setup, teardown),
        cmocka_unit_test(ambient_capabilities_stop_at_the_guard),
        cmocka_unit_test_setup_teardown(cgroup_kill_second_path, setup, teardown),
        cmocka_unit_test_setup_teardown(cgroup_kill_on_the_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(psi_kill_and_warnings, setup, teardown),
        cmocka_unit_test_setup_teardown(fragmentation_warns_and_clears, setup, teardown),
        cmocka_unit_test_setup_teardown(kernel_log_read_once, setup, teardown),
        cmocka_unit_test_setup_teardown(signals_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(sampling_never_waits_on_the_cli, setup, teardown),
        cmocka_unit_test_setup_teardown(cli_kill_at_once_with_no_rank_known, setup, teardown),
        cmocka_unit_test_setup_teardown(floor_kill_hysteresis_rearm, setup, teardown),
        cmocka_unit_test_setup_teardown(trace_every_10s_and_heartbeat, setup, teardown),
        cmocka_unit_test_setup_teardown(unreadable_meminfo, setup, teardown),
        cmocka_unit_test(parse_refuses_long_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
