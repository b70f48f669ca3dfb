/* Parsers of /proc, nvidia-smi and container inspect output, on fixtures
 * (real H200 captures, a GB10 written from its documented behaviour) and on
 * hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fixture.h"
#include "text.h"
#include "inspect.h"
#include "probe.h"

static void meminfo_spark(void **st)
{
    (void)st;
    struct buf b = fixture_load("proc/spark/meminfo");
    struct probe_mem m;
    assert_int_equal(probe_parse_meminfo(buf_str(&b), &m), 0);
    assert_true(m.total_kib.ok);
    assert_true(m.total_kib.v == 127601496);
    assert_true(m.available_kib.v == 4203344);
    assert_true(m.free_kib.v == 3015532);
    /* "SwapCached:" must not be taken for "Cached:" */
    assert_true(m.cached_kib.ok && m.cached_kib.v == 1843200);
    buf_free(&b);
}

static void meminfo_missing_and_garbage(void **st)
{
    (void)st;
    struct probe_mem m;
    assert_int_equal(probe_parse_meminfo("", &m), -1);
    assert_false(m.total_kib.ok);
    assert_int_equal(probe_parse_meminfo("MemTotal: 100 kB\n", &m), -1);
    assert_true(m.total_kib.ok);
    assert_false(m.available_kib.ok);
    assert_int_equal(probe_parse_meminfo("MemTotal: lots kB\nMemAvailable: -\n", &m), -1);
    assert_false(m.total_kib.ok);
    assert_int_equal(probe_parse_meminfo("MemTotal: 99999999999999999999999 kB\n", &m), -1);
    /* truncated in the middle of a line */
    assert_int_equal(probe_parse_meminfo("MemTotal: 100 kB\nMemAvail", &m), -1);
    /* binary */
    char bin[256];
    for (int i = 0; i < 255; i++)
        bin[i] = (char)(i + 1);
    bin[255] = '\0';
    assert_int_equal(probe_parse_meminfo(bin, &m), -1);
}

static void meminfo_huge(void **st)
{
    (void)st;
    struct buf b = BUF_INIT;
    for (int i = 0; i < 200000; i++)
        buf_puts(&b, "Junk:      1 kB\n");
    buf_puts(&b, "MemTotal: 10 kB\nMemAvailable: 5 kB\n");
    struct probe_mem m;
    assert_int_equal(probe_parse_meminfo(buf_str(&b), &m), 0);
    assert_true(m.available_kib.v == 5);
    buf_free(&b);
}

static void vmstat_oom(void **st)
{
    (void)st;
    struct buf b = fixture_load("proc/spark/vmstat");
    struct pval v;
    assert_int_equal(probe_parse_vmstat_oom(buf_str(&b), &v), 0);
    assert_true(v.ok && v.v == 2);
    assert_int_equal(probe_parse_vmstat_oom("pgfault 1\n", &v), -1);
    assert_false(v.ok);
    assert_int_equal(probe_parse_vmstat_oom("oom_kill x\n", &v), -1);
    buf_free(&b);
}

static void smi_numbers(void **st)
{
    (void)st;
    assert_false(probe_parse_smi_number("[N/A]").ok);
    assert_false(probe_parse_smi_number("[Not Supported]").ok);
    assert_false(probe_parse_smi_number("N/A").ok);
    assert_false(probe_parse_smi_number("").ok);
    assert_false(probe_parse_smi_number("12 parsecs").ok);
    assert_false(probe_parse_smi_number("nan").ok);
    struct pval v = probe_parse_smi_number(" 123.03 W");
    assert_true(v.ok && v.v > 123.02 && v.v < 123.04);
    v = probe_parse_smi_number("0 %");
    assert_true(v.ok && v.v == 0);
}

