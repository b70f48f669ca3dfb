/* vLLM's /metrics text: figures, and rates between two scrapes 10 s apart
 * whose deltas are known: 2000 prompt tok/s, 40 gen tok/s, mean TTFT 1.5 s,
 * prefix hit rate 0.25, spec acceptance 0.5, mean acceptance length 4.5. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "fixture.h"
#include "liveness.h"
#include "metrics.h"
#include "wedge.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void figures_and_rates(void **st)
{
    (void)st;
    struct buf a = fixture_load("metrics/vllm-t0.txt"), b = fixture_load("metrics/vllm-t10.txt");
    struct metrics m0, m1;
    assert_true(metrics_parse(buf_str(&a), &m0) >= 15);
    assert_true(metrics_parse(buf_str(&b), &m1) >= 15);
    assert_true(m0.running.ok && NEAR(m0.running.v, 1));
    assert_true(NEAR(m0.kv_usage.v, 0.0123));
    assert_false(m0.e2e_sum.ok); /* not exported: n/a */
    struct metrics_rates r;
    metrics_rates(&m0, &m1, 10.0, &r);
    assert_true(r.prompt_tps.ok && NEAR(r.prompt_tps.v, 2000));
    assert_true(NEAR(r.generation_tps.v, 40));
    assert_true(NEAR(r.mean_ttft_s.v, 1.5));
    assert_true(NEAR(r.prefix_hit_rate.v, 0.25));
    assert_true(NEAR(r.spec_acceptance.v, 0.5));
    assert_true(NEAR(r.spec_mean_accept_len.v, 4.5));
    assert_false(r.mean_itl_s.ok); /* no new tokens timed: n/a, not 0 */
    /* a restarted server: counters went back */
    metrics_rates(&m1, &m0, 10.0, &r);
    assert_false(r.prompt_tps.ok);
    buf_free(&a);
    buf_free(&b);
}

/* Every shape of page vLLM has served: the names before 0.9.2 / 0.11, both
 * side by side in a deprecation release (the newer wins, never summed),
 * counters without "_total". The same figures each time, and the name used
 * is said. */
static void names_across_versions(void **st)
{
    (void)st;
    struct metrics now, old, both, bare;
    struct buf a = fixture_load("metrics/vllm-t0.txt");
    struct buf b = fixture_load("metrics/vllm-0.9-old-names.txt");
    struct buf c = fixture_load("metrics/vllm-0.10-both-names.txt");
    struct buf d = fixture_load("metrics/vllm-counters-no-total.txt");
    int n = metrics_parse(buf_str(&a), &now);
    assert_int_equal(metrics_parse(buf_str(&b), &old), n);
    assert_int_equal(metrics_parse(buf_str(&d), &bare), n);
    assert_true(metrics_parse(buf_str(&c), &both) == n);
    const struct metrics *ms[] = {&old, &both, &bare};
    for (int i = 0; i < 3; i++) {
        const struct metrics *m = ms[i];
        assert_true(m->kv_usage.ok && NEAR(m->kv_usage.v, now.kv_usage.v));
        assert_true(m->prefix_hits.ok && NEAR(m->prefix_hits.v, now.prefix_hits.v));
        assert_true(m->prefix_queries.ok && NEAR(m->prefix_queries.v, now.prefix_queries.v));
        assert_true(m->itl_sum.ok && NEAR(m->itl_sum.v, now.itl_sum.v));
        assert_true(m->itl_count.ok && NEAR(m->itl_count.v, now.itl_count.v));
        assert_true(m->prompt_tokens.ok && NEAR(m->prompt_tokens.v, now.prompt_tokens.v));
        assert_true(m->spec_accepted.ok && NEAR(m->spec_accepted.v, now.spec_accepted.v));
    }
    assert_string_equal(metrics_name(&now, &now.kv_usage), "vllm:kv_cache_usage_perc");
    assert_false(metrics_name_is_old(&now, &now.kv_usage));
    assert_string_equal(metrics_name(&old, &old.kv_usage), "vllm:gpu_cache_usage_perc");
    assert_true(metrics_name_is_old(&old, &old.kv_usage));
    assert_string_equal(metrics_name(&old, &old.prefix_hits), "vllm:gpu_prefix_cache_hits");
    assert_string_equal(metrics_name(&old, &old.itl_sum), "vllm:time_per_output_token_seconds_sum");
    assert_string_equal(metrics_name(&both, &both.kv_usage), "vllm:kv_cache_usage_perc");
    assert_string_equal(metrics_name(&both, &both.itl_sum), "vllm:inter_token_latency_seconds_sum");
    assert_string_equal(metrics_name(&bare, &bare.prompt_tokens), "vllm:prompt_tokens");
    assert_null(metrics_name(&now, &now.e2e_sum)); /* n/a: no name */
    char names[400];
    metrics_old_names(&old, names, sizeof names);
    assert_string_equal(names, "vllm:gpu_cache_usage_perc, vllm:gpu_prefix_cache_queries, "
                               "vllm:gpu_prefix_cache_hits, vllm:time_per_output_token_seconds");
    metrics_old_names(&both, names, sizeof names);
    assert_string_equal(names, "");
    metrics_old_names(&bare, names, sizeof names);
    assert_string_equal(names, "");
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    buf_free(&d);
}

