/* The memory budget on the figures of the measured deployment (REFERENCE.md
 * §1, §5, §8 and the seed README): MemTotal 121.7 GiB, guard floor 1 GiB,
 * KV_BYTES 2.7e9, the default 10 CUDA graph sizes, 6 GiB host side, and a
 * steady state of 2-3 GiB available - which puts the weights a rank holds
 * at ~110 GiB. That configuration must fit; a bigger KV must be refused
 * with the KV_BYTES that fits; a figure never measured is n/a, not 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "fixture.h"
#include "phase.h"

#define GIB 1073741824.0

static struct budget spark(double weights, double kv_bytes)
{
    struct budget b;
    memset(&b, 0, sizeof b);
    b.total_gib = 127601496 / 1048576.0; /* tests/fixtures/proc/spark/meminfo */
    b.free_gib = 3015532 / 1048576.0;
    b.cached_gib = 1843200 / 1048576.0;
    b.floor_gib = 1;
    b.weights_gib = weights;
    b.graphs_gib = 10 * BUDGET_GRAPH_GIB_PER_SIZE;
    b.kv_gib = kv_bytes / GIB;
    b.host_gib = BUDGET_HOST_GIB;
    b.gpu_util = 0; /* the MemFree check has its own case */
    budget_compute(&b);
    return b;
}

static void measured_configuration(void **st)
{
    (void)st;
    struct budget b = spark(110, 2.7e9);
    assert_true(b.known && b.fits);
    assert_true(fabs(b.room_gib - 120.69) < 0.01);
    assert_true(b.need_gib > 119 && b.need_gib < 119.2);
    assert_string_equal(b.advice, "");
    struct buf line = BUF_INIT;
    snprintf(b.weights_from, sizeof b.weights_from, "last boot's log");
    snprintf(b.graphs_from, sizeof b.graphs_from, "estimate, 10 capture sizes");
    budget_describe(&b, &line);
    assert_non_null(strstr(buf_str(&line), "weights 110.0 (last boot's log) + KV 2.5 + CUDA "
                                           "graphs 0.6 (estimate, 10 capture sizes) + host side "
                                           "6.0 = 119.1 GiB fits in 120.7 GiB"));
    buf_free(&line);
}

static void too_much_kv_names_the_fix(void **st)
{
    (void)st;
    struct budget b = spark(110, 5e9);
    assert_true(b.known && !b.fits);
    /* 0.6 GiB over: KV_BYTES down to the 100 MB step that fits */
    assert_non_null(strstr(b.advice, "lower KV_BYTES to 4300000000 (now 5000000000)"));
    struct budget again = spark(110, 4.3e9);
    assert_true(again.fits);
    struct budget tight = spark(110, 4.4e9);
    assert_false(tight.fits);
    /* weights that leave no room for any KV cache: not KV_BYTES */
    struct budget huge = spark(118, 2.7e9);
    assert_false(huge.fits);
    assert_non_null(strstr(huge.advice, "more nodes (TP)"));
    assert_null(strstr(huge.advice, "KV_BYTES"));
}

static void unknown_weights_are_not_zero(void **st)
{
    (void)st;
    struct budget b = spark(-1, 2.7e9);
    assert_false(b.known);
    assert_true(b.fits); /* no verdict: launch refuses nothing */
    struct buf line = BUF_INIT;
    budget_describe(&b, &line);
    assert_non_null(strstr(buf_str(&line), "weights n/a"));
    assert_non_null(strstr(buf_str(&line), "(without the weights)"));
    buf_free(&line);
    /* but a KV cache bigger than the node is said even so */
    b = spark(-1, 130 * GIB);
    assert_non_null(strstr(b.advice, "even without the weights"));
}

static void memfree_and_page_cache(void **st)
{
    (void)st;
    struct budget b = spark(110, 2.7e9);
    b.gpu_util = 0.88;
    b.free_gib = 20;
    b.cached_gib = 90; /* after an rsync */
    budget_compute(&b);
    assert_true(b.memfree_low);
    assert_non_null(strstr(b.memfree_note, "drop_caches"));
    b.cached_gib = 1;
    budget_compute(&b);
    assert_true(b.memfree_low);
    assert_non_null(strstr(b.memfree_note, "lower GPU_UTIL"));
    b.free_gib = 110;
    budget_compute(&b);
    assert_false(b.memfree_low);
}

