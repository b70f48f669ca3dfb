#include "sim_metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REQS 256

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

struct req {
    bool used, first; /* first: its prefill has ended (the first token came) */
    double t_req;
    long ptok, gen;
};

static struct {
    long chunk, block, pool_blocks;
    double prefill_tps;
    double freeze_after_s; /* DSV41_SIM_FREEZE_AFTER_MS; < 0: never */
    double frozen_at;      /* 0: running */
    struct req reqs[MAX_REQS];
    long requests;
    double prompt, gen, preempt, pq, ph, drafts, draft_tokens, accepted;
    double ttft_sum, ttft_count, itl_sum, itl_count, e2e_sum, e2e_count;
    double ttft_le[4]; /* 0.1, 1, 10, +Inf */
    char *prev_prompt;
    /* the stats line's interval */
    double log_prompt, log_gen, last_prompt_tps, last_gen_tps;
} M = {.chunk = 2048, .block = 256, .pool_blocks = 7905, .prefill_tps = 2000,
       .freeze_after_s = -1};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The engine's clock: it stops when the engine freezes. Under mu. */
static double engine_now(void)
{
    double t = mono();
    return M.frozen_at > 0 && t > M.frozen_at ? M.frozen_at : t;
}

void sim_engine_init(long chunk, long block, long pool_tokens, double prefill_tps)
{
    pthread_mutex_lock(&mu);
    if (chunk > 0)
        M.chunk = chunk;
    if (block > 0)
        M.block = block;
    if (pool_tokens > 0)
        M.pool_blocks = pool_tokens / M.block > 0 ? pool_tokens / M.block : 1;
    if (prefill_tps > 0)
        M.prefill_tps = prefill_tps;
    const char *f = getenv("DSV41_SIM_FREEZE_AFTER_MS");
    M.freeze_after_s = f && *f ? atof(f) / 1000 : -1;
    pthread_mutex_unlock(&mu);
}

void sim_engine_freeze(void)
{
    pthread_mutex_lock(&mu);
    if (M.frozen_at == 0)
        M.frozen_at = mono();
    pthread_mutex_unlock(&mu);
}

bool sim_engine_frozen(void)
{
    pthread_mutex_lock(&mu);
    bool f = M.frozen_at > 0 && mono() >= M.frozen_at;
    pthread_mutex_unlock(&mu);
    return f;
}

int sim_metrics_request(long prompt_tokens, const char *prompt)
{
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < MAX_REQS && slot < 0; i++)
        if (!M.reqs[i].used)
            slot = i;
    double now = mono();
    if (slot >= 0)
        M.reqs[slot] = (struct req){true, false, now, prompt_tokens, 0};
    if (M.requests++ == 0 && M.freeze_after_s >= 0 && M.frozen_at == 0)
        M.frozen_at = now + M.freeze_after_s;
    M.pq += (double)prompt_tokens;
    size_t common = 0;
    if (M.prev_prompt)
        while (prompt[common] && prompt[common] == M.prev_prompt[common])
            common++;
    double hit = (double)(common / 4);
    M.ph += hit < (double)prompt_tokens ? hit : (double)prompt_tokens;
    free(M.prev_prompt);
    M.prev_prompt = strdup(prompt);
    pthread_mutex_unlock(&mu);
    return slot;
}

void sim_metrics_token(int slot)
{
    pthread_mutex_lock(&mu);
    M.gen++;
    if (slot >= 0)
        M.reqs[slot].gen++;
    if ((long)M.gen % 3 == 0) {
        M.drafts++;
        M.draft_tokens += 7;
        M.accepted += 2;
    }
    pthread_mutex_unlock(&mu);
}

void sim_metrics_first_token(int slot, double ttft)
{
    pthread_mutex_lock(&mu);
    if (slot >= 0) {
        M.reqs[slot].first = true;
        M.prompt += (double)M.reqs[slot].ptok; /* the whole prompt, with its first token */
    }
    M.ttft_sum += ttft;
    M.ttft_count++;
    static const double le[3] = {0.1, 1, 10};
    for (int i = 0; i < 3; i++)
        if (ttft <= le[i])
            M.ttft_le[i]++;
    M.ttft_le[3]++;
    pthread_mutex_unlock(&mu);
}

void sim_metrics_gap(double itl)
{
    pthread_mutex_lock(&mu);
    M.itl_sum += itl;
    M.itl_count++;
    pthread_mutex_unlock(&mu);
}

/* Whether the engine is frozen now and the request came before: the
 * scheduler knows it and will never hear of its end. Under mu. */
static bool stuck_in_engine(const struct req *r)
{
    return M.frozen_at > 0 && mono() >= M.frozen_at && r->t_req <= M.frozen_at;
}

void sim_metrics_done(int slot, double e2e)
{
    pthread_mutex_lock(&mu);
    /* its blocks are freed, unless the engine froze with it inside: the
     * abort waits in the engine's queue behind the step that never ends */
    if (slot >= 0 && !stuck_in_engine(&M.reqs[slot]))
        M.reqs[slot].used = false;
    M.e2e_sum += e2e;
    M.e2e_count++;
    pthread_mutex_unlock(&mu);
}

