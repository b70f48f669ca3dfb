/* Log chatter for console tests and benches, once the rank has booted:
 * DSV41_SIM_LOG_FILE=PATH writes the file's bytes to stdout as they are
 * (hostile bytes included), DSV41_SIM_LOG_RATE=N prints N vLLM-like log
 * lines a second until the rank stops. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

static volatile int *g_stopp;

static void dump_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sim_log("DSV41_SIM_LOG_FILE: cannot open %s", path);
        return;
    }
    char b[65536];
    ssize_t n;
    fflush(stdout);
    while ((n = read(fd, b, sizeof b)) > 0)
        if (write(1, b, (size_t)n) != n)
            break;
    close(fd);
}

static void *chatter(void *arg)
{
    double rate = *(double *)arg;
    free(arg);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long long n = 0;
    while (!*g_stopp) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
        unsigned long long due = (unsigned long long)(el * rate);
        for (; n < due; n++)
            printf("INFO %llu [loggers.py:123] Engine 000: Avg prompt throughput: %.1f tokens/s, "
                   "Avg generation throughput: %.1f tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
                   "GPU KV cache usage: %.1f%%, line %llu\n",
                   n, 2000.0 + (double)(n % 50), 40.0 + (double)(n % 7), (double)(n % 100) / 10, n);
        fflush(stdout);
        usleep(10000);
    }
    return NULL;
}

void sim_chatter_start(volatile int *stop)
{
    g_stopp = stop;
    const char *file = getenv("DSV41_SIM_LOG_FILE");
    if (file && *file)
        dump_file(file);
    const char *r = getenv("DSV41_SIM_LOG_RATE");
    double *rate = r && atof(r) > 0 ? malloc(sizeof *rate) : NULL;
    if (!rate)
        return;
    *rate = atof(r);
    pthread_t th;
    if (pthread_create(&th, NULL, chatter, rate) == 0)
        pthread_detach(th);
    else
        free(rate);
}
