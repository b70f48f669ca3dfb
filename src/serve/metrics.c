#include "metrics.h"
#include "fixstr.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every name a figure has had (REFERENCE.md §3), newest first. vLLM keeps a
 * deprecated name beside the new one for a release, so when both are on a
 * page the newest wins (never both summed). Counters are matched with and
 * without "_total"; histograms by their _sum and _count. */
#define MAX_NAMES 3
enum kind { GAUGE, COUNTER, PLAIN };
static const struct {
    size_t off;
    enum kind kind;
    const char *names[MAX_NAMES];
} FIELDS[METRICS_NFIELDS] = {
#define F(f, k, ...) {offsetof(struct metrics, f), k, {__VA_ARGS__}}
    F(running, GAUGE, "vllm:num_requests_running"),
    F(waiting, GAUGE, "vllm:num_requests_waiting"),
    F(kv_usage, GAUGE, "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    F(prompt_tokens, COUNTER, "vllm:prompt_tokens"),
    F(generation_tokens, COUNTER, "vllm:generation_tokens"),
    F(preemptions, COUNTER, "vllm:num_preemptions"),
    F(prefix_queries, COUNTER, "vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"),
    F(prefix_hits, COUNTER, "vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"),
    F(spec_drafts, COUNTER, "vllm:spec_decode_num_drafts"),
    F(spec_draft_tokens, COUNTER, "vllm:spec_decode_num_draft_tokens"),
    F(spec_accepted, COUNTER, "vllm:spec_decode_num_accepted_tokens"),
    F(ttft_sum, PLAIN, "vllm:time_to_first_token_seconds_sum"),
    F(ttft_count, PLAIN, "vllm:time_to_first_token_seconds_count"),
    F(itl_sum, PLAIN, "vllm:inter_token_latency_seconds_sum",
      "vllm:time_per_output_token_seconds_sum"),
    F(itl_count, PLAIN, "vllm:inter_token_latency_seconds_count",
      "vllm:time_per_output_token_seconds_count"),
    F(e2e_sum, PLAIN, "vllm:e2e_request_latency_seconds_sum"),
    F(e2e_count, PLAIN, "vllm:e2e_request_latency_seconds_count"),
#undef F
};

struct parse_ctx {
    struct metrics *m;
    int lines, bad;
    int count[METRICS_NFIELDS]; /* samples taken per figure, under the name kept */
};

/* The field and alias a sample's name is, or -1. */
static int field_of(const char *name, size_t nl, int *alias)
{
    for (int i = 0; i < METRICS_NFIELDS; i++)
        for (int a = 0; a < MAX_NAMES && FIELDS[i].names[a]; a++) {
            size_t l = strlen(FIELDS[i].names[a]);
            if (nl < l || memcmp(FIELDS[i].names[a], name, l) != 0)
                continue;
            if (nl == l || (FIELDS[i].kind == COUNTER && nl == l + 6 &&
                            memcmp(name + l, "_total", 6) == 0)) {
                *alias = a;
                return i;
            }
        }
    return -1;
}

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
    int alias, i = field_of(line, nl, &alias);
    if (i < 0)
        return 0;
    struct metrics *m = ctx->m;
    struct pval *pv = (struct pval *)((char *)m + FIELDS[i].off);
    if (pv->ok && alias > m->alias[i])
        return 0; /* an older name beside the newer one */
    if (!pv->ok || alias < m->alias[i]) {
        *pv = (struct pval){true, d}; /* the first, or a newer name than seen so far */
        ctx->count[i] = 1;
    } else {
        pv->v += d; /* another engine's label set */
        ctx->count[i]++;
    }
    m->alias[i] = (unsigned char)alias;
    return 0;
}

const char *metrics_field(const struct metrics *m, int i, bool *old, struct pval *value)
{
    if (i < 0 || i >= METRICS_NFIELDS)
        return NULL;
    const struct pval *pv = (const struct pval *)((const char *)m + FIELDS[i].off);
    if (old)
        *old = pv->ok && m->alias[i] > 0;
    if (value)
        *value = *pv;
    return pv->ok ? FIELDS[i].names[m->alias[i]] : NULL;
}

void metrics_old_names(const struct metrics *m, char *out, size_t sz)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < METRICS_NFIELDS; i++) {
        bool old;
        const char *name = metrics_field(m, i, &old, NULL);
        if (!old)
            continue;
        /* a histogram by its own name: its _sum and _count are one mention */
        char base[96];
        snprintf(base, sizeof base, "%s", name);
        size_t bl = strlen(base);
        if (bl > 4 && strcmp(base + bl - 4, "_sum") == 0)
            base[bl - 4] = '\0';
        else if (bl > 6 && strcmp(base + bl - 6, "_count") == 0)
            base[bl - 6] = '\0';
        if (strstr(out, base))
            continue;
        if (fixstr_appendf_whole(out, sz, &n, "%s%s", n ? ", " : "", base) < 0)
            break;
    }
}

const char *metrics_name(const struct metrics *m, const struct pval *field)
{
    for (int i = 0; i < METRICS_NFIELDS; i++)
        if ((const char *)m + FIELDS[i].off == (const char *)field)
            return field->ok ? FIELDS[i].names[m->alias[i]] : NULL;
    return NULL;
}

bool metrics_name_is_old(const struct metrics *m, const struct pval *field)
{
    for (int i = 0; i < METRICS_NFIELDS; i++)
        if ((const char *)m + FIELDS[i].off == (const char *)field)
            return field->ok && m->alias[i] > 0;
    return false;
}

int metrics_parse(const char *text, struct metrics *m)
{
    memset(m, 0, sizeof *m);
    struct parse_ctx ctx = {m, 0, 0, {0}};
    probe_for_each_line(text, metric_line, &ctx);
    for (int i = 0; i < METRICS_NFIELDS; i++)
        m->samples += ctx.count[i];
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

bool metrics_text_idle(const char *text)
{
    struct metrics m;
    return metrics_parse(text, &m) > 0 && m.running.ok && m.running.v == 0 &&
           (!m.waiting.ok || m.waiting.v == 0);
}
