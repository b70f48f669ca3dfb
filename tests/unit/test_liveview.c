/* liveview: a liveness probe's verdict counts only for the server it was
 * sent to. A server that holds the probe's stream open without a token (a
 * dead peer rank) is wedged; when the server goes down and comes back
 * (a relaunch) while the probe waits, its late verdict is dropped - it made
 * it/test_ops.sh and it/test_accept.sh see a fresh deployment "wedged". The
 * server here is a socket that answers 200 and an SSE header, then nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "liveview.h"
#include "mono.h"
#include "status.h"

static int g_lfd, g_port, g_held[16], g_nheld;

/* Accepts, answers 200 with an event stream's header, and holds the
 * connection open with no event: the empty stream of a dead peer. */
static void *silent_server(void *arg)
{
    (void)arg;
    for (int c; g_nheld < 16 && (c = accept(g_lfd, NULL, NULL)) >= 0;) {
        char req[4096];
        if (read(c, req, sizeof req) <= 0) {
            close(c);
            continue;
        }
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   "Transfer-Encoding: chunked\r\n\r\n";
        if (write(c, head, sizeof head - 1) < 0) {
            close(c);
            continue;
        }
        g_held[g_nheld++] = c;
    }
    return NULL;
}

static void report(struct status_report *r, bool up)
{
    memset(r, 0, sizeof *r);
    r->api.health_code = up ? 200 : 0;
    r->api.models_code = up ? 200 : 0;
    snprintf(r->api.model_id, sizeof r->api.model_id, "%s", up ? "m" : "");
    r->metrics_ok = up;
}

/* A probe sent at t=2 (idle since 0, PROBE_IDLE_S 1); down_between: the
 * server seen down while it waits. The state once the probe has ended. */
static struct liveness probe_once(const struct config *c, bool down_between)
{
    struct liveview *lv = liveview_start(c);
    assert_non_null(lv);
    struct status_report *r = calloc(1, sizeof *r);
    struct liveness out;
    report(r, true);
    liveview_feed(lv, r, 0, &out);
    liveview_feed(lv, r, 2, &out);
    assert_true(out.in_flight);
    if (down_between) {
        report(r, false);
        liveview_feed(lv, r, 2.5, &out);
        report(r, true);
    }
    double t0 = mono_s();
    do { /* its deadline is 1 s */
        usleep(50000);
        liveview_feed(lv, r, 3, &out);
    } while (out.in_flight && mono_s() - t0 < 20);
    assert_false(out.in_flight);
    free(r);
    liveview_stop(lv);
    return out;
}

static void stale_verdict(void **st)
{
    struct config *c = *st;
    /* the control: the same silence, the same server - wedged */
    struct liveness l = probe_once(c, false);
    assert_true(l.have);
    assert_true(l.wedged);
    /* the server went down and came back meanwhile: nothing said of it */
    l = probe_once(c, true);
    assert_false(l.have);
    assert_false(l.wedged);
}

static int setup(void **st)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    g_lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (g_lfd < 0 || bind(g_lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(g_lfd, 8) < 0 ||
        getsockname(g_lfd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    g_port = ntohs(a.sin_port);
    pthread_t th;
    if (pthread_create(&th, NULL, silent_server, NULL) != 0)
        return -1;
    pthread_detach(th);
    setenv("DSV41_API_KEY", "k", 1);
    char url[64];
    snprintf(url, sizeof url, "API_URL=http://127.0.0.1:%d", g_port);
    char *flags[] = {url, "PROBE_DEADLINE_S=1", "PROBE_IDLE_S=1"};
    struct config *c = calloc(1, sizeof *c);
    struct buf err = BUF_INIT;
    if (!c || config_load(c, "/nonexistent/config", flags, 3, &err) < 0) {
        fprintf(stderr, "%s\n", buf_str(&err));
        return -1;
    }
    buf_free(&err);
    *st = c;
    return 0;
}

static int teardown(void **st)
{
    config_free(*st);
    free(*st);
    return 0; /* the held connections go with the process */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(stale_verdict, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
