/* One trial of the guard benchmark: takes memory in 16 MiB steps, 256 KiB
 * ones within 64 MiB of the floor (the crossing is then seen within a step's
 * ~0.1-0.6 ms), until MemAvailable drops below the floor (that instant is
 * t0), keeps it, and has the victim's death (t1) from a waiter thread
 * blocked on its pidfd. A guard that saw the crossing first (MemAvailable
 * dips for a moment with other processes' allocations) may kill before t0:
 * the eating then stops at the death (tests/bench/guard_lib.sh takes the
 * crossing as the earlier of t0 and the guard's own). Prints "t0 t1" in
 * CLOCK_MONOTONIC seconds ("-" for a t0 not seen), or "timeout" / "error" /
 * "no-crossing". Never takes MemAvailable below MIN_MIB.
 * The eating runs SCHED_FIFO above the guard where it may: a CPU hog beside
 * it must not delay its own reading of the crossing (a late t0 flatters the
 * guard). That starves its core's other tasks, and Linux >= 6.12 then runs
 * them for up to 50 ms a second ahead of every real-time task there (the
 * fair server, kernel/sched/deadline.c): a waiter on that core was woken at
 * the death and ran up to ~50 ms later (ftrace on the test VM, 2026-12-07:
 * a rank dead 2.5 ms after the crossing timed at 52.3). So the eater stays
 * on its core and the waiter, at a higher priority, on the others.
 * usage: bench_guard VICTIM_PID FLOOR_KIB MIN_MIB */
#include <errno.h>
#include <sched.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static long avail_kib(int fd)
{
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strstr(buf, "MemAvailable:");
    return p ? atol(p + 13) : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct {
    int pidfd;
    cpu_set_t others; /* the CPUs this process may use but the eater's */
    _Atomic int ready; /* the waiter is off the eater's core, at its priority */
    _Atomic double t1; /* the death seen; -1 not yet */
} w = {.t1 = -1};

static void *waiter(void *arg)
{
    (void)arg;
    if (CPU_COUNT(&w.others) > 0 && sched_setaffinity(0, sizeof w.others, &w.others) != 0)
        perror("bench_guard: the waiter's CPUs");
    struct sched_param sp = {.sched_priority = 3};
    (void)sched_setscheduler(0, SCHED_FIFO, &sp); /* this thread */
    atomic_store(&w.ready, 1);
    struct pollfd p = {w.pidfd, POLLIN, 0};
    for (;;) {
        int r = poll(&p, 1, -1);
        if (r == 1)
            break;
        if (r < 0 && errno != EINTR)
            return NULL; /* no death seen: "timeout" */
    }
    atomic_store(&w.t1, now_s());
    return NULL;
}

static void put(double t)
{
    if (t < 0)
        printf("-");
    else
        printf("%.6f", t);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    w.pidfd = (int)syscall(SYS_pidfd_open, atoi(argv[1]), 0);
    long floor_kib = atol(argv[2]), min_kib = atol(argv[3]) * 1024;
    int mfd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (w.pidfd < 0 || mfd < 0) {
        puts("error");
        return 1;
    }
    /* the eater stays on the core it starts on; the waiter gets the rest
     * of this process's CPUs (none on one CPU: there its priority above the
     * eater's is what lets it run) */
    int cpu = sched_getcpu();
    cpu_set_t mine;
    CPU_ZERO(&w.others);
    if (cpu >= 0 && sched_getaffinity(0, sizeof mine, &mine) == 0) {
        w.others = mine;
        CPU_CLR(cpu, &w.others);
        CPU_ZERO(&mine);
        CPU_SET(cpu, &mine);
        (void)sched_setaffinity(0, sizeof mine, &mine);
    }
    pthread_t th;
    if (pthread_create(&th, NULL, waiter, NULL) != 0) {
        puts("error");
        return 1;
    }
    /* the waiter off this core before the eating holds it */
    for (int i = 0; i < 10000 && !atomic_load(&w.ready); i++)
        usleep(100);
    struct sched_param sp = {.sched_priority = 2};
    (void)sched_setscheduler(0, SCHED_FIFO, &sp);
    char *blocks[1024];
    int n = 0;
    double t0 = -1;
    while (n < 1024 && atomic_load(&w.t1) < 0) {
        long a = avail_kib(mfd);
        if (a < floor_kib) {
            t0 = now_s();
            break;
        }
        size_t step = a - floor_kib > 65536 ? 16u << 20 : 256u << 10;
        if (a - (long)(step >> 10) < min_kib)
            break;
        blocks[n] = malloc(step);
        if (!blocks[n])
            break;
        memset(blocks[n++], 1, step);
    }
    /* the eating is over: this thread need not hold its core any more */
    sp.sched_priority = 0;
    (void)sched_setscheduler(0, SCHED_OTHER, &sp);
    if (t0 < 0 && atomic_load(&w.t1) < 0) {
        puts("no-crossing");
        return 1;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    double t1 = pthread_timedjoin_np(th, NULL, &until) == 0 ? atomic_load(&w.t1) : -1;
    if (t1 < 0)
        puts("timeout");
    else {
        put(t0);
        printf(" ");
        printf(" %.6f\n", t1);
    }
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    return 0;
}
