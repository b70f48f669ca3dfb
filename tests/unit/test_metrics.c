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
#include "metrics.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(figures_and_rates),
        cmocka_unit_test(engines_summed_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
