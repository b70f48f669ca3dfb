/* metrics: vLLM's Prometheus text (/metrics) parsed into the figures the
 * operator watches, and rates from two scrapes: prompt and generation tok/s,
 * mean TTFT over the interval, prefix-cache hit rate, speculative acceptance.
 * Label sets (engines) are summed. Pure. A figure the server does not export
 * stays n/a. */
#ifndef DSV41_METRICS_H
#define DSV41_METRICS_H

#include <stdbool.h>

#include "probe.h"

#define METRICS_NFIELDS 17

struct metrics {
    struct pval running, waiting, kv_usage;                 /* gauges */
    struct pval prompt_tokens, generation_tokens, preemptions;   /* counters */
    struct pval prefix_queries, prefix_hits;
    struct pval spec_drafts, spec_draft_tokens, spec_accepted;
    struct pval ttft_sum, ttft_count, itl_sum, itl_count, e2e_sum, e2e_count;
    int samples; /* lines taken (a figure's older name beside its newer is not) */
    unsigned char alias[METRICS_NFIELDS]; /* which of a figure's names the page used */
};

struct metrics_rates {
    struct pval prompt_tps, generation_tps;
    struct pval mean_ttft_s, mean_itl_s;
    struct pval prefix_hit_rate;     /* 0..1 over the interval */
    struct pval spec_acceptance;     /* accepted / draft tokens */
    struct pval spec_mean_accept_len; /* 1 + accepted / drafts */
};

/* Returns the number of vLLM samples found; -1 when the text is not
 * Prometheus exposition at all. */
int metrics_parse(const char *text, struct metrics *m);
/* A scrape's text says no request runs or waits (the running gauge must be
 * there: a page without it says nothing). bench and accept wait for this. */
bool metrics_text_idle(const char *text);
/* The name (without "_total") the page gave a figure under, e.g.
 * metrics_name(m, &m->kv_usage) is "vllm:gpu_cache_usage_perc" on vLLM
 * before 0.11; NULL when the figure is n/a. */
const char *metrics_name(const struct metrics *m, const struct pval *field);
/* True when that name is one vLLM has since renamed. */
bool metrics_name_is_old(const struct metrics *m, const struct pval *field);
/* Figure i (0 .. METRICS_NFIELDS-1): the name it came under (NULL when
 * n/a), whether that name is an older one, and its value (either out may
 * be NULL). */
const char *metrics_field(const struct metrics *m, int i, bool *old, struct pval *value);
/* The renamed names the page used, comma-separated ("" when none). */
void metrics_old_names(const struct metrics *m, char *out, size_t sz);
/* Rates between two scrapes dt seconds apart; a counter that went back (a
 * restarted server) gives n/a, never a negative rate. */
void metrics_rates(const struct metrics *prev, const struct metrics *cur, double dt,
                   struct metrics_rates *r);

#endif
