#include "guardctl.h"

#include "interrupt.h"
#include "procid.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_resolve;

static void on_usr(int sig)
{
    if (sig == SIGUSR1)
        atomic_store(&g_resolve, 1);
}

/* The lock holder's PID; *console set when it is a console's thread,
 * *managed when systemd runs it. */
static long lock_holder(const char *state_dir, bool *console, bool *managed, struct procid *id)
{
    char path[768], buf[200] = "";
    guard_file(state_dir, "lock", path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (console)
        *console = n > 0 && strstr(buf, "console");
    if (managed)
        *managed = n > 0 && strstr(buf, "systemd");
    long pid = n > 0 ? atol(buf) : -1;
    if (id)
        procid_parse(n > 0 ? buf : "", pid, id);
    return pid;
}

static long lock_pid(const char *state_dir)
{
    return lock_holder(state_dir, NULL, NULL, NULL);
}

/* True once nobody holds the lock. */
static bool lock_free(const char *state_dir)
{
    char path[768];
    guard_file(state_dir, "lock", path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    bool free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd); /* releases it again */
    return free_now;
}

bool guardctl_heartbeat_read(const char *state_dir, char *line, size_t sz)
{
    char path[768];
    guard_file(state_dir, "heartbeat", path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, line, sz - 1) : -1;
    if (fd >= 0)
        close(fd);
    line[n > 0 ? n : 0] = '\0';
    line[strcspn(line, "\n")] = '\0';
    long ts, pid;
    /* a guard that has exited is gone, reaped or not */
    return sscanf(line, "%ld %ld", &ts, &pid) == 2 && pid > 0 && procid_alive(pid, "/proc");
}

bool guardctl_signals(const char *line, size_t len, char *out, size_t sz)
{
    char psi[16] = "", frag[24] = "", kmsg[24] = "", warn[48] = "";
    char one[256];
    snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one - 1 ? len : sizeof one - 1), line);
    const char *p;
    if ((p = strstr(one, " psi=")))
        sscanf(p, " psi=%15s", psi);
    if ((p = strstr(one, " frag=")))
        sscanf(p, " frag=%23s", frag);
    if ((p = strstr(one, " kmsg=")))
        sscanf(p, " kmsg=%23s", kmsg);
    if ((p = strstr(one, " warn=")))
        sscanf(p, " warn=%47s", warn);
    out[0] = '\0';
    if (!psi[0])
        return false; /* a guard from before the signals */
    char raw[200];
    bool warned = warn[0] && strcmp(warn, "-") != 0;
    snprintf(raw, sizeof raw, ", psi %s%s, 4M blocks %s, NVRM %s%s%s", psi,
             strcmp(psi, "n/a") ? "%" : "", frag, kmsg, warned ? ", WARN " : "",
             warned ? warn : "");
    text_clean(out, sz, raw, strlen(raw));
    return warned;
}

int guardctl_heartbeat(const char *state_dir, int max_age_s, char *desc, size_t sz)
{
    char buf[320], sig[200];
    bool running = guardctl_heartbeat_read(state_dir, buf, sizeof buf);
    guardctl_signals(buf, strlen(buf), sig, sizeof sig);
    long ts, pid, avail, fl;
    char state[16];
    if (sscanf(buf, "%ld %ld %ld %ld %15s", &ts, &pid, &avail, &fl, state) != 5) {
        snprintf(desc, sz, "no guard heartbeat in %s", state_dir);
        return 0;
    }
    long age = (long)time(NULL) - ts;
    snprintf(desc, sz, "guard pid %ld %s, heartbeat %lds ago, MemAvailable %ld MiB, floor %ld MiB%s%s",
             pid, state, age, avail / 1024, fl / 1024, sig, running ? "" : " (process gone)");
    return age <= max_age_s && running;
}

/* The guard that holds state_dir's lock, as a pidfd: only while the lock
 * is held (a stale file outlives its guard, and a reboot) and only on the
 * very process the file names (procid.h). -1 with why otherwise. */
