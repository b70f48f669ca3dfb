/* The simulator's engine as /metrics and the periodic stats line show it:
 * vLLM's names (REFERENCE.md §3) and vLLM v1's timing, each behaviour from
 * vLLM's source (vllm-project/vllm main; docs/testing.md's table):
 * - a request is running from its arrival (the scheduler's running list
 *   holds a prefilling request: scheduler.py, make_stats' num_running_reqs);
 * - its prefill runs in chunks of --max-num-batched-tokens (2,048) at the
 *   prefill rate, each chunk's KV blocks (--block-size 256) allocated when
 *   it is scheduled, so vllm:kv_cache_usage_perc rises chunk by chunk and
 *   falls when the request ends (kv_cache_manager.usage, set every step:
 *   scheduler.py, update_from_output returns the stats "even if there are no
 *   request outputs this step");
 * - vllm:prompt_tokens_total takes the whole prompt only with the first
 *   token (v1/metrics/stats.py, IterationStats.update_from_output: the
 *   prompt is counted in the step "is_prefilling" ends), and
 *   vllm:generation_tokens_total each token;
 * - a frozen engine (a dead peer rank: the step in flight never ends) moves
 *   nothing: no counter, no gauge, no stats line, while /health answers 200;
 *   a request that comes after the freeze is never seen by the scheduler
 *   (EngineCoreProc reads its input queue between steps), and one aborted
 *   meanwhile stays running.
 * Speculative decoding is modelled as one draft of 7 tokens per 3 generated
 * tokens, 2 of them accepted (acceptance 2/7, mean acceptance length 3); the
 * prefix cache hits the part of a prompt shared with the previous one. */
#ifndef DSV41_SIM_METRICS_H
#define DSV41_SIM_METRICS_H

#include <stdbool.h>

#include "buf.h"

/* The engine's shape: chunk (--max-num-batched-tokens), block (--block-size)
 * and pool (tokens of KV cache), and the prefill rate. Call once before any
 * request. DSV41_SIM_FREEZE_AFTER_MS=N freezes the engine N ms after the
 * first request arrives (a collective that never returns mid-prefill). */
void sim_engine_init(long chunk, long block, long pool_tokens, double prefill_tps);
/* The engine stops from now on (the peer rank is gone). */
void sim_engine_freeze(void);
bool sim_engine_frozen(void);

/* A request arrives (it counts as running at once); returns its slot. */
int sim_metrics_request(long prompt_tokens, const char *prompt);
void sim_metrics_token(int slot);
void sim_metrics_first_token(int slot, double ttft_s);
void sim_metrics_gap(double itl_s);
void sim_metrics_done(int slot, double e2e_s);
void sim_metrics_text(struct buf *out, const char *model);
/* vLLM's periodic line (LoggingStatLogger.log, every 10 s), or "" when it
 * logs nothing: idle for two intervals it logs at debug level ("Avoid log
 * noise on an idle production system"), and so during a long prefill too,
 * which moves neither throughput. */
void sim_metrics_stats_line(char *out, size_t n, double interval_s);

#endif
