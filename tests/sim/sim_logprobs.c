/* sim_logprobs: vLLM's prompt logprobs, deterministically, for the output-drift
 * part of `accept`.
 *
 * The shape, as vLLM writes it (vllm 0.11+, read at commit 002032ee):
 * vllm/entrypoints/openai/completion/protocol.py: CompletionRequest.prompt_logprobs
 * (int | None; "must be an integer", "not available when stream=True") and
 * CompletionResponseChoice.prompt_logprobs: list[dict[int, Logprob] | None];
 * vllm/logprobs.py: Logprob = {logprob, rank, decoded_token};
 * vllm/v1/engine/logprobs.py, _make_logprob_dict: per position the prompt
 * token's own entry first (its true rank, which may be > k), then the top k
 * with ranks 1..k, one entry when the prompt token is among them; position 0
 * has no logprob: null. Keys are token ids, strings in JSON.
 * k above the server's --max-logprobs (default 20) is refused with 400.
 *
 * Tokens here are the simulator's: 4 bytes of the text each (sim_count_tokens'
 * rule), or the ids of a token-id prompt. A position's distribution depends
 * only on the two tokens before it, so two faithful images agree exactly;
 * DSV41_SIM_LOGPROB_DRIFT (baked into a drifting test image) moves every
 * logit by up to that many nats, as a broken kernel or quantisation would. */
#include "sim_logprobs.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOCAB 129280 /* DeepSeek V3/V4's vocabulary size */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* A number in [0, 1) from a seed and a salt. */
static double unit(uint64_t seed, uint64_t salt)
{
    return (double)(mix(seed * 0x9e3779b97f4a7c15ULL + salt) >> 11) / 9007199254740992.0;
}

static long chunk_id(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return (long)(mix(h) % VOCAB);
}

static void add_entry(cJSON *d, long id, double lp, long rank, const char *tok)
{
    char key[24];
    snprintf(key, sizeof key, "%ld", id);
    if (cJSON_GetObjectItemCaseSensitive(d, key))
        return; /* the prompt token among the top k: once */
    cJSON *e = cJSON_AddObjectToObject(d, key);
    cJSON_AddNumberToObject(e, "logprob", lp);
    cJSON_AddNumberToObject(e, "rank", (double)rank);
    cJSON_AddStringToObject(e, "decoded_token", tok);
}

/* One position: the prompt token `id` after `prev` and `prev2`. */
static cJSON *position(long prev2, long prev, long id, const char *tok, int k, double drift)
{
    uint64_t seed = mix((uint64_t)prev2 * 1000003ULL + (uint64_t)prev);
    /* 20 candidates, the logits falling by a step each, and the share of the
     * mass the top 20 hold; the prompt token is the top one half the time */
    long cand[20];
    double z[20], step = 0.3 + 1.2 * unit(seed, 1), top_mass = 0.8 + 0.19 * unit(seed, 2);
    for (int i = 0; i < 20; i++) {
        cand[i] = (long)(mix(seed + 100 + (uint64_t)i) % VOCAB);
        z[i] = -step * i + drift * (2 * unit(seed, 1000 + (uint64_t)i) - 1);
    }
    if (unit(seed, 3) < 0.5)
        cand[0] = id;
    /* the drift may reorder them: ranks follow the logits */
    for (int i = 1; i < 20; i++)
        for (int j = i; j > 0 && z[j] > z[j - 1]; j--) {
            double t = z[j];
            z[j] = z[j - 1];
            z[j - 1] = t;
            long c = cand[j];
            cand[j] = cand[j - 1];
            cand[j - 1] = c;
        }
    double sum = 0;
    for (int i = 0; i < 20; i++)
        sum += exp(z[i]);
    double lp[20];
    for (int i = 0; i < 20; i++)
        lp[i] = z[i] - log(sum) + log(top_mass);
    cJSON *d = cJSON_CreateObject();
    int own = -1;
    for (int i = 0; i < 20; i++)
        if (cand[i] == id)
            own = i;
    char name[16];
    if (own >= 0)
        add_entry(d, id, lp[own], own + 1, tok);
    else
        add_entry(d, id, lp[19] - 1 - 4 * unit(seed, 4), 21 + (long)(unit(seed, 5) * 500), tok);
    for (int i = 0; i < k && i < 20; i++) {
        snprintf(name, sizeof name, "t%ld", cand[i]);
        add_entry(d, cand[i], lp[i], i + 1, cand[i] == id ? tok : name);
    }
    return d;
}

cJSON *sim_prompt_logprobs(cJSON *prompt, int k)
{
    const char *env = getenv("DSV41_SIM_LOGPROB_DRIFT");
    double drift = env && *env ? atof(env) : 0;
    cJSON *out = cJSON_CreateArray();
    long prev2 = 0, prev = 0;
    if (cJSON_IsArray(prompt)) {
        cJSON *t;
        int pos = 0;
        cJSON_ArrayForEach(t, prompt)
        {
            long id = cJSON_IsNumber(t) ? (long)t->valuedouble : 0;
            char tok[24];
            snprintf(tok, sizeof tok, "t%ld", id);
            cJSON_AddItemToArray(out, pos++ ? position(prev2, prev, id, tok, k, drift)
                                            : cJSON_CreateNull());
            prev2 = prev;
            prev = id;
        }
        return out;
    }
    const char *s = cJSON_IsString(prompt) ? prompt->valuestring : "";
    size_t len = strlen(s);
    for (size_t at = 0, pos = 0; at < len || pos == 0; at += 4, pos++) {
        size_t n = len - at < 4 ? len - at : 4;
        char tok[8];
        for (size_t i = 0; i < n; i++) /* ASCII in JSON; vLLM would write U+FFFD */
            tok[i] = (unsigned char)s[at + i] < 0x80 ? s[at + i] : '?';
        tok[n] = '\0';
        long id = chunk_id(s + at, n);
        cJSON_AddItemToArray(out, pos ? position(prev2, prev, id, tok, k, drift)
                                      : cJSON_CreateNull());
        prev2 = prev;
        prev = id;
        if (at + 4 >= len)
            break;
    }
    return out;
}
