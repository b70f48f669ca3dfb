/* Operations' pure parts: the exporter's page from a state made here (the
 * format, n/a left out, label values escaped), its address, token file and
 * bearer check; the events ring (settling, an incident renamed, events the
 * ring dropped); the alerts' rate limit, backoff and JSON; the supervisor's
 * hourly cap and backoff; its record's parsing; incident names by kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alert.h"
#include "buf.h"
#include "events.h"
#include "mono.h"
#include "exporter.h"
#include "opsfiles.h"
#include "promtext.h"
#include "state.h"
#include "supervise.h"
#include "suprec.h"

static struct state g_s;

static void two_nodes(struct state *s)
{
    s->nnodes = 2;
    s->nranks = 2;
    const char *names[] = {"head", "worker\"x"};
    for (int i = 0; i < 2; i++) {
        struct state_node *n = &s->nodes[i];
        snprintf(n->name, sizeof n->name, "%s", names[i]);
        n->configured = n->have = true;
        n->snap.reachable = true;
        n->snap.mem.available_kib = (struct pval){true, 1024};
        n->snap.psi_full = (struct pval){true, 12.5};
        n->snap.psi_some = (struct pval){false, 0}; /* n/a */
        n->guard = i ? GUARD_VIEW_FIRED : GUARD_VIEW_OK;
        snprintf(n->guard_desc, sizeof n->guard_desc, "pid 1 ok, psi 0%%, 4M blocks 9, NVRM %d",
                 3 * i);
        s->ranks[i].rank = i;
    }
    s->nodes[1].snap.nports = 1;
    struct rdma_port *p = &s->nodes[1].snap.ports[0];
    snprintf(p->dev, sizeof p->dev, "roce0");
    p->port = 1;
    p->state_num = 4;
    snprintf(p->rate, sizeof p->rate, "200 Gb/sec (4X HDR)");
    p->rcv_bytes = (struct pval){true, 4e12};
    p->xmit_bytes = (struct pval){false, 0};
}

static void page_of_a_state(void **st)
{
    (void)st;
    assert_int_equal(state_init(&g_s), 0);
    two_nodes(&g_s);
    struct opsfiles f = {0};
    f.read = true;
    f.accept_pass = 1;
    f.incidents[events_kind_index("rank-exited")] = 2;
    struct ops_counts k = {0};
    k.guard_firings[1] = 1;
    struct buf o = BUF_INIT;
    promtext_render(&g_s, &f, &k, &o);
    const char *t = buf_str(&o);
    assert_non_null(strstr(t, "# TYPE dsv41_memory_available_bytes gauge\n"));
    assert_non_null(strstr(t, "dsv41_memory_available_bytes{node=\"head\"} 1048576\n"));
    /* a quote in a label value is escaped */
    assert_non_null(strstr(t, "dsv41_memory_available_bytes{node=\"worker\\\"x\"} 1048576\n"));
    assert_non_null(strstr(t, "dsv41_memory_pressure_full_ratio{node=\"head\"} 0.125\n"));
    /* n/a is no sample, never a 0 */
    assert_null(strstr(t, "dsv41_memory_pressure_some_ratio{"));
    assert_null(strstr(t, "dsv41_rdma_port_transmit_bytes_total{"));
    assert_non_null(strstr(t, "# TYPE dsv41_memory_pressure_some_ratio gauge\n"));
    assert_non_null(strstr(t, "dsv41_rdma_port_rate_bytes_per_second{node=\"worker\\\"x\",device="
                              "\"roce0\",port=\"1\",netdev=\"\"} 25000000000\n"));
    assert_non_null(strstr(t, "dsv41_rdma_port_receive_bytes_total{node=\"worker\\\"x\",device="
                              "\"roce0\",port=\"1\",netdev=\"\"} 4000000000000\n"));
    assert_non_null(strstr(t, "dsv41_guard_state{node=\"worker\\\"x\",state=\"fired\"} 1\n"));
    assert_non_null(strstr(t, "dsv41_guard_state{node=\"worker\\\"x\",state=\"ok\"} 0\n"));
    assert_non_null(strstr(t, "dsv41_guard_firings_total{node=\"worker\\\"x\"} 1\n"));
    assert_non_null(strstr(t, "dsv41_kernel_nvrm_lines{node=\"worker\\\"x\"} 3\n"));
    assert_non_null(strstr(t, "dsv41_incidents_total{kind=\"rank-exited\"} 2\n"));
    assert_non_null(strstr(t, "dsv41_acceptance_pass 1\n"));
    /* the containers not asked yet: no rank figure rather than a 0 */
    assert_null(strstr(t, "\ndsv41_ranks_up "));
    /* the server not sampled: no API figure */
    assert_null(strstr(t, "\ndsv41_api_up "));
    /* a family's TYPE once, its samples together after it */
    const char *ty = strstr(t, "# TYPE dsv41_guard_state ");
    assert_non_null(ty);
    assert_null(strstr(ty + 1, "# TYPE dsv41_guard_state "));
    buf_free(&o);
    state_free(&g_s);
}

