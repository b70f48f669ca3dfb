/* Figures for make bench (no pass/fail): the time of a status of both nodes
 * over a warm session, and the head's CPU cost of sampling the worker at a
 * fixed rate. Configuration comes from the environment, as for dsv41-top. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "cluster.h"
#include "mono.h"
#include "status.h"

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_status warm N | sample SECONDS INTERVAL_MS\n");
        return 2;
    }
    struct config c;
    struct cluster cl;
    harness_open(&c, &cl);
    int rc = 0;
    if (strcmp(argv[1], "warm") == 0) {
        int n = atoi(argv[2]);
        double *t = calloc((size_t)n, sizeof *t);
        struct status_report *r = malloc(sizeof *r);
        double t0 = mono_s();
        status_collect(&c, &cl, r); /* cold: connects */
        double cold = mono_s() - t0;
        /* the cold round's own steps (a launch starts with one) */
        for (int k = 0; k < 2 && r; k++)
            for (int q = 0; q < STATUS_STEPS; q++)
                printf("cold_step %s %s %.2f\n", k ? "worker" : "head", status_step_names[q],
                       r->nodes[k].step_ms[q]);
        if (r)
            printf("cold_step head api %.2f\ncold_step head metrics %.2f\n", r->api_ms,
                   r->metrics_ms);
        /* where the time goes: each step's median, per node, and the head's own */
        enum { STEPS = STATUS_STEPS + 2 };
        double *step = calloc((size_t)n * STEPS * 2, sizeof *step);
        for (int i = 0; i < n && t && r && step; i++) {
            t0 = mono_s();
            status_collect(&c, &cl, r);
            t[i] = mono_s() - t0;
            if (!r->nodes[1].snap.reachable)
                rc = 1;
            for (int k = 0; k < 2; k++)
                for (int q = 0; q < STATUS_STEPS; q++)
                    step[(k * STEPS + q) * n + i] = r->nodes[k].step_ms[q];
            step[STATUS_STEPS * n + i] = r->api_ms;
            step[(STATUS_STEPS + 1) * n + i] = r->metrics_ms;
        }
        qsort(t, (size_t)n, sizeof *t, cmp);
        printf("cold_ms %.2f\nwarm_median_ms %.2f\nwarm_p90_ms %.2f\n", cold * 1e3,
               t[n / 2] * 1e3, t[n * 9 / 10] * 1e3);
        for (int k = 0; k < 2 && step; k++)
            for (int q = 0; q < STEPS; q++) {
                if (k == 1 && q >= STATUS_STEPS)
                    continue; /* the API and the metrics are the head's alone */
                double *v = &step[(k * STEPS + q) * n];
                qsort(v, (size_t)n, sizeof *v, cmp);
                printf("step %s %s %.2f\n", k ? "worker" : "head",
                       q < STATUS_STEPS ? status_step_names[q] : q == STATUS_STEPS ? "api" : "metrics",
                       v[n / 2]);
            }
        free(step);
        free(t);
        free(r);
    } else {
        double secs = atof(argv[2]);
        int interval = argc > 3 ? atoi(argv[3]) : 1000;
        struct cluster_node *w = &cl.nodes[1];
        w->sampler = sampler_start(&w->node, config_str(&c, CFG_RUNTIME), 2, &w->ov);
        struct snapshot *s = malloc(sizeof *s);
        if (!w->sampler || !s || sampler_request(w->sampler, 10000, s) < 0) {
            fprintf(stderr, "cannot sample the worker: %s\n", s ? s->error : "");
            return 1;
        }
        double c0 = cpu_s(), t0 = mono_s();
        int samples = 0;
        while (mono_s() - t0 < secs) {
            if (sampler_request(w->sampler, 10000, s) == 0)
                samples++;
            usleep((useconds_t)interval * 1000);
        }
        double wall = mono_s() - t0, cpu = cpu_s() - c0;
        printf("samples %d\nwall_s %.2f\nhead_cpu_s %.4f\nhead_core_pct %.3f\n", samples, wall,
               cpu, 100.0 * cpu / wall);
        free(s);
    }
    cluster_close(&cl);
    config_free(&c);
    return rc;
}
