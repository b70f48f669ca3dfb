/* jscan: values found by path (keys with dots as one component), strings
 * unescaped (surrogate pairs, lone surrogates), integers, nested values
 * skipped, malformed documents and deep nesting refused, never a byte read
 * past the length given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"

static const char DOC[] =
    "{\"Id\":\"abc\",\"Args\":[\"-c\",{\"State\":{\"Pid\":1}},[[]],-0.5e+3],"
    "\"State\":{\"Status\":\"running\",\"Running\":true,\"Pid\":4242,\"OOMKilled\":false,"
    "\"Health\":{\"Log\":null}},\"Config\":{\"Labels\":{\"a.b\":\"x\",\"dsv41-top.managed\":\"1\"},"
    "\"Tty\":false},\"Name\":\"/dsv41-r0\",\"Esc\":\"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\ud800x\"}";

static struct jscan_val get(const char *dotted)
{
    struct jscan_val v;
    const char *why = NULL;
    if (jscan_get_dotted(DOC, strlen(DOC), dotted, &v, &why) != 0)
        fail_msg("%s: %s", dotted, why);
    return v;
}

static void paths(void **state)
{
    (void)state;
    long n;
    struct jscan_val v = get("State.Pid");
    assert_int_equal(v.type, JSCAN_NUMBER);
    assert_int_equal(jscan_long(&v, &n), 0);
    assert_int_equal(n, 4242);
    v = get("State.Running");
    assert_true(v.type == JSCAN_BOOL && v.b);
    v = get("State.OOMKilled");
    assert_true(v.type == JSCAN_BOOL && !v.b);
    assert_int_equal(get("State.Health.Log").type, JSCAN_NULL);
    assert_int_equal(get("State.Health").type, JSCAN_OBJECT);
    assert_int_equal(get("Args").type, JSCAN_ARRAY);
    v = get("Args");
    assert_int_equal(v.raw[v.raw_len - 1], ']');
    /* a "State" inside an array is not the top-level one */
    assert_int_equal(get("Nope").type, JSCAN_ABSENT);
    assert_int_equal(get("State.Pid.x").type, JSCAN_ABSENT);
    assert_int_equal(get("Id.x").type, JSCAN_ABSENT);
    assert_int_equal(get("Config.Labels.dsv41-top").type, JSCAN_ABSENT);
    /* a key with dots: one component */
    static const char *const label[] = {"Config", "Labels", "dsv41-top.managed"};
    const char *why;
    assert_int_equal(jscan_get(DOC, strlen(DOC), label, 3, &v, &why), 0);
    struct buf s = BUF_INIT;
    assert_int_equal(jscan_string(&v, &s), 0);
    assert_string_equal(buf_str(&s), "1");
    /* the document itself */
    assert_int_equal(jscan_get(DOC, strlen(DOC), NULL, 0, &v, &why), 0);
    assert_int_equal(v.type, JSCAN_OBJECT);
    assert_int_equal(v.raw_len, strlen(DOC));
    buf_free(&s);
}

