/* The SSE parser and the completion assembler on vLLM-shaped transcripts,
 * split at every byte position: the result must not depend on where the
 * network cut the chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "completion.h"
#include "fixture.h"
#include "sse.h"

struct run {
    struct completion c;
    int events;
    double t;
    int rc;
};

static int on_event(void *ctx, const char *data, size_t len)
{
    struct run *r = ctx;
    r->events++;
    r->t += 1.0;
    int rc = completion_event(&r->c, data, len, r->t);
    return rc < 0 ? -1 : 0;
}

/* Parses text fed in two pieces cut at `cut` (or byte by byte when cut < 0). */
static void parse(const char *text, long cut, struct run *r)
{
    memset(r, 0, sizeof *r);
    completion_init(&r->c, 0);
    struct sse_parser p;
    sse_init(&p, on_event, r, 1 << 20);
    size_t n = strlen(text);
    int rc = 0;
    if (cut < 0) {
        for (size_t i = 0; i < n && !rc; i++)
            rc = sse_feed(&p, text + i, 1);
    } else {
        rc = sse_feed(&p, text, (size_t)cut);
        if (!rc)
            rc = sse_feed(&p, text + cut, n - (size_t)cut);
    }
    if (!rc)
        rc = sse_finish(&p);
    r->rc = rc;
    sse_free(&p);
}

static void check_reasoning(struct run *r)
{
    assert_int_equal(r->rc, 0);
    assert_true(r->c.done);
    assert_string_equal(buf_str(&r->c.content), "17 * 23 = 391.");
    assert_string_equal(buf_str(&r->c.reasoning), "Multiply 17 by 23.");
    assert_string_equal(r->c.finish, "stop");
    assert_int_equal(r->c.prompt_tokens, 17);
    assert_int_equal(r->c.completion_tokens, 4);
    assert_int_equal(r->c.reasoning_tokens, 2);
    assert_int_equal(r->c.cached_tokens, 0);
    /* chunks with choices: role, 2 reasoning, 2 content, finish */
    assert_int_equal(r->c.nchunks, 6);
    assert_true(r->c.t_first == 1.0);
}

static void every_split(void **st)
{
    (void)st;
    static const char *files[] = {"sse/chat-reasoning.txt", "sse/chat-reasoning-content-crlf.txt",
                                  "sse/chat-tools.txt", "sse/completions.txt"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        struct buf b = fixture_load(files[f]);
        struct run whole, piece;
        parse(buf_str(&b), (long)b.len, &whole);
        for (long cut = -1; cut <= (long)b.len; cut++) {
            parse(buf_str(&b), cut, &piece);
            assert_int_equal(piece.events, whole.events);
            assert_string_equal(buf_str(&piece.c.content), buf_str(&whole.c.content));
            assert_string_equal(buf_str(&piece.c.reasoning), buf_str(&whole.c.reasoning));
            assert_int_equal(piece.c.ntools, whole.c.ntools);
            for (int t = 0; t < piece.c.ntools; t++)
                assert_string_equal(buf_str(&piece.c.tools[t].args),
                                    buf_str(&whole.c.tools[t].args));
            completion_free(&piece.c);
        }
        completion_free(&whole.c);
        buf_free(&b);
    }
}

static void reasoning(void **st)
{
    (void)st;
    struct buf b = fixture_load("sse/chat-reasoning.txt");
    struct run r;
    parse(buf_str(&b), (long)b.len, &r);
    check_reasoning(&r);
    completion_free(&r.c);
    buf_free(&b);
    b = fixture_load("sse/chat-reasoning-content-crlf.txt");
    parse(buf_str(&b), (long)b.len, &r);
    assert_string_equal(buf_str(&r.c.reasoning), "think");
    assert_string_equal(buf_str(&r.c.content), "ok");
    assert_int_equal(r.c.completion_tokens, -1); /* no usage sent: n/a, not 0 */
    completion_free(&r.c);
    buf_free(&b);
}

