#include "sim_metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    long running, requests;
    double prompt, gen, preempt, pq, ph, drafts, draft_tokens, accepted;
    double ttft_sum, ttft_count, itl_sum, itl_count, e2e_sum, e2e_count;
    double ttft_le[4]; /* 0.1, 1, 10, +Inf */
    char *prev_prompt;
} M;

void sim_metrics_request(long prompt_tokens, const char *prompt)
{
    pthread_mutex_lock(&mu);
    M.running++;
    M.requests++;
    M.prompt += (double)prompt_tokens;
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
}

void sim_metrics_token(void)
{
    pthread_mutex_lock(&mu);
    M.gen++;
    if ((long)M.gen % 3 == 0) {
        M.drafts++;
        M.draft_tokens += 7;
        M.accepted += 2;
    }
    pthread_mutex_unlock(&mu);
}

void sim_metrics_first_token(double ttft)
{
    pthread_mutex_lock(&mu);
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

void sim_metrics_done(double e2e)
{
    pthread_mutex_lock(&mu);
    M.running--;
    M.e2e_sum += e2e;
    M.e2e_count++;
    pthread_mutex_unlock(&mu);
}

static void gauge(struct buf *b, const char *name, const char *help, const char *model, double v)
{
    buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s{engine=\"0\",model_name=\"%s\"} %.6g\n", name,
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
    gauge(b, "vllm:num_requests_running", "Number of requests in model execution batches.", m,
          (double)M.running);
    gauge(b, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", m, 0);
    gauge(b, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", m,
          M.running ? 0.0123 * (double)M.running : 0);
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
