/* fixstr_appendf: appends that fit, appends cut at the array's end, and a
 * caller's length already past the end, which must not write beyond it;
 * fixstr_appendf_whole: a list's entries whole or not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fixstr.h"

static void appends_that_fit(void **st)
{
    (void)st;
    char s[16] = "";
    size_t n = 0;
    assert_int_equal(fixstr_appendf(s, sizeof s, &n, "%d", 123), 0);
    assert_int_equal(fixstr_appendf(s, sizeof s, &n, "%s%s", n ? ", " : "", "ab"), 0);
    assert_string_equal(s, "123, ab");
    assert_int_equal(n, strlen(s));
    /* exactly full: 15 characters and the terminator */
    assert_int_equal(fixstr_appendf(s, sizeof s, &n, "%s", "12345678"), 0);
    assert_string_equal(s, "123, ab12345678");
    assert_int_equal(n, 15);
}

static void a_cut_stays_inside(void **st)
{
    (void)st;
    char s[12];
    memset(s, 'Z', sizeof s);
    s[0] = '\0';
    size_t n = 0;
    assert_int_equal(fixstr_appendf(s, 8, &n, "%s", "abcdefghij"), -1);
    assert_string_equal(s, "abcdefg");
    assert_int_equal(n, 7);
    assert_int_equal(s[8], 'Z'); /* nothing past the given size */
    /* a full array takes nothing more, and says so */
    assert_int_equal(fixstr_appendf(s, 8, &n, "x"), -1);
    assert_string_equal(s, "abcdefg");
    assert_int_equal(fixstr_appendf(s, 8, &n, "%s", ""), 0);
    assert_int_equal(n, 7);
}

static void a_length_past_the_end(void **st)
{
    (void)st;
    char s[10] = "abc";
    memset(s + 4, 'Z', 6);
    size_t n = 500; /* what a summed snprintf result could be */
    assert_int_equal(fixstr_appendf(s, 6, &n, "%s", "xyz"), -1);
    assert_int_equal(n, 5);
    assert_int_equal(s[5], '\0');
    assert_int_equal(s[6], 'Z');
}

/* a list's entry: all of it or none, later entries that fit still go in */
static void whole_entries(void **st)
{
    (void)st;
    char s[12] = "";
    size_t n = 0;
    assert_int_equal(fixstr_appendf_whole(s, sizeof s, &n, "%s", "mlx5_0"), 0);
    assert_int_equal(fixstr_appendf_whole(s, sizeof s, &n, ",%s", "mlx5_1"), -1);
    assert_string_equal(s, "mlx5_0");
    assert_int_equal(n, 6);
    assert_int_equal(fixstr_appendf_whole(s, sizeof s, &n, ",%s", "ib0"), 0);
    assert_string_equal(s, "mlx5_0,ib0");
    assert_int_equal(n, 10);
}

static void zero_size(void **st)
{
    (void)st;
    char s[1] = {'Q'};
    size_t n = 0;
    assert_int_equal(fixstr_appendf(s, 0, &n, "x"), -1);
    assert_int_equal(s[0], 'Q');
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(appends_that_fit),
        cmocka_unit_test(a_cut_stays_inside),
        cmocka_unit_test(a_length_past_the_end),
        cmocka_unit_test(whole_entries),
        cmocka_unit_test(zero_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