static void listen_addresses(void **st)
{
    (void)st;
    struct sockaddr_storage ss;
    socklen_t len;
    struct buf err = BUF_INIT;
    assert_int_equal(exporter_parse_listen("127.0.0.1:9841", &ss, &len, &err), 0);
    assert_true(exporter_is_loopback(&ss));
    assert_int_equal(exporter_parse_listen("[::1]:9841", &ss, &len, &err), 0);
    assert_true(exporter_is_loopback(&ss));
    assert_int_equal(exporter_parse_listen("10.0.0.2:80", &ss, &len, &err), 0);
    assert_false(exporter_is_loopback(&ss));
    assert_int_equal(exporter_parse_listen(":9841", &ss, &len, &err), 0);
    assert_false(exporter_is_loopback(&ss)); /* every address */
    assert_int_equal(exporter_parse_listen("127.0.0.1", &ss, &len, &err), -1);
    assert_int_equal(exporter_parse_listen("127.0.0.1:0", &ss, &len, &err), -1);
    assert_int_equal(exporter_parse_listen("127.0.0.1:70000", &ss, &len, &err), -1);
    assert_int_equal(exporter_parse_listen("head:9841", &ss, &len, &err), -1);
    assert_int_equal(exporter_parse_listen("[zz]:1", &ss, &len, &err), -1);
    buf_free(&err);
}

static void token_file_and_bearer(void **st)
{
    (void)st;
    char path[] = "/tmp/dsv41-test-tokenXXXXXX", tok[EXPORTER_TOKEN_MAX + 1];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "0123456789abcdef0123\n", 21), 21);
    close(fd);
    struct buf err = BUF_INIT;
    chmod(path, 0644);
    assert_int_equal(exporter_read_token(path, tok, sizeof tok, &err), -1);
    assert_non_null(strstr(buf_str(&err), "chmod 600"));
    chmod(path, 0600);
    buf_reset(&err);
    assert_int_equal(exporter_read_token(path, tok, sizeof tok, &err), 0);
    assert_string_equal(tok, "0123456789abcdef0123");
    assert_true(exporter_auth_ok("Bearer 0123456789abcdef0123", tok));
    assert_false(exporter_auth_ok("Bearer 0123456789abcdef012", tok));
    assert_false(exporter_auth_ok("Bearer 0123456789abcdef01234", tok));
    assert_false(exporter_auth_ok("bearer 0123456789abcdef0123", tok));
    assert_false(exporter_auth_ok("Basic 0123456789abcdef0123", tok));
    assert_false(exporter_auth_ok(NULL, tok));
    /* too short to be a secret */
    FILE *f = fopen(path, "w");
    fputs("short\n", f);
    fclose(f);
    buf_reset(&err);
    assert_int_equal(exporter_read_token(path, tok, sizeof tok, &err), -1);
    unlink(path);
    buf_free(&err);
}

