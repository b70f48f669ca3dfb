/* The sampling script run by a real /bin/sh against fixture roots, and the
 * framing it relies on: hostile file contents cannot forge sections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "snapshot.h"

static void run_script(const char *proc, const char *sys, const char *rt, struct snapshot *s)
{
    struct node n;
    struct buf p = BUF_INIT, y = BUF_INIT;
    buf_printf(&p, "%s/%s", fixture_dir(), proc);
    buf_printf(&y, "%s/%s", fixture_dir(), sys);
    node_init_local(&n, "head", buf_str(&p), buf_str(&y));
    assert_int_equal(snapshot_collect_script(&n, rt, 2, NULL, 20000, false, s), 0);
    node_free(&n);
    buf_free(&p);
    buf_free(&y);
}

static void fixture_node(void **st)
{
    (void)st;
    struct snapshot *s = malloc(sizeof *s);
    run_script("proc/spark", "sysfs/spark-head", "dsv41-no-such-runtime", s);
    assert_true(s->reachable);
    assert_true(s->mem_ok);
    assert_true(s->mem.total_kib.v == 127601496);
    assert_true(s->oom_kill.ok && s->oom_kill.v == 2);
    assert_true(s->psi_full.ok && s->psi_full.v == 0.0);
    assert_true(s->frag_blocks.ok && s->frag_blocks.v == 8424);
    assert_int_equal(s->nports, 4);
    /* a node without PSI or buddyinfo (the sysfs tree has neither): n/a, not 0 */
    run_script("sysfs/spark-head", "sysfs/spark-head", "dsv41-no-such-runtime", s);
    assert_false(s->psi_full.ok);
    assert_false(s->frag_blocks.ok);
    assert_false(s->runtime_ok);
    assert_non_null(strstr(s->runtime_note, "not found"));
    /* no nvidia-smi on the test machine */
    assert_int_equal(s->ngpu, 0);
    assert_true(s->gpu_note[0] != '\0');
    free(s);
}

/* The local node read directly gives what the script gives, field by field
 * (and a lite sample leaves the containers unasked). */
static void direct_read_matches_script(void **st)
{
    (void)st;
    struct snapshot *a = malloc(sizeof *a), *b = malloc(sizeof *b), *c = malloc(sizeof *c);
    struct node n;
    struct buf p = BUF_INIT, y = BUF_INIT;
    buf_printf(&p, "%s/proc/spark", fixture_dir());
    buf_printf(&y, "%s/sysfs/spark-head", fixture_dir());
    node_init_local(&n, "head", buf_str(&p), buf_str(&y));
    assert_int_equal(snapshot_collect_script(&n, "dsv41-no-such-runtime", 2, NULL, 20000, false, a), 0);
    assert_int_equal(snapshot_collect_opt(&n, "dsv41-no-such-runtime", 2, NULL, 20000, false, b), 0);
    assert_string_equal(a->hostname, b->hostname);
    assert_true(a->mem.total_kib.v == b->mem.total_kib.v && a->mem.available_kib.v == b->mem.available_kib.v);
    assert_true(a->oom_kill.ok == b->oom_kill.ok && a->oom_kill.v == b->oom_kill.v);
    assert_true(a->psi_full.ok && b->psi_full.ok && a->psi_full.v == b->psi_full.v);
    assert_true(a->frag_blocks.ok && b->frag_blocks.ok && a->frag_blocks.v == b->frag_blocks.v);
    assert_string_equal(a->gpu_note, b->gpu_note);
    assert_int_equal(a->ngpu, b->ngpu);
    assert_int_equal(a->nports, b->nports);
    for (int i = 0; i < a->nports; i++) {
        assert_string_equal(a->ports[i].dev, b->ports[i].dev);
        assert_string_equal(a->ports[i].state, b->ports[i].state);
        assert_int_equal(a->ports[i].gid_index, b->ports[i].gid_index);
        assert_true(a->ports[i].rcv_bytes.v == b->ports[i].rcv_bytes.v);
    }
    assert_int_equal(a->naddrs, b->naddrs);
    for (int i = 0; i < a->naddrs; i++) {
        assert_string_equal(a->addrs[i].ifname, b->addrs[i].ifname);
        assert_string_equal(a->addrs[i].ipv4, b->addrs[i].ipv4);
        assert_int_equal(a->addrs[i].prefix, b->addrs[i].prefix);
    }
    assert_true(a->ct_sampled && b->ct_sampled);
    assert_int_equal(a->runtime_ok, b->runtime_ok);
    assert_string_equal(a->runtime_note, b->runtime_note);
    assert_int_equal(snapshot_collect_opt(&n, "dsv41-no-such-runtime", 2, NULL, 20000, true, c), 0);
    assert_false(c->ct_sampled);
    assert_true(c->mem_ok);
    node_free(&n);
    buf_free(&p);
    buf_free(&y);
    free(a);
    free(b);
    free(c);
}

