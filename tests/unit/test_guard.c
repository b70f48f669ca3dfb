/* The memory guard on a fake /proc whose MemAvailable the test scripts over
 * time, with real child processes standing in for the ranks and for an
 * unrelated process that must survive. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "guard.h"

static char dir[64];

static void set_avail(long kib)
{
    char path[128];
    snprintf(path, sizeof path, "%s/proc/meminfo", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "MemTotal:       127601496 kB\nMemFree:         %ld kB\nMemAvailable:   %ld kB\n"
               "Cached:          1843200 kB\n",
            kib / 2, kib);
    fclose(f);
}

static pid_t child(void)
{
    pid_t p = fork();
    if (p == 0) {
        for (;;)
            pause();
    }
    return p;
}

static bool killed_by_sigkill(pid_t p)
{
    int st;
    for (int i = 0; i < 100; i++) {
        if (waitpid(p, &st, WNOHANG) == p)
            return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        usleep(10000);
    }
    return false;
}

static bool alive(pid_t p)
{
    int st;
    return waitpid(p, &st, WNOHANG) == 0;
}

static char *log_text(void)
{
    struct buf b = BUF_INIT, path = BUF_INIT;
    buf_printf(&path, "%s/state/memguard.log", dir);
    buf_read_file(&b, buf_str(&path), 1 << 20);
    buf_free(&path);
    return b.data ? b.data : strdup("");
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static int setup(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/dsv41-guard-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char p[128];
    snprintf(p, sizeof p, "%s/proc", dir);
    return mkdir(p, 0700);
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static struct guard_opts opts(void)
{
    struct guard_opts o;
    memset(&o, 0, sizeof o);
    snprintf(o.proc_root, sizeof o.proc_root, "%s/proc", dir);
    snprintf(o.state_dir, sizeof o.state_dir, "%s/state", dir);
    o.floor_kib = 1L << 20;        /* 1 GiB */
    o.trace_kib = 10L << 20;       /* 10 GiB */
    o.rearm_kib = 512L << 10;      /* 512 MiB */
    o.resolve_s = 5;
    return o;
}

static void parse(void **st)
{
    (void)st;
    const char *t = "MemTotal: 100 kB\nMemAvailable:   4203344 kB\n";
    assert_int_equal(guard_parse_available(t, strlen(t)), 4203344);
    assert_int_equal(guard_parse_available("MemTotal: 1 kB\n", 15), -1);
    assert_int_equal(guard_parse_available("XMemAvailable: 5 kB\n", 20), -1);
    assert_int_equal(guard_parse_available("MemAvailable: x kB\n", 19), -1);
    /* truncated right after the key */
    assert_int_equal(guard_parse_available("MemAvailable:", 13), -1);
}

static void floor_kill_hysteresis_rearm(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(5L << 20);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    pid_t r0 = child(), r1 = child(), other = child();
    pid_t ranks[2] = {r0, r1};
    guard_set_pids(&g, ranks, 2);

    int ms = guard_tick(&g, 100.0);
    assert_true(ms > 600 && ms < 750); /* 4 GiB headroom at 6000 MiB/s */
    assert_true(alive(r0) && alive(r1));
    set_avail(2L << 20);
    ms = guard_tick(&g, 101.0);
    assert_true(ms >= 100 && ms < 200);

    set_avail((1L << 20) - 1);
    assert_int_equal(guard_tick(&g, 102.0), 10);
    assert_true(killed_by_sigkill(r0));
    assert_true(killed_by_sigkill(r1));
    assert_true(alive(other));
    assert_int_equal(g.kills, 2);
    char *log = log_text();
    assert_int_equal(count(log, "FIRED: MemAvailable 1023 MiB < floor 1024 MiB: SIGKILL to 2 of 2"), 1);
    free(log);

    /* still below: no second firing; a little above: not re-armed yet */
    guard_tick(&g, 102.5);
    set_avail((1L << 20) + (256L << 10));
    guard_tick(&g, 103.0);
    assert_false(g.armed);
    set_avail((1L << 20) + (600L << 10));
    guard_tick(&g, 104.0);
    assert_true(g.armed);

    /* ranks restarted: new PIDs resolved, the new ones die next time */
    pid_t n0 = child();
    guard_set_pids(&g, &n0, 1);
    set_avail(100L << 10);
    guard_tick(&g, 105.0);
    assert_true(killed_by_sigkill(n0));
    assert_true(alive(other));
    log = log_text();
    assert_int_equal(count(log, "FIRED"), 2);
    assert_int_equal(count(log, "re-armed"), 1);
    assert_int_equal(count(log, "ranks resolved"), 2);
    free(log);
    kill(other, SIGKILL);
    waitpid(other, NULL, 0);
    guard_close(&g);
}

static void trace_every_10s_and_heartbeat(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(8L << 20); /* under the trace threshold, above the floor */
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    char *before = log_text();
    int t0 = count(before, "trace:");
    free(before);
    guard_tick(&g, 1000.0);
    guard_tick(&g, 1005.0);
    guard_tick(&g, 1011.0);
    char *log = log_text();
    assert_int_equal(count(log, "trace:") - t0, 2);
    assert_non_null(strstr(log, "trace: MemAvailable 8192 MiB; biggest:"));
    free(log);
    struct buf hb = BUF_INIT, path = BUF_INIT;
    char hbp[600];
    char sd[300];
    snprintf(sd, sizeof sd, "%s/state", dir);
    guard_file(sd, "heartbeat", hbp, sizeof hbp);
    buf_puts(&path, hbp);
    assert_int_equal(buf_read_file(&hb, buf_str(&path), 4096), 0);
    long ts, pid, avail, fl;
    char state[16];
    assert_int_equal(sscanf(buf_str(&hb), "%ld %ld %ld %ld %15s", &ts, &pid, &avail, &fl, state), 5);
    assert_int_equal(pid, getpid());
    assert_int_equal(avail, 8L << 20);
    assert_string_equal(state, "armed");
    buf_free(&hb);
    buf_free(&path);
    /* one guard per node */
    struct guard g2;
    int rc = guard_open(&g2, &o, err, sizeof err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "another guard is running on this node"));
    guard_close(&g);
    assert_int_equal(guard_open(&g2, &o, err, sizeof err), 0);
    guard_close(&g2);
}

static void unreadable_meminfo(void **st)
{
    (void)st;
    struct guard g;
    struct guard_opts o = opts();
    char err[256];
    set_avail(5L << 20);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/proc/meminfo", dir);
    FILE *f = fopen(path, "w");
    fputs("garbage\n\x01\x02", f);
    fclose(f);
    assert_int_equal(guard_tick(&g, 1.0), 1000);
    assert_int_equal(g.kills, 0);
    char *log = log_text();
    assert_non_null(strstr(log, "cannot read MemAvailable"));
    free(log);
    guard_close(&g);
    snprintf(o.proc_root, sizeof o.proc_root, "%s/nowhere", dir);
    assert_int_equal(guard_open(&g, &o, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse),
        cmocka_unit_test(floor_kill_hysteresis_rearm),
        cmocka_unit_test(trace_every_10s_and_heartbeat),
        cmocka_unit_test(unreadable_meminfo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