/* Running requests and KV blocks in use at the engine's time. Under mu. */
static long engine_state(double *usage)
{
    double now = engine_now(), step_s = (double)M.chunk / M.prefill_tps;
    long running = 0, blocks = 0;
    for (int i = 0; i < MAX_REQS; i++) {
        const struct req *r = &M.reqs[i];
        /* one that came after a freeze waits in the engine's input queue,
         * read only between steps: the scheduler never sees it */
        if (!r->used || (M.frozen_at > 0 && r->t_req > M.frozen_at && now >= M.frozen_at))
            continue;
        running++;
        long tokens = r->ptok + r->gen;
        if (!r->first) { /* chunk k is scheduled, with its blocks, at k * step_s */
            double k = floor((now - r->t_req) / step_s) + 1;
            double sched = k * (double)M.chunk;
            tokens = sched < (double)r->ptok ? (long)sched : r->ptok;
        }
        blocks += (tokens + M.block - 1) / M.block;
    }
    *usage = blocks > M.pool_blocks ? 1.0 : (double)blocks / (double)M.pool_blocks;
    return running;
}

static void gauge(struct buf *b, const char *name, const char *help, const char *model, double v)
{
    buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s{engine=\"0\",model_name=\"%s\"} %.9g\n", name,
               help, name, name, model, v);
}

static void counter(struct buf *b, const char *name, const char *model, double v)
{
    buf_printf(b, "# TYPE %s counter\n%s{engine=\"0\",model_name=\"%s\"} %.1f\n", name, name, model,
               v);
}

static void histo(struct buf *b, const char *name, const char *model, double sum, double count,
                  const double *le, const double *buckets, int nb)
{
    buf_printf(b, "# TYPE %s histogram\n", name);
    for (int i = 0; i < nb; i++) {
        if (le[i] < 0)
            buf_printf(b, "%s_bucket{engine=\"0\",le=\"+Inf\",model_name=\"%s\"} %.1f\n", name,
                       model, buckets[i]);
        else
            buf_printf(b, "%s_bucket{engine=\"0\",le=\"%g\",model_name=\"%s\"} %.1f\n", name,
                       le[i], model, buckets[i]);
    }
    buf_printf(b, "%s_sum{engine=\"0\",model_name=\"%s\"} %.6f\n", name, model, sum);
    buf_printf(b, "%s_count{engine=\"0\",model_name=\"%s\"} %.1f\n", name, model, count);
}

void sim_metrics_text(struct buf *b, const char *m)
{
    pthread_mutex_lock(&mu);
    double usage;
    long running = engine_state(&usage);
    gauge(b, "vllm:num_requests_running", "Number of requests in model execution batches.", m,
          (double)running);
    gauge(b, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", m, 0);
    gauge(b, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m, usage);
    counter(b, "vllm:prompt_tokens_total", m, M.prompt);
    counter(b, "vllm:generation_tokens_total", m, M.gen);
    counter(b, "vllm:num_preemptions_total", m, M.preempt);
    counter(b, "vllm:prefix_cache_queries_total", m, M.pq);
    counter(b, "vllm:prefix_cache_hits_total", m, M.ph);
    counter(b, "vllm:spec_decode_num_drafts_total", m, M.drafts);
    counter(b, "vllm:spec_decode_num_draft_tokens_total", m, M.draft_tokens);
    counter(b, "vllm:spec_decode_num_accepted_tokens_total", m, M.accepted);
    static const double le[4] = {0.1, 1, 10, -1};
    histo(b, "vllm:time_to_first_token_seconds", m, M.ttft_sum, M.ttft_count, le, M.ttft_le, 4);
    double itl_b[1] = {M.itl_count}, e2e_b[1] = {M.e2e_count}, inf[1] = {-1};
    histo(b, "vllm:inter_token_latency_seconds", m, M.itl_sum, M.itl_count, inf, itl_b, 1);
    histo(b, "vllm:e2e_request_latency_seconds", m, M.e2e_sum, M.e2e_count, inf, e2e_b, 1);
    pthread_mutex_unlock(&mu);
}

void sim_metrics_stats_line(char *out, size_t n, double interval_s)
{
    pthread_mutex_lock(&mu);
    double usage;
    long running = engine_state(&usage);
    double ptps = (M.prompt - M.log_prompt) / interval_s, gtps = (M.gen - M.log_gen) / interval_s;
    bool idle = ptps == 0 && gtps == 0 && M.last_prompt_tps == 0 && M.last_gen_tps == 0;
    M.log_prompt = M.prompt;
    M.log_gen = M.gen;
    M.last_prompt_tps = ptps;
    M.last_gen_tps = gtps;
    double hit = M.pq > 0 ? 100 * M.ph / M.pq : 0;
    pthread_mutex_unlock(&mu);
    if (idle)
        out[0] = '\0';
    else
        snprintf(out, n,
                 "Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: "
                 "%.1f tokens/s, Running: %ld reqs, Waiting: 0 reqs, GPU KV cache usage: %.1f%%, "
                 "Prefix cache hit rate: %.1f%%",
                 ptps, gtps, running, usage * 100, hit);
}
