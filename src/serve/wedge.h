/* wedge: is the engine wedged? A dead peer rank leaves rank 0 answering
 * /health while no request makes progress, so the only sign is in the
 * metrics. One rule for every reader (status's one-shot wait, the console's
 * and watch's collector, incidents): fed successive scrapes, it says wedged
 * once requests have been running with nothing moving for the limit.
 *
 * What moves while vLLM v1 works (read in vllm-project/vllm main, late 2026;
 * docs/serve.md has the details):
 * - vllm:generation_tokens_total grows by each step's new tokens, and
 *   vllm:prompt_tokens_total by a request's whole prompt only in the step that
 *   yields its first token (vllm/v1/metrics/stats.py,
 *   IterationStats.update_from_output: the prompt is counted "if
 *   is_prefilling", and the scheduler makes an output for a request only once
 *   its prefill is whole). A chunked prefill of a 262,144-token prompt at
 *   2,050 tok/s moves neither counter for ~128 s.
 * - The gauges come with every engine step, outputs or not
 *   (vllm/v1/core/sched/scheduler.py, Scheduler.update_from_output: "We must
 *   return the stats even if there are no request outputs this step";
 *   make_stats: kv_cache_usage = kv_cache_manager.usage, num_running_reqs =
 *   len(self.running), where a prefilling request is). Each chunk of a prefill
 *   (--max-num-batched-tokens, 2,048 here) allocates its KV blocks, so
 *   vllm:kv_cache_usage_perc rises step by step.
 * - A hung collective (a dead or stuck peer rank) blocks the step: no
 *   counter moves and no gauge changes, while /health still answers 200.
 * So progress is either counter moving or any of the gauges (running,
 * waiting, KV usage) changing: no allowance for a prefill is needed, and a
 * freeze part-way through one is seen as soon as a mid-decode one is.
 * Pure: time is passed in. */
#ifndef DSV41_WEDGE_H
#define DSV41_WEDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"
#include "probe.h"

struct wedge {
    bool have_prev;
    bool moving;        /* the last scrape showed progress (or no requests) */
    struct metrics prev;
    double moved_t;     /* when something last moved, or the server was idle */
};

#define WEDGE_INIT {0}

/* A scrape taken at now (seconds). limit_s <= 0 turns the rule off.
 * Returns true and writes the reason into why when the engine is wedged. */
bool wedge_feed(struct wedge *w, const struct metrics *m, double now, double limit_s, char *why,
                size_t n);
/* A failed scrape: the next one starts afresh. */
void wedge_reset(struct wedge *w);
/* The GPUs' power beside a wedge verdict, where NVML or nvidia-smi has it: a
 * collective spinning on a dead peer draws little (an H200: 118 W of 700;
 * REFERENCE §8), a prefill much. Appends "; GPU power ..." and whether it
 * corroborates to why (size n); nothing when no GPU reports power. */
void wedge_gpu_note(const struct probe_gpu *const *gpus, const char *const *names, int ngpu,
                    char *why, size_t n);

/* Below this share of its power limit a GPU is "low": spinning, not computing. */
#define WEDGE_GPU_LOW_SHARE 0.35

#endif