/* The liveness probe's schedule: only an idle server, once per idle
 * interval, never two at once; a failed scrape knows nothing is idle. */
static void liveness_schedule(void **st)
{
    (void)st;
    struct liveness l;
    liveness_init(&l);
    struct metrics m;
    memset(&m, 0, sizeof m);
    m.running = m.waiting = (struct pval){true, 0};
    m.generation_tokens = (struct pval){true, 100};
    assert_false(liveness_due(&l, &m, 10, 60)); /* the first look starts the clock */
    assert_false(liveness_due(&l, &m, 69, 60));
    assert_true(liveness_due(&l, &m, 70, 60));
    l.in_flight = true;
    assert_false(liveness_due(&l, &m, 71, 60));
    liveness_result(&l, 0, 0.25, "", 72);
    assert_true(l.have && l.ok && NEAR(l.latency_s, 0.25));
    m.generation_tokens.v = 101; /* the probe's own token */
    assert_false(liveness_due(&l, &m, 73, 60));
    assert_false(liveness_due(&l, &m, 132, 60));
    assert_true(liveness_due(&l, &m, 133, 60));
    /* a user's request: busy, the clock starts again */
    m.running.v = 1;
    assert_false(liveness_due(&l, &m, 300, 60));
    m.running.v = 0;
    assert_false(liveness_due(&l, &m, 359, 60));
    assert_true(liveness_due(&l, &m, 360, 60));
    liveness_result(&l, LIVENESS_WEDGED, 0, "no token within 30 s", 400);
    assert_false(l.ok);
    assert_true(l.have && l.wedged);
    assert_string_equal(l.why, "no token within 30 s");
    /* tokens moving again: the engine is not wedged, the failure forgotten */
    m.generation_tokens.v = 150;
    liveness_due(&l, &m, 401, 60);
    assert_false(l.have || l.wedged);
    /* a probe that failed for its own reasons (a 401) is no wedge */
    liveness_result(&l, -1, 0, "HTTP 401: Unauthorized", 402);
    assert_true(l.have && !l.ok && !l.wedged);
    /* no scrape: not idle, as far as anyone knows, and the outcome forgotten */
    assert_false(liveness_due(&l, NULL, 500, 60));
    assert_false(l.have);
    assert_false(liveness_due(&l, &m, 501, 60));
    assert_true(liveness_due(&l, &m, 561, 60));
    assert_false(liveness_due(&l, &m, 9999, 0)); /* 0: off */
}