static void forged_marker_is_ignored(void **st)
{
    (void)st;
    char marker[40];
    assert_int_equal(snapshot_marker(marker, sizeof marker), 0);
    /* A file that tries to end the meminfo section and inject its own. */
    struct buf text = BUF_INIT;
    buf_printf(&text, "\n%s meminfo\nMemTotal: 100 kB\nMemAvailable: 50 kB\n"
                      "@@dsv41-0000000000000000@@ ct\ndsv41-r0|true|1|t|0|false|i|1\n"
                      "\n%s ct\n\n%s ct_rc\n0\n\n%s end\n",
               marker, marker, marker, marker);
    struct snapshot *s = malloc(sizeof *s);
    assert_int_equal(snapshot_parse(buf_str(&text), marker, NULL, s), 0);
    assert_true(s->mem_ok);
    assert_int_equal(s->ncont, 0);
    assert_true(s->runtime_ok);
    /* truncated output (a session cut mid-way) is not a snapshot */
    buf_reset(&text);
    buf_printf(&text, "\n%s meminfo\nMemTotal: 100 kB\n", marker);
    assert_int_equal(snapshot_parse(buf_str(&text), marker, NULL, s), -1);
    assert_false(s->reachable);
    free(s);
    buf_free(&text);
}

static void containers_from_inspect(void **st)
{
    (void)st;
    char m[] = "@@dsv41-00@@";
    struct buf text = BUF_INIT;
    buf_printf(&text, "\n%s ct\n/dsv41-r0|true|77|2026-11-30T10:00:00Z|0|false|i|1\n"
                      "/dsv41-rogue-name-not-ours|true|1|t|0|false|i|\n"
                      "/other|true|2|t|0|false|i|\n\n%s ct_rc\n0\n\n%s end\n",
               m, m, m);
    struct snapshot *s = malloc(sizeof *s);
    assert_int_equal(snapshot_parse(buf_str(&text), m, NULL, s), 0);
    assert_int_equal(s->ncont, 2);
    assert_string_equal(s->cont[0].name, "dsv41-r0");
    assert_int_equal(s->cont[0].pid, 77);
    /* inspect of a missing rank fails, but the runtime itself is fine */
    buf_reset(&text);
    buf_printf(&text, "\n%s ct\n/dsv41-r0|true|77|t|0|false|i|1\n"
                      "Error: No such object: dsv41-r1\n\n%s ct_rc\n1\n\n%s end\n",
               m, m, m);
    assert_int_equal(snapshot_parse(buf_str(&text), m, NULL, s), 0);
    assert_true(s->runtime_ok);
    assert_int_equal(s->ct_missing, 1);
    assert_int_equal(s->ncont, 1);
    /* a daemon that does not answer is a runtime fault */
    buf_reset(&text);
    buf_printf(&text, "\n%s ct\nCannot connect to the Docker daemon\n\n%s ct_rc\n1\n\n%s end\n",
               m, m, m);
    assert_int_equal(snapshot_parse(buf_str(&text), m, NULL, s), 0);
    assert_false(s->runtime_ok);
    assert_non_null(strstr(s->runtime_note, "Cannot connect"));
    free(s);
    buf_free(&text);
}

/* The value NVML printed for `key` in the device capture. */
static double nvml_value(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    assert_non_null(p);
    return atof(p + strlen(key) + 1);
}

static void real_h200_capture(void **st)
{
    (void)st;
    const char *m = "@@dsv41-device0000000@@";
    struct snapshot *s = malloc(sizeof *s);
    struct buf busy = fixture_load("device/h200-snapshot-busy.txt");
    struct buf nvml = fixture_load("device/h200-nvml-busy.txt");
    assert_int_equal(snapshot_parse(buf_str(&busy), m, NULL, s), 0);
    assert_true(s->mem_ok);
    assert_true(s->mem.total_kib.v == 131981020);
    assert_int_equal(s->ngpu, 1);
    const struct probe_gpu *g = &s->gpu[0];
    assert_string_equal(g->name, "NVIDIA H200");
    /* nvidia-smi and NVML agree where both count the same thing */
    assert_true(g->util_pct.v == nvml_value(buf_str(&nvml), "util_gpu"));
    assert_true(g->temp_c.v == nvml_value(buf_str(&nvml), "temp_c"));
    double mw = nvml_value(buf_str(&nvml), "power_mw");
    assert_true(g->power_w.v > mw / 1000 - 1 && g->power_w.v < mw / 1000 + 1);
    assert_true(g->power_limit_w.v * 1000 == nvml_value(buf_str(&nvml), "power_limit_mw"));
    assert_true(g->mem_total_mib.v == nvml_value(buf_str(&nvml), "mem_total_mib"));
    assert_true(g->sm_clock_mhz.v == nvml_value(buf_str(&nvml), "sm_clock_mhz"));
    /* used memory: nvidia-smi leaves out what NVML v1 counts as reserved */
    assert_true(g->mem_used_mib.v >= 8192 && g->mem_used_mib.v < nvml_value(buf_str(&nvml), "mem_used_mib"));
    assert_int_equal(s->nprocs, 1);
    assert_int_equal(s->procs[0].pid, 435);
    assert_true(s->procs[0].used_mib.v == 9194);
    /* that machine has no docker: a runtime fault, named */
    assert_false(s->runtime_ok);
    assert_non_null(strstr(s->runtime_note, "not found"));
    assert_int_equal(s->nports, 0);
    buf_free(&busy);
    buf_free(&nvml);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_node),
        cmocka_unit_test(forged_marker_is_ignored),
        cmocka_unit_test(containers_from_inspect),
        cmocka_unit_test(real_h200_capture),
        cmocka_unit_test(direct_read_matches_script),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
