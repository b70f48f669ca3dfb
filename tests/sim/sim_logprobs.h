/* vLLM's prompt_logprobs for a /v1/completions prompt (sim_logprobs.c says
 * where each part of the shape comes from). */
#ifndef DSV41_SIM_LOGPROBS_H
#define DSV41_SIM_LOGPROBS_H

#include <cjson/cJSON.h>

/* The array for choices[0].prompt_logprobs: null, then one object per
 * later prompt token; prompt is the request's "prompt" (text or token ids). */
cJSON *sim_prompt_logprobs(cJSON *prompt, int k);

#endif
