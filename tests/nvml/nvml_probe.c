/* nvml-probe: the GPU sample through NVML beside nvidia-smi's, at the same
 * moment, and what one sample costs each way. For a machine with an NVIDIA
 * driver (the device tool's H200; `make bench` prints it where NVML opens)
 * and for the tests, against the stand-in library (DSV41_NVML_LIB).
 *
 *   nvml-probe [--samples N] [--smi-runs M] [--csv]
 *
 * --csv prints only the two CSV blocks NVML gave (what a fixture keeps).
 * Exit 2 when NVML does not open. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nvml.h"
#include "probe.h"

static double secs(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs nvidia-smi with the snapshot's query into out; its CPU time (user +
 * system of the child) and wall time added to *cpu and *wall. */
static int smi(const char *query, struct buf *out, double *cpu, double *wall)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    double t0 = secs(CLOCK_MONOTONIC);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execlp("nvidia-smi", "nvidia-smi", query, "--format=csv,noheader,nounits", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char tmp[4096];
    ssize_t n;
    while ((n = read(p[0], tmp, sizeof tmp)) > 0)
        buf_append(out, tmp, (size_t)n);
    close(p[0]);
    int st = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
        return -1;
    *wall += secs(CLOCK_MONOTONIC) - t0;
    *cpu += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void show(const char *label, const struct pval *a, const struct pval *b)
{
    char x[32] = "n/a", y[32] = "n/a";
    if (a->ok)
        snprintf(x, sizeof x, "%.2f", a->v);
    if (b->ok)
        snprintf(y, sizeof y, "%.2f", b->v);
    printf("  %-14s nvml %-10s nvidia-smi %-10s%s\n", label, x, y,
           a->ok == b->ok && (!a->ok || a->v == b->v) ? "" : "  (differs)");
}

static void compare(const char *nv, const char *sm)
{
    struct probe_gpu a[4], b[4];
    int na = probe_parse_gpu_csv(nv, a, 4), nb = probe_parse_gpu_csv(sm, b, 4);
    printf("== parsed: %d GPU(s) through NVML, %d through nvidia-smi\n", na, nb);
    for (int i = 0; i < na && i < nb; i++) {
        printf("  GPU %d: %s / %s, uuid %s\n", i, a[i].name, b[i].name,
               strcmp(a[i].uuid, b[i].uuid) ? "DIFFERS" : "same");
        show("util %", &a[i].util_pct, &b[i].util_pct);
        show("temp C", &a[i].temp_c, &b[i].temp_c);
        show("power W", &a[i].power_w, &b[i].power_w);
        show("power limit W", &a[i].power_limit_w, &b[i].power_limit_w);
        show("mem total MiB", &a[i].mem_total_mib, &b[i].mem_total_mib);
        show("mem used MiB", &a[i].mem_used_mib, &b[i].mem_used_mib);
        show("mem free MiB", &a[i].mem_free_mib, &b[i].mem_free_mib);
        show("sm clock MHz", &a[i].sm_clock_mhz, &b[i].sm_clock_mhz);
    }
}

int main(int argc, char **argv)
{
    int samples = 1000, runs = 10;
    bool csv = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--samples") && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--smi-runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = true;
        else {
            fprintf(stderr, "usage: nvml-probe [--samples N] [--smi-runs M] [--csv]\n");
            return 2;
        }
    }
    struct buf gpu = BUF_INIT, apps = BUF_INIT, why = BUF_INIT;
    double t0 = secs(CLOCK_MONOTONIC);
    if (nvml_gpu_csv(&gpu, &why) < 0 || nvml_apps_csv(&apps, &why) < 0) {
        fprintf(stderr, "nvml-probe: NVML: %s\n", buf_str(&why));
        return 2;
    }
    double open_s = secs(CLOCK_MONOTONIC) - t0;
    if (csv) {
        char drv[96];
        printf("%s", buf_str(&gpu));
        printf("== apps\n%s", buf_str(&apps));
        printf("== driver\n%s\n", nvml_driver_version(drv, sizeof drv, &why) == 0 ? drv : "n/a");
        return 0;
    }
    /* the two ways at the same moment */
    struct buf sg = BUF_INIT, sa = BUF_INIT;
    double cpu = 0, wall = 0;
    int rc = smi("--query-gpu=" PROBE_GPU_QUERY, &sg, &cpu, &wall);
    smi("--query-compute-apps=" PROBE_APPS_QUERY, &sa, &cpu, &wall);
    printf("== NVML (opened in %.1f ms)\n%s== NVML apps\n%s", open_s * 1e3, buf_str(&gpu),
           buf_str(&apps));
    printf("== nvidia-smi (exit %d)\n%s== nvidia-smi apps\n%s", rc, buf_str(&sg), buf_str(&sa));
    if (rc == 0)
        compare(buf_str(&gpu), buf_str(&sg));
    /* the cost of one sample each way */
    double c0 = secs(CLOCK_PROCESS_CPUTIME_ID), w0 = secs(CLOCK_MONOTONIC);
    for (int i = 0; i < samples; i++) {
        buf_reset(&gpu);
        buf_reset(&apps);
        nvml_gpu_csv(&gpu, &why);
        nvml_apps_csv(&apps, &why);
    }
    double nc = (secs(CLOCK_PROCESS_CPUTIME_ID) - c0) / samples * 1e6;
    double nw = (secs(CLOCK_MONOTONIC) - w0) / samples * 1e6;
    printf("== one sample (GPUs and their processes)\n");
    printf("  NVML:       %8.1f us CPU, %8.1f us wall (mean of %d)\n", nc, nw, samples);
    if (rc == 0 && runs > 0) {
        cpu = wall = 0;
        for (int i = 0; i < runs; i++) {
            buf_reset(&sg);
            buf_reset(&sa);
            smi("--query-gpu=" PROBE_GPU_QUERY, &sg, &cpu, &wall);
            smi("--query-compute-apps=" PROBE_APPS_QUERY, &sa, &cpu, &wall);
        }
        printf("  nvidia-smi: %8.1f us CPU, %8.1f us wall (mean of %d, two starts each)\n",
               cpu / runs * 1e6, wall / runs * 1e6, runs);
    }
    buf_free(&gpu);
    buf_free(&apps);
    buf_free(&why);
    buf_free(&sg);
    buf_free(&sa);
    return 0;
}