static int holder_open(const char *state_dir, const struct procid *id, char *why, size_t whysz)
{
    if (id->pid <= 0) {
        snprintf(why, whysz, "no guard running (%s)", state_dir);
        return -1;
    }
    if (lock_free(state_dir)) {
        snprintf(why, whysz, "no guard running (%s: its lock names PID %ld, but nobody holds it: "
                 "left by a guard that is gone)", state_dir, id->pid);
        return -1;
    }
    char w[200];
    int fd = procid_open(id, "/proc", w, sizeof w);
    if (fd < 0)
        snprintf(why, whysz, "no guard running (%s: %s; the lock's holder is not the process its "
                 "file names, so nothing is signalled)", state_dir, w);
    return fd;
}

static int signal_fd(int pidfd, int sig)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static int run(const struct guard_opts *opts, bool daemon)
{
    struct guard_opts mine = *opts;
    const struct guard_opts *o = &mine;
    /* dsv41-guard.service sets it: the lock then says so (see stop) */
    const char *unit = getenv("DSV41_GUARD_UNIT");
    mine.systemd = !daemon && unit && *unit;
    struct guard g;
    char err[512];
    if (daemon) {
        /* detach first so the lock belongs to the process that stays */
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "guard: cannot fork: %s\n", strerror(errno));
            return 1;
        }
        if (p > 0) {
            /* wait for the child's first heartbeat, so the caller knows it is up */
            char desc[512];
            /* soon at first (the first heartbeat comes within ~10 ms: a
             * launch waits for it on every node, #32), then every 100 ms */
            for (useconds_t slept = 0, step = 2500; slept < 5000000; slept += step) {
                step = step * 2 < 100000 ? step * 2 : 100000;
                usleep(step);
                if (guardctl_heartbeat(o->state_dir, GUARD_FRESH_S, desc, sizeof desc) &&
                    lock_pid(o->state_dir) != (long)getpid()) {
                    printf("%s\n", desc);
                    return 0;
                }
                int st;
                if (waitpid(p, &st, WNOHANG) == p)
                    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
            }
            fprintf(stderr, "guard: the daemon did not report within 5 s (see %s/memguard.log)\n",
                    o->state_dir);
            return 1;
        }
        setsid();
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
        }
        signal(SIGHUP, SIG_IGN);
    }
    if (guard_open(&g, o, err, sizeof err) < 0) {
        fprintf(stderr, "guard: %s\n", err);
        return 1;
    }
    if (guard_drop_ambient() < 0)
        guard_log(&g, "warning: cannot clear the ambient capabilities (%s): the runtime CLI "
                  "it starts inherits them", strerror(errno));
    if (o->npids)
        guard_set_pids(&g, o->pids, o->npids);
    /* SIGTERM, SIGINT (and SIGHUP without --daemon) stop it cleanly */
    interrupt_install();
    interrupt_catch();
    interrupt_on_usr(on_usr);
    if (daemon && dup2(g.log_fd, 2) < 0) {
        /* stderr stays /dev/null's absence: the log has everything */
    }
    guard_run(&g, interrupt_token(), &g_resolve);
    guard_close(&g);
    return 0;
}

static int stop(const struct guard_opts *o)
{
    bool console = false, managed = false;
    struct procid id;
    long pid = lock_holder(o->state_dir, &console, &managed, &id);
    char desc[512], why[700];
    /* systemd would start it again at once, and fight the daemon launch
     * starts next for the lock: the unit's guard stays (launch says so) */
    if (pid > 0 && managed && guardctl_heartbeat(o->state_dir, 1 << 30, desc, sizeof desc)) {
        printf("guard %ld runs under systemd (dsv41-guard.service) and stays: "
               "`systemctl stop dsv41-guard` stops it\n", pid);
        return 0;
    }
    /* a console's guard thread lets go of the lock (SIGUSR2); the console
     * itself keeps running */
    int pfd = holder_open(o->state_dir, &id, why, sizeof why);
    if (pfd < 0 || signal_fd(pfd, console ? SIGUSR2 : SIGTERM) < 0) {
        printf("%s\n", pfd < 0 ? why : "no guard running");
        if (pfd >= 0)
            close(pfd);
        return 0; /* stop is idempotent */
    }
    int rc = 1;
    for (int i = 0; i < 50 && rc; i++) {
        /* the pidfd turns readable when its process ends */
        struct pollfd p = {pfd, POLLIN, 0};
        if (console ? (usleep(100000), lock_free(o->state_dir)) : poll(&p, 1, 100) > 0) {
            printf("guard %ld %s\n", pid, console ? "(the console's) let go" : "stopped");
            rc = 0;
        }
    }
    close(pfd);
    if (rc)
        fprintf(stderr, "guard %ld did not stop within 5 s\n", pid);
    return rc;
}