static void phase_lines_give_the_figures(void **st)
{
    (void)st;
    struct phase_state ph;
    phase_init(&ph);
    assert_true(ph.weights_gib < 0 && ph.graphs_gib < 0);
    const char *l1 = "(EngineCore pid=12) INFO 12-01 10:00:00 [gpu_model_runner.py:1] Model loading "
                     "took 61.37 GiB memory and 42.80 seconds";
    const char *l2 = "Graph capturing finished in 4 secs, took 0.31 GiB";
    phase_feed(&ph, l1, strlen(l1));
    phase_feed(&ph, l2, strlen(l2));
    assert_true(fabs(ph.weights_gib - 61.37) < 1e-9);
    assert_true(fabs(ph.graphs_gib - 0.31) < 1e-9);
    /* garbage and cut lines leave them as they were */
    const char *bad[] = {"Model loading took x GiB memory", "Model loading took 5",
                         "Graph capturing finished in 4 secs, took 9.9 MiB"};
    for (size_t i = 0; i < 3; i++)
        phase_feed(&ph, bad[i], strlen(bad[i]));
    assert_true(fabs(ph.weights_gib - 61.37) < 1e-9);
    assert_true(fabs(ph.graphs_gib - 0.31) < 1e-9);
}

static void load(struct config *c, const char *dir, const char *extra)
{
    const char *clear[] = {"KV_BYTES", "MAX_SEQS", "NSPEC", "IMG", "TP", "PP", "PLAN_NAME",
                           "STATE_DIR", "WEIGHTS_GIB", "MEMGUARD_GIB", "GPU_UTIL"};
    for (size_t i = 0; i < sizeof clear / sizeof *clear; i++)
        unsetenv(clear[i]);
    char sd[300];
    snprintf(sd, sizeof sd, "STATE_DIR=%s", dir);
    char *flags[] = {sd, (char *)extra};
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(c, "/nonexistent/config", flags, extra ? 2 : 1, &err), 0);
    buf_free(&err);
}

static void record_of_the_last_boot(void **st)
{
    (void)st;
    char dir[] = "/tmp/dsv41-budget-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct config c;
    load(&c, dir, NULL);
    struct snapshot *s = calloc(1, sizeof *s);
    s->mem.total_kib = (struct pval){true, 127601496};
    s->mem.free_kib = (struct pval){true, 115000000};
    s->mem.cached_kib = (struct pval){true, 1843200};
    struct budget b;
    budget_for_node(&c, "worker", s, &b);
    assert_false(b.known);
    struct buf err = BUF_INIT;
    assert_int_equal(budget_record(&c, "worker", 110.0, 0.31, &err), 0);
    assert_int_equal(budget_record(&c, "head", 109.5, -1, &err), 0);
    char path[400];
    snprintf(path, sizeof path, "%s/budget.json", dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    budget_for_node(&c, "worker", s, &b);
    assert_true(b.known && b.fits);
    assert_true(fabs(b.weights_gib - 110) < 1e-9 && fabs(b.graphs_gib - 0.31) < 1e-9);
    assert_string_equal(b.weights_from, "last boot's log");
    budget_for_node(&c, "head", s, &b);
    assert_true(fabs(b.weights_gib - 109.5) < 1e-9);
    assert_non_null(strstr(b.graphs_from, "estimate")); /* no graphs recorded there */
    config_free(&c);
    /* another plan: the record is not this deployment's */
    load(&c, dir, "PLAN_NAME=other-plan.json");
    budget_for_node(&c, "worker", s, &b);
    assert_false(b.known);
    config_free(&c);
    /* more capture sizes: the weights hold, the graphs are estimated again */
    load(&c, dir, "MAX_SEQS=4");
    budget_for_node(&c, "worker", s, &b);
    assert_true(b.known && fabs(b.weights_gib - 110) < 1e-9);
    assert_non_null(strstr(b.graphs_from, "estimate"));
    config_free(&c);
    /* the setting wins over the record */
    load(&c, dir, "WEIGHTS_GIB=118");
    budget_for_node(&c, "worker", s, &b);
    assert_string_equal(b.weights_from, "WEIGHTS_GIB");
    assert_false(b.fits);
    config_free(&c);
    /* a garbage record is no record, and is rewritten whole */
    FILE *f = fopen(path, "w");
    fputs("{\"worker\": {\"key\": 5, \"weights_gib\": \"x\"}, garbage", f);
    fclose(f);
    load(&c, dir, NULL);
    budget_for_node(&c, "worker", s, &b);
    assert_false(b.known);
    assert_int_equal(budget_record(&c, "worker", 100.0, -1, &err), 0);
    budget_for_node(&c, "worker", s, &b);
    assert_true(fabs(b.weights_gib - 100) < 1e-9);
    config_free(&c);
    buf_free(&err);
    free(s);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_configuration),  cmocka_unit_test(too_much_kv_names_the_fix),
        cmocka_unit_test(unknown_weights_are_not_zero), cmocka_unit_test(memfree_and_page_cache),
        cmocka_unit_test(phase_lines_give_the_figures), cmocka_unit_test(record_of_the_last_boot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
