/* usage: the documentation a command's arguments are checked against, and
 * the text --help prints from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usage.h"

static const struct usage_doc DOC = {
    "try", NULL, "a command to try", "It tries.\n\nTwice.",
    (const struct usage_exit[]){{0, "tried"}, {1, "it failed, and this reason is long enough to be "
                                                  "wrapped at the eightieth column"},
                                {2, "a usage error"}, {-1, NULL}},
    (const struct usage_opt[]){{"-f, --follow", NULL, "follow"},
                               {"--tail", "N", "the last N"},
                               {"--prefill", "N...", "numbers until the next flag"},
                               {"--label", "L", "a label"},
                               {"URL", NULL, "where"},
                               {NULL, NULL, NULL}}};

static int check(int argc, char **argv, char *msg, size_t n)
{
    struct buf err = BUF_INIT;
    int rc = usage_check(&DOC, argc, argv, &err);
    snprintf(msg, n, "%s", buf_str(&err));
    buf_free(&err);
    return rc;
}

#define ARGV(...) (char *[]){"try", __VA_ARGS__, NULL}
#define ARGC(...) ((int)(sizeof((char *[]){"try", __VA_ARGS__}) / sizeof(char *)))
#define CHECK(...) check(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), msg, sizeof msg)

static void test_check(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(CHECK("-f", "--tail", "5", "http://x"), 0);
    assert_int_equal(CHECK("--follow", "--tail=5"), 0);
    /* numbers after --prefill are its values, not operands or options */
    assert_int_equal(CHECK("--prefill", "1", "2", "3", "--label", "x"), 0);
    /* a value that looks like an option is still the value */
    assert_int_equal(CHECK("--label", "--bogus"), 0);
    assert_int_equal(CHECK("--bogus"), -1);
    assert_non_null(strstr(msg, "unknown option '--bogus'"));
    assert_non_null(strstr(msg, "dsv41-top try --help"));
    assert_int_equal(CHECK("--tail"), -1);
    assert_non_null(strstr(msg, "--tail needs a value (N)"));
    assert_int_equal(CHECK("--follow=yes"), -1);
    assert_non_null(strstr(msg, "takes no value"));
    /* after "--" everything is an operand */
    assert_int_equal(CHECK("--", "--bogus"), 0);
    /* hostile bytes in an unknown option are cut, not echoed at length */
    char longopt[4096];
    memset(longopt, 'x', sizeof longopt - 1);
    longopt[0] = longopt[1] = '-';
    longopt[sizeof longopt - 1] = '\0';
    assert_int_equal(CHECK(longopt), -1);
    assert_true(strlen(msg) < 200);
}

static void test_help(void **state)
{
    (void)state;
    assert_true(usage_wants_help(&DOC, ARGC("--help"), ARGV("--help")));
    assert_true(usage_wants_help(&DOC, ARGC("-f", "-h"), ARGV("-f", "-h")));
    /* --help as the value of --label is a label */
    assert_false(usage_wants_help(&DOC, ARGC("--label", "--help"), ARGV("--label", "--help")));
    assert_false(usage_wants_help(&DOC, ARGC("--", "--help"), ARGV("--", "--help")));
}

static void test_print(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    usage_print(f, &DOC);
    fclose(f);
    assert_non_null(strstr(text, "usage: dsv41-top try [-f] [--tail N] [--prefill N...] "
                                 "[--label L] [URL]\n"));
    assert_non_null(strstr(text, "It tries.\n\nTwice.\n"));
    assert_non_null(strstr(text, "  -f, --follow        follow\n"));
    assert_non_null(strstr(text, "exit status:\n  0   tried\n  1   it failed, and this reason "));
    assert_non_null(strstr(text, " eightieth\n      column\n  2   a usage error\n"));
    for (char *line = text; *line;) { /* nothing past 80 columns */
        size_t n = strcspn(line, "\n");
        assert_true(n <= 80);
        line += n + (line[n] == '\n');
    }
    free(text);
    /* a program of its own is named as itself; a table left out is 0 and 2 */
    static const struct usage_doc HELPER = {"dsv41-helper", "--dir DIR", "a helper", NULL, NULL,
                                            NULL};
    f = open_memstream(&text, &len);
    usage_print(f, &HELPER);
    fclose(f);
    assert_non_null(strstr(text, "usage: dsv41-helper --dir DIR\n"));
    assert_non_null(strstr(text, "exit status:\n  0   done\n  2   a usage error\n"));
    free(text);
}

static void test_wrap(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fputs("    ", f);
    usage_wrap(f, "aaa bbb ccc ddd", 4, 12);
    fclose(f);
    assert_string_equal(text, "    aaa bbb\n    ccc ddd");
    free(text);
    /* a word longer than the line stands alone rather than being cut */
    f = open_memstream(&text, &len);
    usage_wrap(f, "x averyveryverylongword y", 0, 8);
    fclose(f);
    assert_string_equal(text, "x\naveryveryverylongword\ny");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
