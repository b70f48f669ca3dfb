#include "metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    size_t off;
} FIELDS[] = {
#define F(n, f) {n, offsetof(struct metrics, f)}
    F("vllm:num_requests_running", running),
    F("vllm:num_requests_waiting", waiting),
    F("vllm:kv_cache_usage_perc", kv_usage),
    F("vllm:prompt_tokens_total", prompt_tokens),
    F("vllm:generation_tokens_total", generation_tokens),
    F("vllm:num_preemptions_total", preemptions),
    F("vllm:prefix_cache_queries_total", prefix_queries),
    F("vllm:prefix_cache_hits_total", prefix_hits),
    F("vllm:spec_decode_num_drafts_total", spec_drafts),
    F("vllm:spec_decode_num_draft_tokens_total", spec_draft_tokens),
    F("vllm:spec_decode_num_accepted_tokens_total", spec_accepted),
    F("vllm:time_to_first_token_seconds_sum", ttft_sum),
    F("vllm:time_to_first_token_seconds_count", ttft_count),
    F("vllm:inter_token_latency_seconds_sum", itl_sum),
    F("vllm:inter_token_latency_seconds_count", itl_count),
    F("vllm:e2e_request_latency_seconds_sum", e2e_sum),
    F("vllm:e2e_request_latency_seconds_count", e2e_count),
#undef F
};

struct parse_ctx {
    struct metrics *m;
    int lines, bad;
};

static int metric_line(const char *line, size_t len, void *vctx)
{
    struct parse_ctx *ctx = vctx;
    if (!len || line[0] == '#')
        return 0;
    size_t nl = 0;
    while (nl < len && line[nl] != '{' && line[nl] != ' ')
        nl++;
    size_t v = nl;
    if (v < len && line[v] == '{') {
        /* labels: skip to the closing brace, minding quoted values */
        bool q = false;
        for (v++; v < len && (q || line[v] != '}'); v++) {
            if (line[v] == '\\' && v + 1 < len)
                v++;
            else if (line[v] == '"')
                q = !q;
        }
        if (v == len) {
            ctx->bad++;
            return 0;
        }
        v++;
    }
    while (v < len && line[v] == ' ')
        v++;
    char num[64];
    size_t k = 0;
    while (v < len && line[v] != ' ' && k < sizeof num - 1)
        num[k++] = line[v++];
    num[k] = '\0';
    char *end;
    errno = 0;
    double d = strtod(num, &end);
    if (!k || *end || errno || !isfinite(d)) {
        ctx->bad++;
        return 0;
    }
    ctx->lines++;
    for (size_t i = 0; i < sizeof FIELDS / sizeof *FIELDS; i++)
        if (strlen(FIELDS[i].name) == nl && memcmp(FIELDS[i].name, line, nl) == 0) {
            struct pval *pv = (struct pval *)((char *)ctx->m + FIELDS[i].off);
            pv->v = pv->ok ? pv->v + d : d;
            pv->ok = true;
            ctx->m->samples++;
        }
    return 0;
}

int metrics_parse(const char *text, struct metrics *m)
{
    memset(m, 0, sizeof *m);
    struct parse_ctx ctx = {m, 0, 0};
    probe_for_each_line(text, metric_line, &ctx);
    if (!ctx.lines && ctx.bad)
        return -1;
    return m->samples;
}

static struct pval delta(struct pval a, struct pval b)
{
    struct pval r = {false, 0};
    if (a.ok && b.ok && b.v >= a.v) {
        r.ok = true;
        r.v = b.v - a.v;
    }
    return r;
}

static struct pval ratio(struct pval num, struct pval den)
{
    struct pval r = {false, 0};
    if (num.ok && den.ok && den.v > 0) {
        r.ok = true;
        r.v = num.v / den.v;
    }
    return r;
}

void metrics_rates(const struct metrics *p, const struct metrics *c, double dt,
                   struct metrics_rates *r)
{
    memset(r, 0, sizeof *r);
    if (dt <= 0)
        return;
    struct pval sec = {true, dt};
    r->prompt_tps = ratio(delta(p->prompt_tokens, c->prompt_tokens), sec);
    r->generation_tps = ratio(delta(p->generation_tokens, c->generation_tokens), sec);
    r->mean_ttft_s = ratio(delta(p->ttft_sum, c->ttft_sum), delta(p->ttft_count, c->ttft_count));
    r->mean_itl_s = ratio(delta(p->itl_sum, c->itl_sum), delta(p->itl_count, c->itl_count));
    r->prefix_hit_rate = ratio(delta(p->prefix_hits, c->prefix_hits),
                               delta(p->prefix_queries, c->prefix_queries));
    struct pval acc = delta(p->spec_accepted, c->spec_accepted);
    r->spec_acceptance = ratio(acc, delta(p->spec_draft_tokens, c->spec_draft_tokens));
    r->spec_mean_accept_len = ratio(acc, delta(p->spec_drafts, c->spec_drafts));
    if (r->spec_mean_accept_len.ok)
        r->spec_mean_accept_len.v += 1;
}