static void events_ring(void **st)
{
    (void)st;
    assert_int_equal(state_init(&g_s), 0);
    uint64_t a = events_push(&g_s, "rank-exited", "worker", "/d/1", "rank r1 \x1b[31mexited");
    struct state_event ev[4];
    uint64_t next = 0, lost = 0;
    /* not settled yet */
    assert_int_equal(events_read(&g_s, &next, 60, ev, 4, &lost), 0);
    assert_true(events_update(&g_s, a, "guard-fired", "worker", "memory guard fired", "/d/1-g"));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, &lost), 1);
    assert_string_equal(ev[0].kind, "guard-fired");
    assert_string_equal(ev[0].incident, "/d/1-g");
    assert_int_equal(next, 1);
    /* remote text cleaned; a symptom read once its cause is known (no guards here) */
    uint64_t b = events_push(&g_s, "wedged", NULL, NULL, "x\x1b[2Jy");
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, &lost), 0);
    events_causes_seen(&g_s, events_guards_asked(&g_s, false));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, &lost), 1);
    assert_null(strchr(ev[0].what, 0x1b));
    assert_int_equal(ev[0].seq, b);
    /* a reader left behind skips what the ring dropped, counted */
    for (int i = 0; i < STATE_EVENTS + 3; i++)
        events_push(&g_s, "guard-warning", "head", NULL, "w");
    assert_false(events_update(&g_s, b, "x", "w", "y", "z"));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, &lost), 4);
    assert_int_equal(lost, 3);
    assert_int_equal(events_kind_index("restart"), 8);
    assert_int_equal(events_kind_index("nope"), -1);
    state_free(&g_s);
}

/* A wedge or a rank's exit waits for every node's guard to be asked after
 * it: the guard's firing that caused it, seen late, renames it first. */
static void events_wait_for_cause(void **st)
{
    (void)st;
    assert_int_equal(state_init(&g_s), 0);
    two_nodes(&g_s);
    uint64_t a = events_push(&g_s, "rank-exited", "worker", "/d/1", "rank r1 exited");
    double at = g_s.events[a % STATE_EVENTS].at;
    struct state_event ev[4];
    uint64_t next = 0;
    g_s.nodes[0].guard_read_at = g_s.nodes[1].guard_read_at = at - 1; /* both asked before */
    events_causes_seen(&g_s, events_guards_asked(&g_s, true));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, NULL), 0);
    g_s.nodes[0].guard_read_at = at + 0.5; /* the head's asked since; the worker's not */
    events_causes_seen(&g_s, events_guards_asked(&g_s, true));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, NULL), 0);
    /* long past the settle, the worker's guard still to hear from - and it fired */
    g_s.events[a % STATE_EVENTS].at -= 3 * EVENTS_SETTLE_S;
    g_s.nodes[0].guard_read_at -= 3 * EVENTS_SETTLE_S;
    g_s.nodes[1].guard_read_at -= 3 * EVENTS_SETTLE_S;
    g_s.causes_at -= 3 * EVENTS_SETTLE_S; /* it never moves back: the clock goes with it */
    events_causes_seen(&g_s, events_guards_asked(&g_s, true));
    assert_int_equal(events_read(&g_s, &next, EVENTS_SETTLE_S, ev, 4, NULL), 0);
    assert_true(events_update(&g_s, a, "guard-fired", "worker", "memory guard fired", "/d/1-g"));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, NULL), 1);
    assert_string_equal(ev[0].kind, "guard-fired");
    /* a node whose guard cannot be asked holds a symptom EVENTS_CAUSE_WAIT_S at most */
    uint64_t b = events_push(&g_s, "wedged", NULL, NULL, "engine wedged");
    events_causes_seen(&g_s, events_guards_asked(&g_s, true));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, NULL), 0);
    g_s.events[b % STATE_EVENTS].at -= EVENTS_CAUSE_WAIT_S;
    assert_false(events_update(&g_s, b, "guard-fired", "worker", "late", "/d/2"));
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, NULL), 1);
    assert_string_equal(ev[0].kind, "wedged");
    /* a node never asked (no answer in yet) holds nothing up; once asked, it counts */
    double now = mono_s();
    g_s.nodes[1].guard_read_at = 0;
    g_s.nodes[0].guard_read_at = now;
    assert_true(events_guards_asked(&g_s, true) >= now);
    g_s.nodes[1].guard_read_at = now - 7;
    assert_true(events_guards_asked(&g_s, true) <= now - 7);
    /* what is no symptom does not wait */
    events_push(&g_s, "guard-warning", "head", NULL, "w");
    assert_int_equal(events_read(&g_s, &next, 0, ev, 4, NULL), 1);
    state_free(&g_s);
}