static void engines_summed_and_garbage(void **st)
{
    (void)st;
    struct metrics m;
    const char *two = "vllm:generation_tokens_total{engine=\"0\",model_name=\"a}b\"} 5\n"
                      "vllm:generation_tokens_total{engine=\"1\",model_name=\"m\"} 7\n";
    assert_int_equal(metrics_parse(two, &m), 2);
    assert_true(NEAR(m.generation_tokens.v, 12));
    assert_int_equal(metrics_parse("<html>not metrics</html>\n", &m), -1);
    assert_int_equal(metrics_parse("vllm:num_requests_running{engine=\"0\" 1\nx NaN\ny 1e999\n", &m),
                     -1);
    assert_int_equal(metrics_parse("", &m), 0);
    assert_false(m.running.ok);
}

static struct metrics scrape_of(double running, double prompt, double gen)
{
    struct metrics m = {0};
    m.running = (struct pval){true, running};
    m.prompt_tokens = (struct pval){true, prompt};
    m.generation_tokens = (struct pval){true, gen};
    return m;
}

/* A real page (vLLM 0.10.0, vllm-project/production-stack#617; see the
 * fixture's README): _created gauges are no counters, a gauge in exponent
 * notation is read, the old prefix-cache name beside the new is not summed. */
static void real_page_0_10(void **st)
{
    (void)st;
    struct buf a = fixture_load("metrics/vllm-0.10.0-glm45-real.txt");
    struct metrics m;
    assert_true(metrics_parse(buf_str(&a), &m) > 0);
    assert_true(m.kv_usage.ok && NEAR(m.kv_usage.v, 9.75010481363281e-06));
    assert_true(m.prefix_queries.ok && NEAR(m.prefix_queries.v, 32));
    assert_string_equal(metrics_name(&m, &m.prefix_queries), "vllm:prefix_cache_queries");
    /* only the deprecated hits counter is on the excerpt: taken, and said to be old */
    assert_true(m.prefix_hits.ok && NEAR(m.prefix_hits.v, 0));
    assert_true(metrics_name_is_old(&m, &m.prefix_hits));
    assert_false(m.running.ok); /* not on the excerpt: n/a, never 0 */
    assert_false(m.prompt_tokens.ok);
    buf_free(&a);
}

/* The wedge rule: requests running with nothing moving for the limit;
 * idle, a moving counter, a changed gauge, a failed scrape or a counter the
 * server lacks never alarm. */