static void strings(void **state)
{
    (void)state;
    struct buf s = BUF_INIT;
    struct jscan_val v = get("Esc");
    assert_int_equal(jscan_string(&v, &s), 0);
    /* \u00e9 é, the pair is U+1F600, a lone high surrogate U+FFFD */
    assert_string_equal(buf_str(&s), "q\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
    buf_reset(&s);
    v = get("Name");
    assert_int_equal(jscan_string(&v, &s), 0);
    assert_string_equal(buf_str(&s), "/dsv41-r0");
    assert_int_equal(jscan_string(&(struct jscan_val){.type = JSCAN_NUMBER}, &s), -1);
    /* an escaped key matches its decoded form */
    const char *d = "{\"a\\u002eb\":\"\"}";
    static const char *const k[] = {"a.b"};
    assert_int_equal(jscan_get(d, strlen(d), k, 1, &v, NULL), 0);
    buf_reset(&s);
    assert_int_equal(jscan_string(&v, &s), 0);
    assert_string_equal(buf_str(&s), "");
    buf_free(&s);
}

static void numbers(void **state)
{
    (void)state;
    long n;
    const char *ok[] = {"0", "-0", "12", "-7", "1.5", "1e3", "1E+3", "-0.0e-1", "9223372036854775807"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct jscan_val v;
        if (jscan_get(ok[i], strlen(ok[i]), NULL, 0, &v, NULL) != 0 || v.type != JSCAN_NUMBER)
            fail_msg("%s", ok[i]);
    }
    struct jscan_val v;
    jscan_get("-7", 2, NULL, 0, &v, NULL);
    assert_int_equal(jscan_long(&v, &n), 0);
    assert_int_equal(n, -7);
    jscan_get("1.5", 3, NULL, 0, &v, NULL);
    assert_int_equal(jscan_long(&v, &n), -1);
    jscan_get("1e3", 3, NULL, 0, &v, NULL);
    assert_int_equal(jscan_long(&v, &n), -1);
    jscan_get("99999999999999999999", 20, NULL, 0, &v, NULL);
    assert_int_equal(jscan_long(&v, &n), -1);
}

static void malformed(void **state)
{
    (void)state;
    const char *bad[] = {
        "",         " ",        "{",          "}",           "{\"a\"}",      "{\"a\":}",
        "{\"a\":1,}", "[1,]",   "[1 2]",      "{a:1}",       "{\"a\":1}x",   "01",
        "-",        "1.",       ".5",         "1e",          "+1",           "tru",
        "nul",      "\"abc",    "\"a\\x\"",   "\"a\\u12\"",  "\"a\\u12g4\"", "\"\t\"",
        "{\"a\":1 \"b\":2}", "[\"a\":1]", "{\"a\" 1}", "{1:2}", "NaN", "[", "\"\\",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jscan_val v;
        const char *why = NULL;
        if (jscan_get_dotted(bad[i], strlen(bad[i]), "a", &v, &why) != -1 || !why ||
            v.type != JSCAN_ABSENT)
            fail_msg("accepted: '%s'", bad[i]);
    }
    /* malformed after the value asked for: still refused */
    const char *late = "{\"a\":1,\"b\":[}";
    struct jscan_val v;
    assert_int_equal(jscan_get_dotted(late, strlen(late), "a", &v, NULL), -1);
    /* bad paths */
    assert_int_equal(jscan_get_dotted("{}", 2, "a..b", &v, NULL), -1);
}

static void depth(void **state)
{
    (void)state;
    char d[2 * (JSCAN_DEPTH + 2)];
    struct jscan_val v;
    const char *why = NULL;
    for (int n = JSCAN_DEPTH; n <= JSCAN_DEPTH + 1; n++) {
        memset(d, '[', (size_t)n);
        memset(d + n, ']', (size_t)n);
        int rc = jscan_get(d, 2 * (size_t)n, NULL, 0, &v, &why);
        assert_int_equal(rc, n <= JSCAN_DEPTH ? 0 : -1);
    }
    assert_non_null(strstr(why, "deeper"));
}

static void never_past_the_end(void **state)
{
    (void)state;
    /* every prefix of a valid document is fed in a buffer of exactly that
     * size (ASan catches a read past it); none but the whole is valid */
    size_t len = strlen(DOC);
    for (size_t n = 0; n < len; n++) {
        char *p = malloc(n ? n : 1);
        memcpy(p, DOC, n);
        struct jscan_val v;
        assert_int_equal(jscan_get_dotted(p, n, "State.Pid", &v, NULL), -1);
        free(p);
    }
}

static void duplicate_keys(void **state)
{
    (void)state;
    const char *d = "{\"a\":1,\"a\":2}";
    struct jscan_val v;
    long n;
    assert_int_equal(jscan_get_dotted(d, strlen(d), "a", &v, NULL), 0);
    assert_int_equal(jscan_long(&v, &n), 0);
    assert_int_equal(n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths),     cmocka_unit_test(strings),
        cmocka_unit_test(numbers),   cmocka_unit_test(malformed),
        cmocka_unit_test(depth),     cmocka_unit_test(never_past_the_end),
        cmocka_unit_test(duplicate_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
