/* http1: requests as the engines want them; responses fed whole, a byte at
 * a time and split at every boundary give the same status, headers and
 * body; chunked bodies de-chunked; malformed and oversized input refused
 * with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http1.h"

static int collect(void *ctx, const char *d, size_t n)
{
    return buf_append(ctx, d, n);
}

/* Feeds text in pieces of step bytes (0: split once at cut); returns
 * http1_feed's last result, with http1_eof when the text is all fed. */
static int feed(const char *text, size_t len, size_t cut, size_t step, struct http1_resp *r,
                struct buf *body)
{
    http1_resp_init(r, collect, body);
    buf_reset(body);
    int rc = 0;
    if (!step) {
        rc = http1_feed(r, text, cut);
        if (rc == 0)
            rc = http1_feed(r, text + cut, len - cut);
    } else {
        for (size_t i = 0; i < len && rc == 0; i += step)
            rc = http1_feed(r, text + i, len - i < step ? len - i : step);
    }
    if (rc == 0 && !r->complete)
        rc = http1_eof(r);
    return rc;
}

static void same_at_every_split(const char *text, int status, const char *body_want,
                                const char *ctype)
{
    size_t len = strlen(text);
    struct http1_resp *r = malloc(sizeof *r);
    struct buf body = BUF_INIT;
    assert_non_null(r);
    for (size_t cut = 0; cut <= len; cut++) {
        for (size_t step = 0; step <= 2; step++) {
            int rc = feed(text, len, cut, step, r, &body);
            if (rc != 0)
                fail_msg("cut %zu step %zu: %s", cut, step, r->error);
            assert_true(r->complete);
            assert_int_equal(r->status, status);
            assert_string_equal(buf_str(&body), body_want);
            assert_string_equal(r->content_type, ctype);
            if (step)
                break; /* a step feed does not depend on cut */
        }
    }
    buf_free(&body);
    free(r);
}

static void requests(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    assert_int_equal(http1_request(&b, "GET", "/containers/dsv41-r0/json", NULL), 0);
    assert_string_equal(buf_str(&b), "GET /containers/dsv41-r0/json HTTP/1.1\r\nHost: d\r\n"
                                     "Connection: close\r\n\r\n");
    buf_reset(&b);
    assert_int_equal(http1_request(&b, "POST", "/containers/x/kill?signal=KILL", NULL), 0);
    assert_non_null(strstr(buf_str(&b), "\r\nContent-Length: 0\r\n\r\n"));
    buf_reset(&b);
    assert_int_equal(http1_request(&b, "POST", "/x", "{\"a\":1}"), 0);
    assert_non_null(strstr(buf_str(&b), "Content-Length: 7\r\n\r\n{\"a\":1}"));
    /* no way to smuggle a second line or header into the request */
    assert_int_equal(http1_request(&b, "GET", "/a b", NULL), -1);
    assert_int_equal(http1_request(&b, "GET", "/a\r\nX: y", NULL), -1);
    assert_int_equal(http1_request(&b, "GET", "a", NULL), -1);
    assert_int_equal(http1_request(&b, "G T", "/", NULL), -1);
    buf_free(&b);
}