/* The edges events_check turns into events: nothing on a node's first
 * sample, then each change once. */
static void events_from_samples(void **st)
{
    (void)st;
    assert_int_equal(state_init(&g_s), 0);
    two_nodes(&g_s);
    g_s.nodes[1].guard = GUARD_VIEW_OK;
    g_s.server.have = true;
    struct events_watch w = {0};
    events_check(&w, &g_s); /* learns how things stand */
    events_check(&w, &g_s);
    assert_int_equal(g_s.events_end, 0);
    g_s.nodes[1].snap.reachable = false;
    snprintf(g_s.nodes[1].snap.error, sizeof g_s.nodes[1].snap.error, "timed out");
    g_s.nodes[0].guard = GUARD_VIEW_WARN;
    snprintf(g_s.nodes[0].fabric_drift, sizeof g_s.nodes[0].fabric_drift, "GID index 3 -> 5");
    g_s.server.nwarnings = 1;
    snprintf(g_s.server.warnings[0], sizeof g_s.server.warnings[0], "bench of x below baseline");
    events_check(&w, &g_s);
    events_check(&w, &g_s); /* the same picture again: nothing new */
    struct state_event ev[8];
    uint64_t next = 0;
    int n = events_read(&g_s, &next, 0, ev, 8, NULL);
    assert_int_equal(n, 4);
    const char *want[] = {"guard-warning", "fabric-drift", "node-unreachable", "bench-regression"};
    for (int i = 0; i < 4; i++) {
        bool seen = false;
        for (int k = 0; k < n; k++)
            seen |= strcmp(ev[k].kind, want[i]) == 0;
        assert_true(seen);
    }
    /* an unreachable node's guard is not known: no warning when it comes back as it was */
    g_s.nodes[1].snap.reachable = true;
    events_check(&w, &g_s);
    assert_int_equal(events_read(&g_s, &next, 0, ev, 8, NULL), 0);
    state_free(&g_s);
}

static void alert_limits_and_json(void **st)
{
    (void)st;
    struct alert_limit l = {0};
    for (int i = 0; i < 3; i++)
        assert_true(alert_limit_take(&l, 3, 100 + i));
    assert_false(alert_limit_take(&l, 3, 200));
    assert_true(alert_limit_take(&l, 3, 100 + ALERT_WINDOW_S)); /* the first left the window */
    assert_true(alert_backoff(1) == 1 && alert_backoff(2) == 2 && alert_backoff(4) == 8);
    assert_true(alert_backoff(30) == 60);
    struct state_event e = {.seq = 7, .t = 1800000000};
    snprintf(e.kind, sizeof e.kind, "guard-fired");
    snprintf(e.what, sizeof e.what, "memory \"guard\" fired");
    char *j = alert_json(&e, "spark-head", 2);
    cJSON *p = cJSON_Parse(j);
    assert_non_null(p);
    assert_string_equal(cJSON_GetObjectItem(p, "kind")->valuestring, "guard-fired");
    assert_string_equal(cJSON_GetObjectItem(p, "what")->valuestring, "memory \"guard\" fired");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(p, "incident")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(p, "node")));
    assert_int_equal(cJSON_GetObjectItem(p, "suppressed")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(p, "seq")->valueint, 7);
    cJSON_Delete(p);
    free(j);
    struct buf body = BUF_INIT;
    char title[200];
    snprintf(e.incident, sizeof e.incident, "/s/incidents/x");
    alert_text(&e, "spark-head", 0, &body, title, sizeof title);
    assert_string_equal(title, "spark-head: guard-fired (dsv41-top)");
    assert_non_null(strstr(buf_str(&body), "incident: /s/incidents/x\n"));
    buf_free(&body);
}

