/* One trial of the guard benchmark: takes memory in 16 MiB steps, 256 KiB
 * ones within 64 MiB of the floor (t0 is then within a step's ~0.1 ms of the
 * crossing), until MemAvailable drops below the floor (that instant is t0),
 * keeps it, and waits on the victim's pidfd until it is dead (t1). Prints
 * t1 - t0 in ms and t0 in CLOCK_MONOTONIC seconds, or "timeout". Never
 * takes MemAvailable below MIN_MIB. It runs SCHED_FIFO above the guard
 * where it may: a CPU hog beside it must not delay its own reading of the
 * crossing (a late t0 flatters the guard).
 * usage: bench_guard VICTIM_PID FLOOR_KIB MIN_MIB */
#include <sched.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int victim = (int)syscall(SYS_pidfd_open, atoi(argv[1]), 0);
    long floor_kib = atol(argv[2]), min_kib = atol(argv[3]) * 1024;
    int mfd = fopen("/proc/meminfo", "r") ? fileno(fopen("/proc/meminfo", "r")) : -1;
    if (victim < 0 || mfd < 0) {
        puts("error");
        return 1;
    }
    struct sched_param sp = {.sched_priority = 2};
    (void)sched_setscheduler(0, SCHED_FIFO, &sp);
    char *blocks[1024];
    int n = 0;
    double t0 = -1;
    while (n < 1024) {
        long a = avail_kib(mfd);
        if (a < floor_kib) {
            t0 = now_ms();
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
    if (t0 < 0) {
        puts("no-crossing");
        return 1;
    }
    struct pollfd p = {victim, POLLIN, 0};
    int r = poll(&p, 1, 5000);
    double t1 = now_ms();
    if (r == 1) /* and the crossing on the guard's clock: its FIRED line says when it sent */
        printf("%.2f %.6f\n", t1 - t0, t0 / 1e3);
    else
        puts("timeout");
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    return 0;
}