static void content_length(void **state)
{
    (void)state;
    same_at_every_split("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11"
                        "\r\n\r\n{\"Pid\": 42}",
                        200, "{\"Pid\": 42}", "application/json");
    same_at_every_split("HTTP/1.1 404 Not Found\r\ncontent-length:  3 \r\n\r\nno!", 404, "no!", "");
    /* bare "\n" line ends, an empty reason, no body */
    same_at_every_split("HTTP/1.0 204\nX-A: b\n\n", 204, "", "");
    same_at_every_split("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "", "");
}

static void chunked(void **state)
{
    (void)state;
    same_at_every_split("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\n\r\n",
                        200, "hello 0123456789", "");
    /* trailers, upper-case hex */
    same_at_every_split("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
                        "1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\n",
                        200, "abcdefghijklmnopqrstuvwxyz", "");
    /* 100 Continue before the answer */
    same_at_every_split("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                        "\r\nok",
                        200, "ok", "");
}

static void to_the_close(void **state)
{
    (void)state;
    same_at_every_split("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n"
                        "all of it",
                        200, "all of it", "application/octet-stream");
}

static void expect_error(const char *text, const char *why)
{
    struct http1_resp *r = malloc(sizeof *r);
    struct buf body = BUF_INIT;
    assert_non_null(r);
    size_t len = strlen(text);
    for (size_t step = 1; step <= len; step = step * 2 + 1) {
        int rc = feed(text, len, 0, step, r, &body);
        if (rc != -1 || !r->error || !strstr(r->error, why))
            fail_msg("%s (step %zu): rc %d, error %s, want %s", text, step, rc,
                     r->error ? r->error : "none", why);
        /* an error sticks */
        assert_int_equal(http1_feed(r, "x", 1), -1);
    }
    buf_free(&body);
    free(r);
}

static void malformed(void **state)
{
    (void)state;
    expect_error("HTTP/2 200 OK\r\n\r\n", "status line");
    expect_error("SSH-2.0-OpenSSH\r\n", "status line");
    expect_error("HTTP/1.1 20 OK\r\n\r\n", "status line");
    expect_error("HTTP/1.1 099 x\r\n\r\n", "below 100");
    expect_error("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", "without a name");
    expect_error("HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", "not a token");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "not a number");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "two different");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "too large");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "transfer coding");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n",
                 "larger than 64 MiB");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000001\r\n",
                 "larger than 64 MiB");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "longer than its size");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 x\r\n", "garbage after");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab", "after the end");
    expect_error("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "stray CR");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc", "inside the response's body");
    expect_error("HTTP/1.1 200 OK\r\nContent-Le", "inside the response's head");
    expect_error("", "inside the response's head");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "inside the response's body");
}

static void bounds(void **state)
{
    (void)state;
    struct http1_resp *r = malloc(sizeof *r);
    assert_non_null(r);
    /* one header line too long */
    struct buf t = BUF_INIT;
    buf_puts(&t, "HTTP/1.1 200 OK\r\nX: ");
    for (int i = 0; i < HTTP1_LINE_MAX; i++)
        buf_puts(&t, "a");
    http1_resp_init(r, NULL, NULL);
    assert_int_equal(http1_feed(r, t.data, t.len), -1);
    assert_non_null(strstr(r->error, "longer than 8192"));
    /* many short header lines: the head's bound */
    buf_reset(&t);
    buf_puts(&t, "HTTP/1.1 200 OK\r\n");
    while (t.len <= HTTP1_HEAD_MAX)
        buf_puts(&t, "X-Filler: 0123456789012345678901234567890123456789\r\n");
    http1_resp_init(r, NULL, NULL);
    assert_int_equal(http1_feed(r, t.data, t.len), -1);
    assert_non_null(strstr(r->error, "longer than 64 KiB"));
    /* a NUL in a header line */
    http1_resp_init(r, NULL, NULL);
    assert_int_equal(http1_feed(r, "HTTP/1.1 200 OK\r\nX: a\0b\r\n", 26), -1);
    buf_free(&t);
    free(r);
}

static int stop_after_3(void *ctx, const char *d, size_t n)
{
    (void)d;
    size_t *seen = ctx;
    *seen += n;
    return *seen >= 3;
}

static void the_callback_stops(void **state)
{
    (void)state;
    struct http1_resp *r = malloc(sizeof *r);
    assert_non_null(r);
    size_t seen = 0;
    http1_resp_init(r, stop_after_3, &seen);
    const char *t = "HTTP/1.1 200 OK\r\n\r\n";
    assert_int_equal(http1_feed(r, t, strlen(t)), 0);
    assert_int_equal(http1_feed(r, "ab", 2), 0);
    assert_int_equal(http1_feed(r, "cd", 2), 1);
    assert_int_equal(seen, 4);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests),     cmocka_unit_test(content_length),
        cmocka_unit_test(chunked),      cmocka_unit_test(to_the_close),
        cmocka_unit_test(malformed),    cmocka_unit_test(bounds),
        cmocka_unit_test(the_callback_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