int guardctl(const struct guard_opts *o, enum guardctl_action a)
{
    char desc[512];
    switch (a) {
    case GUARD_RUN:
        return run(o, false);
    case GUARD_DAEMON:
        return run(o, true);
    case GUARD_STOP:
        return stop(o);
    case GUARD_RESOLVE: {
        struct procid id;
        char why[700];
        long pid = lock_holder(o->state_dir, NULL, NULL, &id);
        int pfd = holder_open(o->state_dir, &id, why, sizeof why);
        int sent = pfd >= 0 ? signal_fd(pfd, SIGUSR1) : -1;
        if (pfd >= 0)
            close(pfd);
        if (sent < 0) {
            printf("%s\n", pfd < 0 ? why : "no guard running");
            return 1;
        }
        printf("guard %ld asked to look for the ranks\n", pid);
        return 0;
    }
    case GUARD_STATUS: {
        int ok = guardctl_heartbeat(o->state_dir, GUARD_FRESH_S, desc, sizeof desc);
        printf("%s%s\n", ok ? "" : "NOT GUARDED: ", desc);
        return ok ? 0 : 1;
    }
    }
    return 2;
}

const struct usage_doc guardd_doc = {
    "dsv41-guard",
    "--state-dir DIR [--floor GIB] [--warn GIB] [--trace GIB] [--psi-warn PCT] [--psi-kill PCT] "
    "[--frag-warn N] [--kmsg-warn N] [--kmsg PATH] [--runtime docker|podman] "
    "[--socket PATH|none] [--ranks N] [--pid PID]... [--proc-root DIR] "
    "[--daemon | --stop | --status | --resolve]",
    "the memory guard of one node",
    "The memory guard of one node, which dsv41-top launch starts on every node (as this static "
    "program on a worker that has nothing of dsv41-top installed; dsv41-top guard on the head). "
    "It reads MemAvailable (every 2 ms near the floor to 1 s with room to spare), memory "
    "pressure (PSI), free 4 MiB blocks and the kernel's NVIDIA lines, warns before the floor, and below --floor GiB of MemAvailable (or "
    "above --psi-kill) kills the node's ranks (dsv41-r0 ...), through their cgroups, before "
    "the GB10 wedges.\n\n"
    "One guard per node: STATE_DIR/guard.HOST.lock (HOST: the node's hostname) holds it; the "
    "log is STATE_DIR/memguard.log, the heartbeat STATE_DIR/guard.HOST.heartbeat. Without "
    "--daemon, --stop, --status or --resolve it runs in the foreground until SIGINT/SIGTERM "
    "(a systemd unit's way, dsv41-guard.service).",
    (const struct usage_exit[]){{0, "ran until a signal; --stop, --resolve, --status: done, "
                                    "stopped, asked, or guarded"},
                                {1, "--status: no fresh heartbeat; --resolve: no guard running; "
                                    "the guard could not start (another holds the lock, "
                                    "STATE_DIR unwritable)"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--state-dir", "DIR", "where the lock, the log and the heartbeat are (needed)"},
        {"--floor", "GIB", "MemAvailable below this kills the ranks (default 1)"},
        {"--warn", "GIB", "MemAvailable below this is a warning (default 4)"},
        {"--trace", "GIB", "below this the log names the biggest processes every 10 s (default 10)"},
        {"--psi-warn", "PCT", "memory pressure (PSI full avg10) at or above this warns (default "
                              "10; 0 off)"},
        {"--psi-kill", "PCT", "... at or above this kills, like the floor (default 60; 0 off)"},
        {"--frag-warn", "N", "fewer free 4 MiB blocks than this warns (default 16; 0 off)"},
        {"--kmsg-warn", "N", "this many NVIDIA driver lines in the kernel log within 10 minutes "
                             "warn (default 1; 0 off)"},
        {"--kmsg", "PATH", "the kernel log to read (default /dev/kmsg)"},
        {"--runtime", "RUNTIME", "docker or podman: how the ranks' PIDs are found"},
        {"--socket", "PATH", "the runtime's API socket, or none for its command line"},
        {"--ranks", "N", "the containers dsv41-r0 .. dsv41-r(N-1) on this node (default 2)"},
        {"--pid", "PID", "guard this process too (repeatable)"},
        {"--proc-root", "DIR", "where /proc is (default /proc; tests give a fixture)"},
        {"--daemon", NULL, "detach; the log goes to STATE_DIR/memguard.log"},
        {"--stop", NULL, "stop this node's guard (only the process that holds the lock)"},
        {"--status", NULL, "whether this node's guard runs and its heartbeat is fresh"},
        {"--resolve", NULL, "ask the running guard to look for the ranks' PIDs now"},
        {NULL, NULL, NULL}}};

/* A whole number in [lo, hi], or -1. */
static long whole(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return *s && !*end && !errno && v >= lo && v <= hi ? v : -1;
}

/* A path into dst whole, or false: a path cut to fit would name another
 * file (a socket or a state directory that is not the one asked). */
static bool put_path(char *dst, size_t sz, const char *v)
{
    size_t len = strlen(v);
    if (len >= sz)
        return false;
    memcpy(dst, v, len + 1);
    return true;
}

int guardctl_parse(int argc, char **argv, struct guard_opts *o, enum guardctl_action *a, int *bad)
{
    *a = GUARD_RUN;
    long n;
    for (int i = 1; i < argc; i++) {
        *bad = i;
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(f, "--daemon") == 0)
            *a = GUARD_DAEMON;
        else if (strcmp(f, "--stop") == 0)
            *a = GUARD_STOP;
        else if (strcmp(f, "--status") == 0)
            *a = GUARD_STATUS;
        else if (strcmp(f, "--resolve") == 0)
            *a = GUARD_RESOLVE;
        else if (v && strcmp(f, "--floor") == 0 && guard_parse_gib(v, &o->floor_kib) == 0 && ++i)
            ;
        else if (v && strcmp(f, "--trace") == 0 && guard_parse_gib(v, &o->trace_kib) == 0 && ++i)
            ;
        else if (v && strcmp(f, "--warn") == 0 && guard_parse_gib(v, &o->warn_kib) == 0 && ++i)
            ;
        else if (v && strcmp(f, "--psi-warn") == 0 && (n = whole(v, 0, 100)) >= 0 && ++i)
            o->psi_warn = (int)n;
        else if (v && strcmp(f, "--psi-kill") == 0 && (n = whole(v, 0, 100)) >= 0 && ++i)
            o->psi_kill = (int)n;
        else if (v && strcmp(f, "--frag-warn") == 0 && (n = whole(v, 0, 1L << 40)) >= 0 && ++i)
            o->frag_warn = n;
        else if (v && strcmp(f, "--kmsg-warn") == 0 && (n = whole(v, 0, GUARD_KMSG_RING)) >= 0 &&
                 ++i)
            o->kmsg_warn = (int)n;
        else if (v && strcmp(f, "--kmsg") == 0 && put_path(o->kmsg_path, sizeof o->kmsg_path, v) && ++i)
            ;
        else if (v && strcmp(f, "--state-dir") == 0 && put_path(o->state_dir, sizeof o->state_dir, v) && ++i)
            ;
        else if (v && strcmp(f, "--proc-root") == 0 && put_path(o->proc_root, sizeof o->proc_root, v) && ++i)
            ;
        else if (v && strcmp(f, "--runtime") == 0 && guard_runtime_ok(v) && ++i)
            snprintf(o->runtime, sizeof o->runtime, "%s", v);
        else if (v && strcmp(f, "--socket") == 0 &&
                 (v[0] == '/' || !strncmp(v, "unix:///", 8) || !strcmp(v, "none")) &&
                 put_path(o->socket, sizeof o->socket, v) && ++i)
            ;
        else if (v && strcmp(f, "--ranks") == 0 && (n = whole(v, 0, GUARD_MAX_RANKS)) >= 0 && ++i)
            o->nranks = (int)n;
        else if (v && strcmp(f, "--pid") == 0 && (n = whole(v, 1, 1L << 22)) > 0 &&
                 o->npids < GUARD_MAX_RANKS && ++i)
            o->pids[o->npids++] = (pid_t)n;
        else
            return -1;
    }
    *bad = 0;
    return 0;
}
