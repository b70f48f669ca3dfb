/* bench: speed measured the way `vllm bench serve` defines it (REFERENCE.md
 * §4): prefill tok/s = prompt tokens / TTFT on fresh random token ids;
 * decode per stream = (n-1)/(t_last - t_first); aggregate over C streams =
 * sum n / (max t_last - min t_first); no output caps. Each step waits for an
 * idle server and is saved before the next, in the script era's JSON shape. */
#ifndef DSV41_BENCH_H
#define DSV41_BENCH_H

#include <stdbool.h>

#include "completion.h"

#define BENCH_MAX_LIST 16

struct bench_opts {
    const char *base, *key, *out, *label;
    int prefill[BENCH_MAX_LIST], nprefill;
    int conc[BENCH_MAX_LIST], nconc;
    const char *kinds[2];
    int nkinds;
    int ctx[BENCH_MAX_LIST], nctx;
    int reps, dec_reps;
    bool greedy;
    int timeout_s;
};

/* Per-stream decode rate of one completion; -1 when too short to say. */
double bench_decode_rate(const struct completion *c);
/* Aggregate decode rate over n completions. */
double bench_aggregate_rate(const struct completion *const *c, int n);
double bench_percentile(double *v, int n, double p);
/* Runs the whole bench; 0 when every step produced a figure. */
int bench_run(const struct bench_opts *o);

#endif