static void wedge_rule(void **st)
{
    (void)st;
    struct wedge w = WEDGE_INIT;
    char why[200] = "";
    struct metrics m = scrape_of(1, 100, 50);
    m.kv_usage = (struct pval){true, 0.25};
    assert_false(wedge_feed(&w, &m, 0, 10, why, sizeof why));
    assert_true(w.moving); /* the first scrape */
    assert_false(wedge_feed(&w, &m, 9.9, 10, why, sizeof why));
    assert_false(w.moving);
    assert_true(wedge_feed(&w, &m, 10, 10, why, sizeof why));
    assert_string_equal(why, "1 request(s) running and nothing moving for 10 s (no token, no "
                             "prefill step, KV cache 25.0 % unchanged)");
    /* tokens move: fine again */
    m.generation_tokens.v = 51;
    assert_false(wedge_feed(&w, &m, 11, 10, why, sizeof why));
    assert_true(w.moving);
    /* a prefill step: the KV gauge changes, no counter does */
    assert_false(wedge_feed(&w, &m, 20.9, 10, why, sizeof why));
    m.kv_usage.v = 0.26;
    assert_false(wedge_feed(&w, &m, 21, 10, why, sizeof why));
    assert_false(wedge_feed(&w, &m, 30.9, 10, why, sizeof why));
    assert_true(wedge_feed(&w, &m, 31, 10, why, sizeof why));
    /* a request admitted (running or waiting changes): a step */
    m.waiting = (struct pval){true, 1};
    assert_false(wedge_feed(&w, &m, 32, 10, why, sizeof why));
    /* idle: never, and the clock restarts */
    struct metrics idle = scrape_of(0, m.prompt_tokens.v, m.generation_tokens.v);
    idle.kv_usage = m.kv_usage;
    idle.waiting = m.waiting;
    assert_false(wedge_feed(&w, &idle, 100, 10, why, sizeof why));
    assert_false(wedge_feed(&w, &m, 105, 10, why, sizeof why)); /* running changed */
    assert_true(wedge_feed(&w, &m, 115, 10, why, sizeof why));
    /* off when the limit is 0 */
    assert_false(wedge_feed(&w, &m, 500, 0, why, sizeof why));
    /* no generation counter exported: n/a is movement, not a wedge */
    wedge_reset(&w);
    m.generation_tokens.ok = false;
    assert_false(wedge_feed(&w, &m, 0, 10, why, sizeof why));
    assert_false(wedge_feed(&w, &m, 100, 10, why, sizeof why));
    /* a restarted server's counter went back: movement */
    wedge_reset(&w);
    m = scrape_of(1, 100, 50);
    assert_false(wedge_feed(&w, &m, 0, 10, why, sizeof why));
    m.generation_tokens.v = 3;
    assert_false(wedge_feed(&w, &m, 20, 10, why, sizeof why));
    /* no KV gauge at all: the counters alone, and the verdict says what is missing */
    assert_true(wedge_feed(&w, &m, 30, 10, why, sizeof why));
    assert_non_null(strstr(why, "no KV-cache gauge"));
}

/* What vLLM v1's /metrics says at time t (seconds since one request of
 * prompt tokens arrived), with its engine frozen from freeze_t on (a dead
 * peer rank: the step in flight never ends). As vLLM does it (wedge.h):
 * the prefill runs in chunks of 2,048 tokens a step at prefill_tps, each
 * chunk's KV blocks (256 tokens) allocated when it is scheduled; the prompt
 * counter takes the whole prompt, and the generation counter the first token,
 * in the step that ends the prefill; then a token a step at decode_tps. */
#define V1_CHUNK 2048.0
#define V1_BLOCK 256.0
#define V1_BLOCKS 7905.0 /* the measured pool: 2,023,717 tokens / 256 */
static struct metrics v1_scrape(double t, double prompt, double prefill_tps, double decode_tps,
                                double out_tokens, double freeze_t)
{
    if (t > freeze_t)
        t = freeze_t;
    double step_s = V1_CHUNK / prefill_tps;
    double nchunks = ceil(prompt / V1_CHUNK);
    double prefill_s = nchunks * step_s;
    struct metrics m = {0};
    m.waiting = (struct pval){true, 0};
    m.prompt_tokens = (struct pval){true, 0};
    m.generation_tokens = (struct pval){true, 0};
    double computed, gen = 0;
    if (t < prefill_s) { /* chunk k is scheduled at k * step_s */
        computed = fmin(prompt, (floor(t / step_s) + 1) * V1_CHUNK);
    } else {
        computed = prompt;
        m.prompt_tokens.v = prompt;
        gen = fmin(out_tokens, 1 + floor((t - prefill_s) * decode_tps));
        m.generation_tokens.v = gen;
    }
    bool done = gen >= out_tokens;
    m.running = (struct pval){true, done ? 0 : 1};
    m.kv_usage = (struct pval){true, done ? 0 : ceil((computed + gen) / V1_BLOCK) / V1_BLOCKS};
    return m;
}

/* Feeds the rule a scrape every interval from 0 to end; the time of its
 * first alarm, or -1. */
static double first_alarm(double end, double interval, double limit, double prompt,
                          double freeze_t)
{
    struct wedge w = WEDGE_INIT;
    char why[200];
    for (double t = 0; t <= end; t += interval) {
        struct metrics m = v1_scrape(t, prompt, 2050, 40, 500, freeze_t);
        if (wedge_feed(&w, &m, t, limit, why, sizeof why))
            return t;
    }
    return -1;
}