static void tools(void **st)
{
    (void)st;
    struct buf b = fixture_load("sse/chat-tools.txt");
    struct run r;
    parse(buf_str(&b), (long)b.len, &r);
    assert_int_equal(r.c.ntools, 2);
    assert_string_equal(r.c.tools[0].name, "get_weather");
    assert_string_equal(r.c.tools[0].id, "chatcmpl-tool-1");
    assert_string_equal(buf_str(&r.c.tools[0].args), "{\"city\": \"Warsaw\"}");
    assert_string_equal(r.c.tools[1].name, "get_time");
    assert_string_equal(buf_str(&r.c.tools[1].args), "{}");
    assert_string_equal(r.c.finish, "tool_calls");
    assert_int_equal(r.c.prompt_tokens, 120);
    completion_free(&r.c);
    buf_free(&b);
}

static void errors_and_garbage(void **st)
{
    (void)st;
    struct buf b = fixture_load("sse/chat-error-midstream.txt");
    struct run r;
    parse(buf_str(&b), (long)b.len, &r);
    assert_string_equal(r.c.error, "The engine is dead");
    assert_string_equal(buf_str(&r.c.content), "Once");
    assert_true(r.c.done);
    completion_free(&r.c);
    buf_free(&b);
    b = fixture_load("sse/chat-malformed.txt");
    parse(buf_str(&b), (long)b.len, &r);
    assert_int_equal(r.rc, -1);
    assert_non_null(strstr(r.c.error, "malformed chunk after 1 chunks"));
    assert_false(r.c.done);
    completion_free(&r.c);
    buf_free(&b);
    /* an event bigger than the cap is dropped, not grown without bound */
    struct sse_parser p;
    struct run big;
    memset(&big, 0, sizeof big);
    completion_init(&big.c, 0);
    sse_init(&p, on_event, &big, 64);
    char line[200];
    memset(line, 'x', sizeof line);
    sse_feed(&p, "data: ", 6);
    sse_feed(&p, line, sizeof line);
    sse_feed(&p, "\n\ndata: [DONE]\n\n", 16);
    assert_int_equal(big.events, 1);
    assert_true(big.c.done);
    sse_free(&p);
    completion_free(&big.c);
    /* multi-line data joined with '\n'; no trailing blank line at EOF */
    memset(&big, 0, sizeof big);
    completion_init(&big.c, 0);
    sse_init(&p, on_event, &big, 1024);
    const char *multi = "event: x\nid: 1\ndata: {\"choices\":\ndata: [{\"text\":\"a\"}]}";
    sse_feed(&p, multi, strlen(multi));
    assert_int_equal(sse_finish(&p), 0);
    assert_string_equal(buf_str(&big.c.content), "a");
    sse_free(&p);
    completion_free(&big.c);
}

static void non_streamed(void **st)
{
    (void)st;
    struct completion c;
    completion_init(&c, 0);
    const char *body = "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
                       "\"message\":{\"role\":\"assistant\",\"content\":\"391\",\"reasoning\":"
                       "\"17*23\",\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\",\"function\":"
                       "{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}],"
                       "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3,\"total_tokens\":8}}";
    assert_int_equal(completion_body(&c, body, 2.0), 0);
    assert_string_equal(buf_str(&c.content), "391");
    assert_string_equal(buf_str(&c.reasoning), "17*23");
    assert_string_equal(c.tools[0].name, "get_weather");
    assert_int_equal(c.completion_tokens, 3);
    completion_free(&c);
    completion_init(&c, 0);
    assert_int_equal(completion_body(&c, "<html>502</html>", 1.0), -1);
    assert_non_null(strstr(c.error, "not JSON"));
    completion_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reasoning),          cmocka_unit_test(tools),
        cmocka_unit_test(errors_and_garbage), cmocka_unit_test(non_streamed),
        cmocka_unit_test(every_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
