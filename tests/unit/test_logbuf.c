/* logbuf: hostile remote text comes out inert; the ring stays bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "logbuf.h"

static void clean_is(const char *in, size_t len, const char *want)
{
    char out[256];
    text_clean(out, sizeof out, in, len);
    assert_string_equal(out, want);
}
#define CLEAN(in, want) clean_is(in, sizeof in - 1, want)

static void test_escapes_removed(void **st)
{
    (void)st;
    CLEAN("\x1b[31mred\x1b[0m plain", "red plain");
    CLEAN("a\x1b[2J\x1b[H\x1b[10;20Hb", "ab");                 /* clear, home, move */
    CLEAN("\x1b]0;evil title\x07" "after", "after");              /* OSC with BEL */
    CLEAN("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"); /* OSC with ST */
    CLEAN("\x1bP" "qdcs payload\x1b\\ok", "ok");                  /* DCS */
    CLEAN("x\x1b(0y\x1b" "7z\x1b" "c", "xyz");                 /* charset, save, reset */
    CLEAN("cut\x1b[", "cut");                                  /* cut mid-sequence */
    CLEAN("\x1b", "");
}

static void test_controls_and_utf8(void **st)
{
    (void)st;
    CLEAN("bell\x07 bs\x08 nul\x00 del\x7f!", "bell bs nul del!");
    CLEAN("50%\r100%", "100%");
    CLEAN("done\r", "done");
    CLEAN("a\tb", "a       b");
    CLEAN("caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93");     /* valid stays */
    CLEAN("bad \xff\xfe end", "bad ?? end");
    CLEAN("overlong \xc0\xaf", "overlong ??");
    CLEAN("surrogate \xed\xa0\x80", "surrogate ???");
    CLEAN("cut \xe2\x9c", "cut ??");
    CLEAN("c1 \xc2\x9b" "31m", "c1 31m");                        /* U+009B CSI dropped */
    CLEAN("bidi \xe2\x80\xaegnp.exe", "bidi gnp.exe");           /* RLO dropped */
}

static void test_never_overflows(void **st)
{
    (void)st;
    char out[8];
    size_t n = text_clean(out, sizeof out, "\xe2\x9c\x93\xe2\x9c\x93\xe2\x9c\x93", 9);
    assert_int_equal(n, 6); /* a third character would not fit whole */
    assert_int_equal(strlen(out), 6);
}

static void test_ring_bounded(void **st)
{
    (void)st;
    struct logbuf lb;
    assert_int_equal(logbuf_init(&lb, 100, 1 << 20), 0);
    for (int i = 0; i < 10000; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "line %d%s", i, i % 1000 == 7 ? " ERROR boom" : "");
        logbuf_push(&lb, line, (size_t)n);
    }
    assert_int_equal(lb.end - lb.first, 100);
    assert_int_equal(lb.first, 9900);
    assert_null(logbuf_get(&lb, 9899));
    assert_string_equal(logbuf_get(&lb, 9999)->text, "line 9999");
    assert_int_equal(logbuf_find(&lb, 9999, -1, "LINE 995"), 9959);
    assert_int_equal(logbuf_find(&lb, 9900, +1, "line 99"), 9901);
    assert_int_equal(logbuf_find(&lb, 9999, +1, "line"), -1);
    assert_int_equal(logbuf_find(&lb, 0, +1, NULL), -1); /* no error line held */
    logbuf_push(&lb, "Traceback (most recent call last):", 34);
    assert_int_equal(logbuf_find(&lb, 9950, +1, NULL), 10000);
    logbuf_free(&lb);
}

static void test_byte_budget_and_long_line(void **st)
{
    (void)st;
    struct logbuf lb;
    assert_int_equal(logbuf_init(&lb, 1000, 10000), 0);
    size_t big = 1 << 20;
    char *mb = malloc(big);
    memset(mb, 'x', big);
    logbuf_push(&lb, mb, big);
    const struct logline *l = logbuf_get(&lb, 0);
    assert_non_null(l);
    assert_true(l->len < LOGBUF_LINE_MAX + 48);
    assert_non_null(strstr(l->text, "bytes cut]"));
    for (int i = 0; i < 10; i++)
        logbuf_push(&lb, mb, big);
    assert_true(lb.bytes <= 10000);
    assert_true(lb.end - lb.first >= 1);
    free(mb);
    logbuf_free(&lb);
}

static void hide(const char *in, enum text_hide m, const char *want)
{
    struct buf out = BUF_INIT;
    text_hide_secrets(in, strlen(in), m, &out);
    assert_string_equal(buf_str(&out), want);
    buf_free(&out);
}

/* Secrets given as environment (EXTRA_ENV, hence the ranks' env files):
 * their values hidden wherever the text is shown or kept to be shared. */
static void test_secrets_hidden(void **st)
{
    (void)st;
    hide("CUDA_VISIBLE_DEVICES=0\nHF_TOKEN=hf_abc def\nmy_api_key=sk-1\nDB_PASSWORD=\nX=1\n",
         TEXT_HIDE_LINES,
         "CUDA_VISIBLE_DEVICES=0\nHF_TOKEN=(hidden)\nmy_api_key=(hidden)\nDB_PASSWORD=(hidden)\nX=1\n");
    hide("[ 1.0] HF_TOKEN=x in a kernel line stays", TEXT_HIDE_LINES,
         "[ 1.0] HF_TOKEN=x in a kernel line stays");
    hide("A=1 HF_TOKEN='hf a b' AWS_SECRET_ACCESS_KEY=\"q\\\" r\" B=two", TEXT_HIDE_WORDS,
         "A=1 HF_TOKEN=(hidden) AWS_SECRET_ACCESS_KEY=(hidden) B=two");
    hide("MONKEY_BUSINESS=1", TEXT_HIDE_WORDS, "MONKEY_BUSINESS=(hidden)"); /* KEY: better safe */
    hide("", TEXT_HIDE_WORDS, "");
    hide("=x TOKEN", TEXT_HIDE_WORDS, "=x TOKEN");
    assert_true(text_secret_name("hf_token", 8));
    assert_false(text_secret_name("NCCL_IB_HCA", 11));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes_removed),
        cmocka_unit_test(test_secrets_hidden),
        cmocka_unit_test(test_controls_and_utf8),
        cmocka_unit_test(test_never_overflows),
        cmocka_unit_test(test_ring_bounded),
        cmocka_unit_test(test_byte_budget_and_long_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