static void gpu_h200(void **st)
{
    (void)st;
    struct buf b = fixture_load("nvidia-smi/h200-query-gpu-noheader-nounits.csv");
    struct probe_gpu g[4];
    assert_int_equal(probe_parse_gpu_csv(buf_str(&b), g, 4), 1);
    assert_string_equal(g[0].name, "NVIDIA H200");
    assert_string_equal(g[0].uuid, "GPU-12ba0284-341e-3561-e971-c84f9a15cb54");
    assert_true(g[0].temp_c.ok && g[0].temp_c.v == 35);
    assert_true(g[0].power_limit_w.ok && g[0].power_limit_w.v == 700);
    assert_true(g[0].mem_total_mib.ok && g[0].mem_total_mib.v == 143771);
    assert_true(g[0].mem_used_mib.ok && g[0].mem_used_mib.v == 0);
    assert_true(g[0].sm_clock_mhz.ok && g[0].sm_clock_mhz.v == 1980);
    buf_free(&b);
}

static void gpu_gb10_reports_na_not_zero(void **st)
{
    (void)st;
    struct buf b = fixture_load("nvidia-smi/gb10-query-gpu.csv");
    struct probe_gpu g[4];
    assert_int_equal(probe_parse_gpu_csv(buf_str(&b), g, 4), 1);
    assert_string_equal(g[0].name, "NVIDIA GB10");
    assert_true(g[0].util_pct.ok && g[0].util_pct.v == 37);
    assert_true(g[0].power_w.ok);
    assert_false(g[0].power_limit_w.ok);
    assert_false(g[0].mem_total_mib.ok);
    assert_false(g[0].mem_used_mib.ok);
    assert_false(g[0].mem_free_mib.ok);
    buf_free(&b);
}

static void gpu_malformed(void **st)
{
    (void)st;
    struct probe_gpu g[2];
    assert_int_equal(probe_parse_gpu_csv("", g, 2), 0);
    assert_int_equal(probe_parse_gpu_csv("0, NVIDIA H200, GPU-1, 0\n", g, 2), -1);
    assert_int_equal(probe_parse_gpu_csv("x,a,b,c,d,e,f,g,h,i,j\n", g, 2), -1);
    /* the with-header format is not what we query: refused, not misread */
    struct buf b = fixture_load("nvidia-smi/h200-query-gpu-header.csv");
    assert_int_equal(probe_parse_gpu_csv(buf_str(&b), g, 2), -1);
    buf_free(&b);
    /* more GPUs than room: the first ones are kept */
    const char *two = "0, A, U0, 1, 2, 3, 4, 5, 6, 7, 8\n1, B, U1, 1, 2, 3, 4, 5, 6, 7, 8\n";
    assert_int_equal(probe_parse_gpu_csv(two, g, 1), 1);
    /* control bytes in a name are neutralised */
    assert_int_equal(probe_parse_gpu_csv("0, \x1b[31mX, U, 1, 2, 3, 4, 5, 6, 7, 8\n", g, 2), 1);
    assert_null(strchr(g[0].name, '\x1b'));
}

static void compute_apps(void **st)
{
    (void)st;
    struct probe_gpu_proc p[4];
    struct buf b = fixture_load("nvidia-smi/h200-compute-apps.csv");
    assert_int_equal(probe_parse_compute_apps(buf_str(&b), p, 4), 1);
    assert_int_equal(p[0].pid, 419);
    assert_string_equal(p[0].name, "python3");
    assert_true(p[0].used_mib.ok && p[0].used_mib.v == 8710);
    buf_free(&b);
    b = fixture_load("nvidia-smi/gb10-compute-apps.csv");
    assert_int_equal(probe_parse_compute_apps(buf_str(&b), p, 4), 2);
    assert_false(p[1].used_mib.ok);
    buf_free(&b);
    assert_int_equal(probe_parse_compute_apps("No running processes found\n", p, 4), 0);
    assert_int_equal(probe_parse_compute_apps("GPU-1, notapid, x, 1\n", p, 4), -1);
}

