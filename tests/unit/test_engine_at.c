/* The worker's engine through its ssh session: the direct-streamlocal open
 * message byte for byte (OpenSSH PROTOCOL 2.4), an inspect answer as the
 * channel brings it (whole, chunked, 404, cut short, no HTTP at all) read
 * into the container, and the ct lines applied to a snapshot as a full
 * frame's ct section would set it. The transport here hands back canned
 * answers; the real one (sshio's W_UNIX through a real sshd to podman) runs
 * in tests/it/test_engine_remote.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_at.h"
#include "fixture.h"
#include "snapshot.h"
#include "ssh.h"

static void open_message(void **st)
{
    (void)st;
    struct buf b = BUF_INIT;
    assert_int_equal(ssh_streamlocal_msg(&b, "/run/podman/podman.sock"), 0);
    static const unsigned char want[] = {0, 0, 0, 23, '/', 'r', 'u', 'n', '/', 'p', 'o', 'd',
                                         'm', 'a', 'n', '/', 'p', 'o', 'd', 'm', 'a', 'n', '.',
                                         's', 'o', 'c', 'k', 0,   0,   0,   0,   0,   0,   0,
                                         0};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    buf_reset(&b);
    assert_int_equal(ssh_streamlocal_msg(&b, ""), -1);
    char *huge = malloc(5000);
    memset(huge, 'a', 4999);
    huge[4999] = '\0';
    assert_int_equal(ssh_streamlocal_msg(&b, huge), -1);
    free(huge);
    /* a path of 300 bytes: the length's high bytes are used */
    char p300[301];
    memset(p300, 'x', 300);
    p300[0] = '/';
    p300[300] = '\0';
    buf_reset(&b);
    assert_int_equal(ssh_streamlocal_msg(&b, p300), 0);
    assert_int_equal((unsigned char)b.data[2], 1);
    assert_int_equal((unsigned char)b.data[3], 44);
    buf_free(&b);
}

static struct buf answer(const char *head, const char *body)
{
    struct buf a = BUF_INIT;
    buf_printf(&a, "%sContent-Length: %zu\r\n\r\n%s", head, strlen(body), body);
    return a;
}

static void inspect_answers(void **st)
{
    (void)st;
    struct buf doc = fixture_load("engine/podman-4.3-inspect.json");
    struct buf a = answer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", buf_str(&doc));
    struct container_info c;
    struct buf err = BUF_INIT;
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r0", a.data, a.len, &c, &err), 0);
    assert_string_equal(c.name, "dsv41-r0");
    assert_true(c.running);
    assert_int_equal(c.pid, 27070);
    assert_string_equal(c.started, "2026-12-02T03:22:47.95194252Z");
    assert_string_equal(c.image, "06e541ea39d0c55a84ab416d473686182304501b6ade491a5596da230e9c8ccb");
    /* chunked, as podman writes a long one */
    struct buf ch = BUF_INIT;
    buf_printf(&ch, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\n\r\n",
               (size_t)100, 100, buf_str(&doc), doc.len - 100, buf_str(&doc) + 100);
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r0", ch.data, ch.len, &c, &err), 0);
    assert_int_equal(c.pid, 27070);
    /* 404: no such container */
    struct buf nf = answer("HTTP/1.1 404 Not Found\r\n",
                           "{\"cause\":\"no such container\",\"message\":\"no container with name "
                           "or ID \\\"dsv41-r1\\\" found: no such container\",\"response\":404}");
    buf_reset(&err);
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r1", nf.data, nf.len, &c, &err),
                     ENGINE_NOSUCH);
    /* the engine's 500: an error, not "no answer" */
    struct buf e500 = answer("HTTP/1.1 500 Internal Server Error\r\n", "{\"message\":\"boom\"}");
    buf_reset(&err);
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r0", e500.data, e500.len, &c, &err), -1);
    assert_non_null(strstr(buf_str(&err), "boom (HTTP 500)"));
    /* nothing, a cut-short body, and bytes that are no HTTP: no answer */
    buf_reset(&err);
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r0", "", 0, &c, &err), ENGINE_NO_ANSWER);
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r0", a.data, a.len - 10, &c, &err),
                     ENGINE_NO_ANSWER);
    assert_int_equal(engine_inspect_answer("/s", "dsv41-r0", "SSH-2.0-x\r\n", 11, &c, &err),
                     ENGINE_NO_ANSWER);
    /* a name that cannot go into a URL is refused before any exchange */
    struct buf req = BUF_INIT;
    assert_int_equal(engine_inspect_request(&req, "../x", &err), -1);
    assert_int_equal(engine_inspect_request(&req, "dsv41-r1", &err), 0);
    assert_non_null(strstr(buf_str(&req), "GET /containers/dsv41-r1/json HTTP/1.1\r\n"));
    buf_free(&req);
    buf_free(&doc);
    buf_free(&a);
    buf_free(&ch);
    buf_free(&nf);
    buf_free(&e500);
    buf_free(&err);
}

