/* The bench history: figures from bench's JSON, records appended and read
 * back (a damaged line skipped), the table, and the regression rule - only
 * the same configuration, never a candidate's run, the tolerance honoured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchhist.h"

static const char *BENCH =
    "{\"label\":\"x\",\"prefill\":{\"8192\":{\"median\":2000.0},\"32768\":{\"median\":1900.0}},"
    "\"decode\":[{\"C\":1,\"kind\":\"code\",\"per_stream_median\":40.0}]}";

static void rec(struct benchhist_rec *r, const char *label, const char *hash, double scale)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(benchhist_figures(r, BENCH), 0);
    for (int i = 0; i < r->n; i++)
        r->v[i] *= scale;
    snprintf(r->time, sizeof r->time, "2026-12-03 10:00:00");
    snprintf(r->label, sizeof r->label, "%s", label);
    snprintf(r->hash, sizeof r->hash, "%s", hash);
    snprintf(r->digest, sizeof r->digest, "sha256:0123456789ab");
    snprintf(r->vllm, sizeof r->vllm, "0.11.1");
}

static void history(void **state)
{
    (void)state;
    char dir[] = "/tmp/benchhist-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct buf err = BUF_INIT;
    static struct benchhist_rec r, base;
    rec(&r, "cli", "aaaaaaaaaaaaaaaa", 1.0);
    assert_true(benchhist_figure(&r, "prefill 8192") == 2000.0);
    assert_true(benchhist_figure(&r, "decode C=1 code") == 40.0);
    assert_true(benchhist_figure(&r, "decode C=2 code") < 0);
    char why[320];
    /* nothing to compare yet */
    assert_int_equal(benchhist_regression(dir, "aaaaaaaaaaaaaaaa", 0.05, why, sizeof why), -1);
    assert_int_equal(benchhist_append(dir, &r, &err), 0);
    rec(&base, "candidate", "aaaaaaaaaaaaaaaa", 1.0);
    assert_int_equal(benchhist_set_baseline(dir, &base, &err), 0);
    assert_int_equal(benchhist_regression(dir, "aaaaaaaaaaaaaaaa", 0.05, why, sizeof why), 0);
    /* 10 % slower: a regression at 5 %, none at 15 % */
    rec(&r, "slow", "aaaaaaaaaaaaaaaa", 0.9);
    assert_int_equal(benchhist_append(dir, &r, &err), 0);
    assert_int_equal(benchhist_regression(dir, "aaaaaaaaaaaaaaaa", 0.05, why, sizeof why), 1);
    assert_non_null(strstr(why, "below the accepted baseline"));
    assert_int_equal(benchhist_regression(dir, "aaaaaaaaaaaaaaaa", 0.15, why, sizeof why), 0);
    /* a candidate's run (rolled back) is not the deployment's; another
     * configuration is never compared */
    rec(&r, BENCHHIST_CANDIDATE, "aaaaaaaaaaaaaaaa", 0.5);
    assert_int_equal(benchhist_append(dir, &r, &err), 0);
    rec(&r, "cli", "bbbbbbbbbbbbbbbb", 0.5);
    assert_int_equal(benchhist_append(dir, &r, &err), 0);
    assert_int_equal(benchhist_regression(dir, "aaaaaaaaaaaaaaaa", 0.05, why, sizeof why), 1);
    assert_non_null(strstr(why, "10 %"));
    assert_int_equal(benchhist_regression(dir, "bbbbbbbbbbbbbbbb", 0.05, why, sizeof why), -1);
    /* a damaged line is skipped, the rest read */
    char p[300];
    snprintf(p, sizeof p, "%s/bench/history.jsonl", dir);
    FILE *f = fopen(p, "a");
    fputs("{\"figures\": not json\n", f);
    fclose(f);
    static struct benchhist h;
    assert_int_equal(benchhist_load(dir, &h), 4);
    assert_string_equal(h.r[1].label, "slow");
    char *out = NULL;
    size_t len = 0;
    f = open_memstream(&out, &len);
    benchhist_print(&h, f);
    fclose(f);
    assert_non_null(strstr(out, "prefill 8192"));
    assert_non_null(strstr(out, "1800.0")); /* the slow run's prefill */
    assert_non_null(strstr(out, "n/a"));    /* C=2 was never measured */
    free(out);
    unlink(p);
    snprintf(p, sizeof p, "%s/bench/baseline.json", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/bench", dir);
    rmdir(p);
    rmdir(dir);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(history)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
