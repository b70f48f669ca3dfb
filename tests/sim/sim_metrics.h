/* The simulator's /metrics: vLLM's names (REFERENCE.md §3), moving with the
 * tokens it serves. Speculative decoding is modelled as one draft of 7 tokens
 * per 3 generated tokens, 2 of them accepted (acceptance 2/7, mean acceptance
 * length 3); the prefix cache hits the part of a prompt shared with the
 * previous one. */
#ifndef DSV41_SIM_METRICS_H
#define DSV41_SIM_METRICS_H

#include "buf.h"

void sim_metrics_request(long prompt_tokens, const char *prompt);
void sim_metrics_token(void);
void sim_metrics_first_token(double ttft_s);
void sim_metrics_gap(double itl_s);
void sim_metrics_done(double e2e_s);
void sim_metrics_text(struct buf *out, const char *model);

#endif