/* The targets of the rule, on vLLM v1's counters: no alarm during a prefill
 * of MAX_LEN (262,144) tokens at the measured 2,050 tok/s (~128 s, neither
 * counter moving) with the default WEDGE_SECONDS (10), scraped every second
 * as the console does or every 5 s; an engine frozen mid-prefill, or
 * mid-decode, alarmed within WEDGE_SECONDS + 10 s of the freeze. */
static void wedge_rule_on_vllm_v1(void **st)
{
    (void)st;
    const double never = 1e9;
    assert_true(first_alarm(200, 1, 10, 262144, never) < 0);
    assert_true(first_alarm(200, 5, 10, 262144, never) < 0);
    assert_true(first_alarm(200, 0.25, 10, 262144, never) < 0);
    /* the rule's predecessor granted a prefill allowance only once the prompt
     * counter moved: on v1 it would have alarmed at 10 s */
    double t;
    t = first_alarm(300, 1, 10, 262144, 60); /* mid-prefill */
    assert_true(t >= 60 + 10 && t <= 60 + 10 + 10);
    t = first_alarm(300, 5, 10, 262144, 60);
    assert_true(t >= 60 + 10 && t <= 60 + 10 + 10);
    t = first_alarm(300, 1, 10, 262144, 140); /* mid-decode */
    assert_true(t >= 140 + 10 && t <= 140 + 10 + 10);
    t = first_alarm(300, 1, 10, 40000, 5); /* the 40k-token prompt, frozen at once */
    assert_true(t >= 5 + 10 && t <= 5 + 10 + 10);
}

/* GPU power beside the verdict: low corroborates a hang, high does not. */
static void wedge_gpu_evidence(void **st)
{
    (void)st;
    struct probe_gpu h = {0}, wk = {0}, none = {0};
    h.power_w = (struct pval){true, 118};
    h.power_limit_w = (struct pval){true, 700};
    wk.power_w = (struct pval){true, 120};
    wk.power_limit_w = (struct pval){true, 700};
    const struct probe_gpu *g[3] = {&h, &wk, &none};
    const char *names[3] = {"head", "worker", "worker2"};
    char why[300] = "wedged";
    wedge_gpu_note(g, names, 3, why, sizeof why);
    assert_string_equal(why, "wedged; GPU power: head 118 W of 700, worker 120 W of 700 (low: as a "
                             "collective spinning on a dead peer)");
    h.power_w.v = 682;
    wk.power_w.v = 650;
    snprintf(why, sizeof why, "wedged");
    wedge_gpu_note(g, names, 2, why, sizeof why);
    assert_non_null(strstr(why, "(high: the GPUs are computing"));
    wk.power_limit_w.ok = false; /* a GB10 that gives no limit: the watts alone */
    snprintf(why, sizeof why, "wedged");
    wedge_gpu_note(g, names, 2, why, sizeof why);
    assert_non_null(strstr(why, "worker 650 W"));
    snprintf(why, sizeof why, "wedged");
    wedge_gpu_note(g + 2, names + 2, 1, why, sizeof why); /* no power: nothing added */
    assert_string_equal(why, "wedged");
    char tiny[12] = "wedged";
    g[0] = &h;
    wedge_gpu_note(g, names, 2, tiny, sizeof tiny); /* cut, never past the end */
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(figures_and_rates),
        cmocka_unit_test(names_across_versions),
        cmocka_unit_test(liveness_schedule),
        cmocka_unit_test(engines_summed_and_garbage),
        cmocka_unit_test(real_page_0_10),
        cmocka_unit_test(wedge_rule),
        cmocka_unit_test(wedge_rule_on_vllm_v1),
        cmocka_unit_test(wedge_gpu_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