/* A transport: hands back what it was given, and notes the request. */
struct canned {
    const char *ans;
    int rc;
    struct buf seen;
    int cancel_fd; /* the last exchange's */
};

static int canned_exchange(void *ctx, const char *sock, const char *req, size_t len, size_t max,
                           long timeout_ms, int cancel_fd, struct buf *out, struct buf *err)
{
    struct canned *c = ctx;
    (void)sock, (void)max, (void)timeout_ms;
    c->cancel_fd = cancel_fd;
    buf_append(&c->seen, req, len);
    if (c->rc)
        buf_puts(err, "refused");
    else
        buf_puts(out, c->ans);
    return c->rc;
}

static void inspect_at(void **st)
{
    (void)st;
    struct buf doc = fixture_load("engine/podman-4.3-inspect-exited.json");
    struct buf a = answer("HTTP/1.1 200 OK\r\n", buf_str(&doc));
    struct canned cn = {buf_str(&a), 0, BUF_INIT, 0};
    struct engine_at at = {"/run/x.sock", canned_exchange, &cn};
    struct container_info c;
    struct buf err = BUF_INIT;
    assert_int_equal(engine_inspect_at(&at, "dsv41-r0", 1000, &c, &err), 0);
    assert_false(c.running);
    assert_non_null(strstr(buf_str(&cn.seen), "/containers/dsv41-r0/json"));
    cn.rc = -2; /* the transport's own code passes through */
    assert_int_equal(engine_inspect_at(&at, "dsv41-r0", 1000, &c, &err), -2);
    buf_free(&cn.seen);
    buf_free(&doc);
    buf_free(&a);
    buf_free(&err);
}

/* kill and stop through a transport: the request's path, the engines'
 * answers mapped as engine_kill and engine_stop map them. */
static void kill_stop_at(void **st)
{
    (void)st;
    struct canned cn = {"HTTP/1.1 204 No Content\r\n\r\n", 0, BUF_INIT, 0};
    struct engine_at at = {"/s", canned_exchange, &cn};
    struct buf err = BUF_INIT;
    assert_int_equal(engine_kill_at(&at, "dsv41-r1", "TERM", 1000, &err), 0);
    assert_non_null(strstr(buf_str(&cn.seen), "POST /containers/dsv41-r1/kill?signal=TERM "));
    struct buf a = answer("HTTP/1.1 500 Internal Server Error\r\n",
                          "{\"cause\":\"container state improper\",\"message\":\"can only "
                          "kill running containers\"}");
    cn.ans = buf_str(&a);
    assert_int_equal(engine_kill_at(&at, "dsv41-r1", "KILL", 1000, &err), ENGINE_NOT_RUNNING);
    buf_free(&a);
    a = answer("HTTP/1.1 404 Not Found\r\n", "{\"message\":\"no such container\"}");
    cn.ans = buf_str(&a);
    assert_int_equal(engine_kill_at(&at, "dsv41-r1", "KILL", 1000, &err), ENGINE_NOSUCH);
    assert_int_equal(engine_kill_at(&at, "dsv41-r1", "kill; rm", 1000, &err), -1);
    assert_int_equal(engine_kill_at(&at, "a/b", "KILL", 1000, &err), -1);
    buf_reset(&cn.seen);
    cn.ans = "HTTP/1.1 304 Not Modified\r\n\r\n";
    assert_int_equal(engine_stop_at(&at, "dsv41-r1", 10, &err), 0);
    assert_non_null(strstr(buf_str(&cn.seen), "POST /containers/dsv41-r1/stop?t=10 "));
    assert_int_equal(engine_stop_at(&at, "dsv41-r1", -1, &err), -1);
    cn.ans = "";
    assert_int_equal(engine_stop_at(&at, "dsv41-r1", 0, &err), ENGINE_NO_ANSWER);
    assert_int_equal(cn.cancel_fd, -1);
    /* the stop's cancel fd reaches the transport, and its cancel comes back */
    cn.rc = ENGINE_CANCELLED;
    assert_int_equal(engine_stop_at_cancel(&at, "dsv41-r1", 10, 7, &err), ENGINE_CANCELLED);
    assert_int_equal(cn.cancel_fd, 7);
    cn.rc = 0;
    buf_free(&a);
    buf_free(&cn.seen);
    buf_free(&err);
}

