/* One trial of the guard benchmark: takes memory in 16 MiB steps, 256 KiB
 * ones within 64 MiB of the floor (the crossing is then seen within a step's
 * ~0.1-0.6 ms), until MemAvailable drops below the floor (that instant is
 * t0), keeps it, and waits on the victim's pidfd until it is dead (t1).
 * The pidfd is asked after every step too: a guard that saw the crossing
 * first (MemAvailable dips for a moment with other processes' allocations)
 * may kill before t0, and the death is then timed when it came, not when
 * the eating would have ended (tests/bench/guard_lib.sh takes the crossing
 * as the earlier of t0 and the guard's own). Prints "t0 t1" in
 * CLOCK_MONOTONIC seconds ("-" for a t0 not seen), or "timeout" / "error" /
 * "no-crossing". Never takes MemAvailable below MIN_MIB. It
 * runs SCHED_FIFO above the guard where it may: a CPU hog beside it must not
 * delay its own reading of the crossing (a late t0 flatters the guard).
 * usage: bench_guard VICTIM_PID FLOOR_KIB MIN_MIB */
#include <sched.h>
#include <poll.h>
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

static int dead(int pidfd, int ms)
{
    struct pollfd p = {pidfd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
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
    int victim = (int)syscall(SYS_pidfd_open, atoi(argv[1]), 0);
    long floor_kib = atol(argv[2]), min_kib = atol(argv[3]) * 1024;
    int mfd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (victim < 0 || mfd < 0) {
        puts("error");
        return 1;
    }
    struct sched_param sp = {.sched_priority = 2};
    (void)sched_setscheduler(0, SCHED_FIFO, &sp);
    char *blocks[1024];
    int n = 0;
    double t0 = -1, t1 = -1;
    while (n < 1024) {
        long a = avail_kib(mfd);
        if (a < floor_kib) {
            t0 = now_s();
            break;
        }
        if (dead(victim, 0)) {
            t1 = now_s();
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
    if (t0 < 0 && t1 < 0) {
        puts("no-crossing");
        return 1;
    }
    if (t1 < 0 && dead(victim, 5000))
        t1 = now_s();
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
