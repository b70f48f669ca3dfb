/* The engine parts behind the console: guard heartbeats read over ssh,
 * bench tables, rates from counters, the wake pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "benchtab.h"
#include "dlview.h"
#include "guardview.h"
#include "monitor.h"
#include "state.h"

static void guard_heartbeat_views(void **st)
{
    (void)st;
    char desc[240], ev[200];
    assert_int_equal(guardview_parse("1000 998 4242 2097152 1048576 armed\nalive\n"
                                     "2026-11-30 13:22:35 spark-worker ranks resolved: 77\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_OK);
    assert_string_equal(ev, "13:22:35 ranks resolved: 77");
    assert_non_null(strstr(desc, "avail 2048 MiB, floor 1024 MiB"));
    assert_int_equal(guardview_parse("1000 900 4242 1 1048576 armed\nalive\nx\n", desc, sizeof desc,
                                     ev, sizeof ev),
                     GUARD_VIEW_STALE); /* 100 s old */
    assert_int_equal(guardview_parse("1000 999 4242 1 1048576 fired\nalive\n"
                                     "2026-11-30 13:22:35 h FIRED: MemAvailable 900 MiB\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_FIRED);
    assert_int_equal(guardview_parse("1000 999 4242 1 1048576 armed\ndead\nx\n", desc, sizeof desc,
                                     ev, sizeof ev),
                     GUARD_VIEW_STALE); /* process gone */
    assert_non_null(strstr(desc, "process gone"));
    assert_int_equal(guardview_parse("1000 999 4242 1 1048576 armed\ndead\n"
                                     "2026-11-30 13:22:35 h guard stopped\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_NONE); /* stopped on purpose: no alarm */
    assert_int_equal(guardview_parse("1000 \ndead\n\n", desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_NONE);
    assert_int_equal(guardview_parse("garbage", desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_UNKNOWN);
    /* times whose difference overflows a long (found by the fuzzer) */
    assert_int_equal(guardview_parse("9223372036854775807 -9223372036854775807 1 1 1 armed\nalive\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_UNKNOWN);
    /* a hostile log line cannot carry escapes to the screen */
    guardview_parse("1000 999 1 1 1 armed\nalive\n\x1b[2Jevil\x1b]0;t\x07\n", desc, sizeof desc, ev,
                    sizeof ev);
    assert_null(strchr(ev, '\x1b'));
    assert_string_equal(ev, "evil");
    /* a guard with the signals: a warning is its own view, and said */
    assert_int_equal(guardview_parse("1000 999 4242 5000000 1048576 armed psi=12.5 frag=3 kmsg=0 "
                                     "warn=psi,frag\nalive\nx\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_WARN);
    assert_non_null(strstr(desc, "psi 12.5%, 4M blocks 3, NVRM 0, WARN psi,frag"));
    assert_int_equal(guardview_parse("1000 999 4242 5000000 1048576 armed psi=n/a frag=n/a "
                                     "kmsg=n/a warn=-\nalive\nx\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_OK);
    assert_non_null(strstr(desc, "psi n/a, 4M blocks n/a, NVRM n/a"));
    assert_null(strstr(desc, "WARN"));
    /* fired beats warned */
    assert_int_equal(guardview_parse("1000 999 4242 5000000 1048576 fired psi=80.0 frag=3 kmsg=0 "
                                     "warn=psi\nalive\nx\n",
                                     desc, sizeof desc, ev, sizeof ev),
                     GUARD_VIEW_FIRED);
    /* hostile bytes in the fields stay out of the description */
    guardview_parse("1000 999 1 1 1 armed psi=\x1b[2J frag=1 kmsg=1 warn=\x1b]0;t\x07\nalive\nx\n", desc,
                    sizeof desc, ev, sizeof ev);
    assert_null(strchr(desc, '\x1b'));
}

static void bench_table(void **st)
{
    (void)st;
    struct benchtab t;
    memset(&t, 0, sizeof t);
    const char *run = "{\"label\":\"old\",\"prefill\":{\"8192\":{\"median\":2001.5,\"runs\":[2001.5]}},"
                      "\"decode\":[{\"C\":1,\"kind\":\"code\",\"per_stream_median\":39.5},"
                      "{\"C\":2,\"kind\":\"code\",\"per_stream_median\":30,\"aggregate\":59.1}]}";
    assert_int_equal(benchtab_add(&t, 0, run, "f"), 0);
    assert_int_equal(benchtab_add(&t, 1, "{\"prefill\":{\"32768\":{\"median\":null}}}", "g"), 0);
    assert_int_equal(benchtab_add(&t, 2, "[1,2]", "h"), -1);
    assert_int_equal(benchtab_add(&t, 2, "{not json", "h"), -1);
    assert_int_equal(t.nruns, 2);
    assert_string_equal(t.run[0], "old");
    assert_string_equal(t.run[1], "g");
    bool pre = false, agg = false;
    for (int i = 0; i < t.nrows; i++) {
        if (strcmp(t.row[i].name, "prefill 8192") == 0) {
            pre = true;
            assert_true(t.row[i].ref == 2050);
            assert_true(t.row[i].v[0] == 2001.5);
            assert_true(t.row[i].v[1] == -1);
        }
        if (strcmp(t.row[i].name, "decode C=2 code agg") == 0) {
            agg = true;
            assert_true(t.row[i].ref == 60);
            assert_true(t.row[i].v[0] == 59.1);
        }
        if (strcmp(t.row[i].name, "prefill 32768") == 0)
            assert_true(t.row[i].v[1] == -1); /* null median: not measured */
    }
    assert_true(pre && agg);
    assert_int_equal(benchtab_load("/nonexistent", &t), 0);
}

static void counter_rates(void **st)
{
    (void)st;
    struct pval a = {true, 1000}, b = {true, 3000}, na = {false, 0};
    struct pval r = monitor_rate(a, b, 2);
    assert_true(r.ok && r.v == 1000);
    assert_false(monitor_rate(b, a, 2).ok); /* counter reset: n/a, never negative */
    assert_false(monitor_rate(na, b, 2).ok);
    assert_false(monitor_rate(a, b, 0).ok);
}

static void wake_pipe_coalesces(void **st)
{
    (void)st;
    static struct state s;
    assert_int_equal(state_init(&s), 0);
    for (int i = 0; i < 100000; i++)
        state_changed(&s);
    char b[16];
    assert_int_equal(read(s.wake[0], b, sizeof b), 1); /* one byte, not 100000 */
    assert_int_equal(s.version, 100000);
    state_drain_wake(&s);
    state_changed(&s);
    assert_int_equal(read(s.wake[0], b, sizeof b), 1);
    state_say(&s, "hello %d", 42);
    assert_string_equal(s.status_line, "hello 42");
    assert_int_equal(s.messages.end, 1);
    state_free(&s);
}

/* The download pane's numbers from a state file: landed bytes (verified
 * files whole), the files in flight with their parts, one whose bytes all
 * landed shown as hashing. */
static void download_summary(void **st)
{
    (void)st;
    struct dl_state s = {0};
    snprintf(s.repo, sizeof s.repo, "r/x");
    snprintf(s.commit, sizeof s.commit, "%040d", 7);
    /* made first: an entry moves when the next one is added */
    assert_non_null(dl_state_get(&s, "a.safetensors", 1000));
    assert_non_null(dl_state_get(&s, "b.safetensors", 600));
    assert_non_null(dl_state_get(&s, "c.json", 10));
    assert_non_null(dl_state_get(&s, "e.json", 50));
    struct dl_state_file *a = &s.f[0], *b = &s.f[1], *c = &s.f[2];
    a->verified = true;
    b->parts = 3;
    ranges_add(&b->landed, 0, 100);
    ranges_add(&b->landed, 300, 400);
    ranges_add(&c->landed, 0, 10);
    struct state_download d = {0};
    dlview_summarize(&s, &d);
    assert_int_equal(d.total, 1660);
    assert_int_equal(d.done, 1000 + 200 + 10);
    assert_int_equal(d.files, 4);
    assert_int_equal(d.verified, 1);
    assert_int_equal(d.ninflight, 2); /* e has nothing yet, a is done */
    assert_string_equal(d.inflight[0].path, "b.safetensors");
    assert_int_equal(d.inflight[0].done, 200);
    assert_int_equal(d.inflight[0].parts, 3);
    assert_false(d.inflight[0].hashing);
    assert_string_equal(d.inflight[1].path, "c.json");
    assert_true(d.inflight[1].hashing);
    assert_string_equal(d.repo, "r/x");
    /* more files in flight than the pane keeps: the ones with the most to
     * come, most first (the pane's rows show what the ETA waits on) */
    for (int i = 0; i < STATE_DL_FILES + 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "z%02d", i);
        struct dl_state_file *z = dl_state_get(&s, name, 100 + i);
        assert_non_null(z);
        ranges_add(&z->landed, 0, 1);
    }
    memset(&d, 0, sizeof d);
    dlview_summarize(&s, &d);
    assert_int_equal(d.ninflight, STATE_DL_FILES);
    assert_string_equal(d.inflight[0].path, "b.safetensors"); /* 400 to come */
    assert_string_equal(d.inflight[1].path, "z10");           /* 109 */
    assert_string_equal(d.inflight[STATE_DL_FILES - 1].path, "z04");
    dl_state_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(download_summary),
        cmocka_unit_test(guard_heartbeat_views),
        cmocka_unit_test(bench_table),
        cmocka_unit_test(counter_rates),
        cmocka_unit_test(wake_pipe_coalesces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