/* remove through a transport: SIGKILL, then DELETE ?force=true; a
 * container that is not there is said so, before any DELETE. */
static void remove_at(void **st)
{
    (void)st;
    struct canned cn = {"HTTP/1.1 204 No Content\r\n\r\n", 0, BUF_INIT, 0};
    struct engine_at at = {"/s", canned_exchange, &cn};
    struct buf err = BUF_INIT;
    assert_int_equal(engine_remove_at(&at, "dsv41-r1", 1000, &err), 0);
    const char *kill = strstr(buf_str(&cn.seen), "POST /containers/dsv41-r1/kill?signal=KILL ");
    const char *del = strstr(buf_str(&cn.seen), "DELETE /containers/dsv41-r1?force=true ");
    assert_non_null(kill);
    assert_non_null(del);
    assert_true(kill < del);
    struct buf a = answer("HTTP/1.1 404 Not Found\r\n", "{\"message\":\"no such container\"}");
    cn.ans = buf_str(&a);
    buf_reset(&cn.seen);
    assert_int_equal(engine_remove_at(&at, "dsv41-r1", 1000, &err), ENGINE_NOSUCH);
    assert_null(strstr(buf_str(&cn.seen), "DELETE"));
    cn.ans = "";
    assert_int_equal(engine_remove_at(&at, "dsv41-r1", 1000, &err), ENGINE_NO_ANSWER);
    assert_int_equal(engine_remove_at(&at, "../x", 1000, &err), -1);
    buf_free(&a);
    buf_free(&cn.seen);
    buf_free(&err);
}

/* The lines written from the answers, applied, read as the CLI's would. */
static void ct_applied(void **st)
{
    (void)st;
    struct buf doc = fixture_load("engine/podman-4.3-inspect.json");
    struct buf a = answer("HTTP/1.1 200 OK\r\n", buf_str(&doc));
    struct container_info c;
    struct buf err = BUF_INIT, lines = BUF_INIT;
    int code = 0;
    int r = engine_inspect_answer("/s", "dsv41-r0", a.data, a.len, &c, &err);
    code |= engine_ct_line(&lines, "dsv41-r0", r, &c, &err);
    code |= engine_ct_line(&lines, "dsv41-r1", ENGINE_NOSUCH, &c, &err);
    assert_int_equal(code, 1);
    struct snapshot *s = calloc(1, sizeof *s);
    s->reachable = true;
    snapshot_apply_ct(s, buf_str(&lines), code);
    assert_true(s->ct_sampled);
    assert_true(s->runtime_ok); /* a missing rank alone is no runtime fault */
    assert_int_equal(s->ct_missing, 1);
    assert_int_equal(s->ncont, 1);
    const struct container_info *k = snapshot_rank_container(s, 0);
    assert_non_null(k);
    assert_int_equal(k->pid, 27070);
    assert_string_equal(k->started, "2026-12-02T03:22:47.95194252Z");
    /* the same lines in a frame's ct section: the same snapshot */
    struct buf frame = BUF_INIT;
    buf_printf(&frame, "\n@M@ host\nh\n@M@ ct\n%s\n@M@ ct_rc\n%d\n@M@ end\n", buf_str(&lines),
               code);
    struct snapshot *f = calloc(1, sizeof *f);
    snapshot_parse(buf_str(&frame), "@M@", NULL, f);
    assert_int_equal(f->ncont, s->ncont);
    assert_int_equal(f->ct_missing, s->ct_missing);
    assert_memory_equal(&f->cont[0], &s->cont[0], sizeof f->cont[0]);
    /* an engine error line: a runtime fault, noted */
    buf_reset(&lines);
    buf_reset(&err);
    buf_puts(&err, "/s: inspect dsv41-r0: boom (HTTP 500)");
    code = engine_ct_line(&lines, "dsv41-r0", -1, &c, &err);
    snapshot_apply_ct(s, buf_str(&lines), code);
    assert_false(s->runtime_ok);
    assert_int_equal(s->ncont, 0);
    assert_non_null(strstr(s->runtime_note, "boom"));
    free(s);
    free(f);
    buf_free(&frame);
    buf_free(&doc);
    buf_free(&a);
    buf_free(&err);
    buf_free(&lines);
}