static void inspect_lines(void **st)
{
    (void)st;
    struct container_info c;
    assert_int_equal(
        inspect_parse_line(
            "/dsv41-r0|true|4242|2026-11-30T10:00:00.123Z|0|false|sha256:abc|1", &c),
        0);
    assert_string_equal(c.image, "abc"); /* one form for docker and podman */
    assert_true(c.managed);
    assert_string_equal(c.name, "dsv41-r0");
    assert_true(c.running);
    assert_int_equal(c.pid, 4242);
    assert_string_equal(c.started, "2026-11-30T10:00:00.123Z");
    /* podman: no slash, spaces in the time */
    assert_int_equal(inspect_parse_line(
                         "dsv41-r1|false|0|2026-11-30 10:00:00.1 +0000 UTC|137|true|abc|<no value>\n",
                         &c),
                     0);
    assert_false(c.running);
    assert_int_equal(c.exit_code, 137);
    assert_true(c.oom_killed);
    assert_false(c.managed); /* docker's missing label */
    assert_int_equal(inspect_parse_line("dsv41-r1|true|1|t|0|false|img|", &c), 0);
    assert_false(c.managed); /* podman's missing label */
    assert_int_equal(inspect_parse_line("", &c), -1);
    assert_int_equal(inspect_parse_line("dsv41-r0|yes|1|t|0|false", &c), -1);
    assert_int_equal(inspect_parse_line("dsv41-r0|true|1|t|0", &c), -1);
    assert_int_equal(inspect_parse_line("dsv41-r0|true|1|t|0|false|i|1|extra", &c), -1);
    assert_int_equal(inspect_parse_line("dsv41-r0|true|1|t|0|false", &c), -1);
    assert_int_equal(inspect_parse_line("Error: no such container dsv41-r0", &c), -1);
}

static void copy_field_sanitises(void **st)
{
    (void)st;
    char out[32];
    text_copy_field(out, sizeof out, "ok \xc3\xa9 \x1b[2J \xff\xfe \xc2\x9b", 15);
    assert_string_equal(out, "ok \xc3\xa9 ?[2J ?? ?");
    /* a character cut by the end of the input is not copied half */
    text_copy_field(out, sizeof out, "ab\xe2\x82", 4);
    assert_string_equal(out, "ab??");
    /* nor is one cut by the end of the output */
    text_copy_field(out, 4, "ab\xe2\x82\xac", 5);
    assert_string_equal(out, "ab");
    /* overlong encodings and surrogates are invalid */
    text_copy_field(out, sizeof out, "\xc0\xaf\xed\xa0\x80", 5);
    assert_null(strchr(out, '\xc0'));
    assert_null(strchr(out, '\xed'));
}

static void started_times(void **st)
{
    (void)st;
    time_t t;
    assert_int_equal(inspect_parse_started("2026-11-30T10:38:33.778136457Z", &t), 0);
    assert_int_equal(t, 1796035113);
    assert_int_equal(inspect_parse_started("2026-11-30 10:38:33.778136457 +0000 UTC", &t), 0);
    assert_int_equal(t, 1796035113);
    assert_int_equal(inspect_parse_started("2026-11-30 11:38:33.7 +0100 CET", &t), 0);
    assert_int_equal(t, 1796035113);
    assert_int_equal(inspect_parse_started("0001-01-01T00:00:00Z", &t), -1);
    assert_int_equal(inspect_parse_started("yesterday", &t), -1);
    assert_int_equal(inspect_parse_started("", &t), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(meminfo_spark),
        cmocka_unit_test(meminfo_missing_and_garbage),
        cmocka_unit_test(meminfo_huge),
        cmocka_unit_test(vmstat_oom),
        cmocka_unit_test(smi_numbers),
        cmocka_unit_test(gpu_h200),
        cmocka_unit_test(gpu_gb10_reports_na_not_zero),
        cmocka_unit_test(gpu_malformed),
        cmocka_unit_test(compute_apps),
        cmocka_unit_test(inspect_lines),
        cmocka_unit_test(copy_field_sanitises),
        cmocka_unit_test(started_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