static void supervise_cap(void **st)
{
    (void)st;
    time_t now = 1800000000;
    assert_true(supervise_next_wait(NULL, 0, now, 3, 30) == 30);
    time_t done[] = {now - 100, now - 7200};
    /* one in the hour (the other is older): doubled once */
    assert_true(supervise_next_wait(done, 2, now, 3, 30) == 60);
    time_t full[] = {now - 10, now - 20, now - 30};
    assert_true(supervise_next_wait(full, 3, now, 3, 30) < 0);
    assert_true(supervise_next_wait(full, 3, now + 3600, 3, 30) == 30);
    assert_true(supervise_next_wait(full, 2, now, 3, 0) == 0);
}

static void record_parse(void **st)
{
    (void)st;
    struct suprec r;
    suprec_parse("1799999000\trestart\trank-exited\trelaunched after rank-exited\n"
                 "garbage line\n"
                 "1799999990\trestart\twedged\trelaunched after wedged\n"
                 "1790000000\trestart\twedged\told\n"
                 "1799999995\tgave-up\trank-exited\t3 relaunches\n",
                 1800000000, &r);
    assert_int_equal(r.ncauses, 2);
    assert_string_equal(r.causes[0].cause, "rank-exited");
    assert_int_equal(r.causes[0].restarts, 1);
    assert_int_equal(r.causes[1].restarts, 2);
    assert_int_equal(r.nhour, 2);
    assert_true(r.gave_up);
    assert_non_null(strstr(r.last, "gave-up: 3 relaunches"));
    suprec_parse("", 1800000000, &r);
    assert_int_equal(r.ncauses + r.nhour + r.gave_up, 0);
}

/* A record past 1 MiB: its newest lines still count; the stop mark. */
static void record_file(void **st)
{
    (void)st;
    char dir[] = "/tmp/dsv41-test-suprecXXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[200];
    snprintf(path, sizeof path, "%s/%s", dir, SUPREC_FILE);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 30000; i++)
        fprintf(f, "1700000000\trestart\twedged\tan old relaunch, long ago, padded to be long\n");
    fclose(f);
    time_t now = time(NULL);
    struct buf err = BUF_INIT;
    assert_int_equal(suprec_append(dir, "restart", "rank-exited", "new\tone\x1b[2J", &err), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > (1 << 20));
    assert_int_equal((int)(sb.st_mode & 0777), 0600);
    struct suprec r;
    suprec_load(dir, now, &r);
    assert_int_equal(r.nhour, 1);
    assert_non_null(strstr(r.last, "restart: new"));
    assert_non_null(strstr(r.last, "one"));
    assert_null(strchr(r.last, '\t'));
    assert_null(strchr(r.last, 0x1b));
    time_t at;
    long ppid;
    assert_false(suprec_last_stop(dir, &at, &ppid));
    suprec_mark_stop(dir);
    assert_true(suprec_last_stop(dir, &at, &ppid));
    assert_true(ppid == (long)getppid() && at >= now);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", dir, SUPREC_STOP_FILE);
    unlink(path);
    rmdir(dir);
    buf_free(&err);
}

static void incident_names(void **st)
{
    (void)st;
    assert_int_equal(opsfiles_incident_kind("20261204-131500-guard-fired"), 0);
    assert_int_equal(opsfiles_incident_kind("20261204-131500-rank-exited-2"), 3);
    assert_int_equal(opsfiles_incident_kind("20261204-131500-restart"), 8);
    assert_int_equal(opsfiles_incident_kind("20261204-131500-other"), -1);
    assert_int_equal(opsfiles_incident_kind("notes.txt"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(page_of_a_state),  cmocka_unit_test(listen_addresses),
        cmocka_unit_test(token_file_and_bearer), cmocka_unit_test(events_ring),
        cmocka_unit_test(events_from_samples), cmocka_unit_test(events_wait_for_cause),
        cmocka_unit_test(alert_limits_and_json), cmocka_unit_test(supervise_cap),
        cmocka_unit_test(record_parse),     cmocka_unit_test(record_file),
        cmocka_unit_test(incident_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