/* A transport whose answers come in turn (the inspect, then the log). */
struct turns {
    const struct buf *ans[2];
    int i;
    struct buf seen;
};

static int turns_exchange(void *ctx, const char *sock, const char *req, size_t len, size_t max,
                          long timeout_ms, int cancel_fd, struct buf *out, struct buf *err)
{
    struct turns *t = ctx;
    (void)sock, (void)max, (void)timeout_ms, (void)cancel_fd, (void)err;
    buf_append(&t->seen, req, len);
    const struct buf *a = t->ans[t->i < 1 ? t->i++ : 1];
    buf_append(out, a->data, a->len);
    return 0;
}

static int take_line(void *ctx, int stream, const char *line, size_t len)
{
    buf_printf(ctx, "%d:%.*s|", stream, (int)len, line);
    return 0;
}

/* A log's tail through a transport: the inspect (its Tty), then the
 * multiplexed frames read into lines per stream; a cut answer is said. */
static void logs_at(void **st)
{
    (void)st;
    struct buf doc = fixture_load("engine/podman-4.3-inspect.json");
    struct buf insp = answer("HTTP/1.1 200 OK\r\n", buf_str(&doc));
    struct buf body = BUF_INIT, logs = BUF_INIT;
    fixture_frame(&body, 1, "INFO started\nhalf ");
    fixture_frame(&body, 2, "WARN a warning\n");
    fixture_frame(&body, 1, "a line\n");
    buf_printf(&logs, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                      "Content-Length: %zu\r\n\r\n", body.len);
    buf_append(&logs, body.data, body.len);
    struct turns t = {{&insp, &logs}, 0, BUF_INIT};
    struct engine_at at = {"/s", turns_exchange, &t};
    struct buf got = BUF_INIT, err = BUF_INIT;
    assert_int_equal(engine_logs_at(&at, "dsv41-r1", 50, 1000, take_line, &got, &err), 0);
    assert_string_equal(buf_str(&got), "1:INFO started|2:WARN a warning|1:half a line|");
    assert_non_null(strstr(buf_str(&t.seen), "GET /containers/dsv41-r1/logs?stdout=1&stderr=1"
                                             "&timestamps=0&follow=0&tail=50 "));
    /* cut inside the last frame: the lines before it, and the cut said */
    logs.len -= 3;
    t.i = 0;
    buf_reset(&got);
    assert_int_equal(engine_logs_at(&at, "dsv41-r1", 50, 1000, take_line, &got, &err), -1);
    assert_non_null(strstr(buf_str(&got), "2:WARN a warning|"));
    assert_non_null(strstr(buf_str(&err), "logs dsv41-r1"));
    buf_free(&doc);
    buf_free(&insp);
    buf_free(&body);
    buf_free(&logs);
    buf_free(&t.seen);
    buf_free(&got);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_message),
        cmocka_unit_test(inspect_answers),
        cmocka_unit_test(inspect_at),
        cmocka_unit_test(kill_stop_at),
        cmocka_unit_test(remove_at),
        cmocka_unit_test(ct_applied),
        cmocka_unit_test(logs_at),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
