/* strv_add_shell_words: a setting's argument list split by the POSIX
 * shell's word rules. The expected words are what `sh -c 'printf "<%s>"
 * WORDS'` prints for the same text (checked against dash here), except
 * that nothing is expanded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "shcmd.h"
#include "strv.h"

/* The words joined as <w1><w2>..., so an empty word and a blank inside a
 * word both show. */
static char *split(const char *text, int *rc, struct buf *err)
{
    struct strv w = STRV_INIT;
    *rc = strv_add_shell_words(&w, text, err);
    struct buf b = BUF_INIT;
    for (int i = 0; i < w.n; i++)
        buf_printf(&b, "<%s>", w.v[i]);
    strv_free(&w);
    char *out = strdup(buf_str(&b));
    buf_free(&b);
    return out;
}

static void expect(const char *text, const char *want)
{
    int rc;
    struct buf err = BUF_INIT;
    char *got = split(text, &rc, &err);
    if (rc != 0 || strcmp(got, want) != 0)
        fail_msg("[%s]: got %s (rc %d, %s), want %s", text, got, rc, buf_str(&err), want);
    free(got);
    buf_free(&err);
}

static void the_json_example(void **st)
{
    (void)st;
    expect("--override-generation-config '{\"temperature\": 0.6}'",
           "<--override-generation-config><{\"temperature\": 0.6}>");
    /* the same JSON in double quotes, its own quotes escaped */
    expect("--override-generation-config \"{\\\"temperature\\\": 0.6}\"",
           "<--override-generation-config><{\"temperature\": 0.6}>");
    /* unquoted: a word that begins with { is JSON, to its matching }, as the
     * operator wrote it (here the rule differs from a shell's on purpose) */
    expect("--override-generation-config {\"temperature\": 0.6}",
           "<--override-generation-config><{\"temperature\": 0.6}>");
    expect("--a {\"s\": \"} {[\", \"n\": [1, {\"x\": 2}]} --b",
           "<--a><{\"s\": \"} {[\", \"n\": [1, {\"x\": 2}]}><--b>");
    expect("[1, 2] {}x 'q'", "<[1, 2]><{}x><q>");
    /* a JSON string's escaped quote does not end it */
    expect("{\"a\": \"b\\\" }\"}", "<{\"a\": \"b\\\" }\"}>");
    /* a bracket later in a word is an ordinary byte */
    expect("a{b c}", "<a{b><c}>");
}

static void blanks_quotes_and_escapes(void **st)
{
    (void)st;
    expect("", "");
    expect(" \t\n ", "");
    expect("a", "<a>");
    expect("  a \t b\nc  ", "<a><b><c>");
    expect("--max-log-len 100  --disable-log-requests", "<--max-log-len><100><--disable-log-requests>");
    /* quotes of the other kind inside, and quoted parts joined into one word */
    expect("'say \"hi\"' \"it's\"", "<say \"hi\"><it's>");
    expect("a'b c'd\"e f\"g", "<ab cde fg>");
    expect("'it'\\''s'", "<it's>");
    /* single quotes keep backslashes */
    expect("'a\\b\\' c", "<a\\b\\><c>");
    /* in double quotes only \" \\ \$ \` escape; other backslashes stay */
    expect("\"\\\" \\\\ \\$ \\` \\n \\a\"", "<\" \\ $ ` \\n \\a>");
    /* outside quotes \ escapes any byte, blanks and quotes included */
    expect("a\\ b \\'c \\\"d \\\\ \\x", "<a b><'c><\"d><\\><x>");
    /* \ newline joins lines, inside a word, between words and in "..." */
    expect("a\\\nb \\\n c \"d\\\ne\"", "<ab><c><de>");
    /* a newline inside quotes is kept */
    expect("'a\nb'", "<a\nb>");
}

static void empty_words(void **st)
{
    (void)st;
    expect("''", "<>");
    expect("\"\"", "<>");
    expect("a '' b", "<a><><b>");
    expect("'' \"\"", "<><>");
    expect("a''", "<a>");
}

static void nothing_expanded(void **st)
{
    (void)st;
    expect("$HOME ~ ~/x * ? [a] $(id) `id` ${X:-y}", "<$HOME><~><~/x><*><?><[a]><$(id)><`id`><${X:-y}>");
    expect("a;b | c && d > e < f # g (h)", "<a;b><|><c><&&><d><>><e><<><f><#><g><(h)>");
    expect("$'a\\tb'", "<$a\\tb>");
    expect("\"$HOME `id`\"", "<$HOME `id`>");
}

static void expect_error(const char *text, const char *want)
{
    struct strv w = STRV_INIT;
    assert_int_equal(strv_add(&w, "kept"), 0);
    struct buf err = BUF_INIT;
    int rc = strv_add_shell_words(&w, text, &err);
    if (rc != -1 || !strstr(buf_str(&err), want))
        fail_msg("[%s]: rc %d, '%s', want '%s'", text, rc, buf_str(&err), want);
    /* what was there before is left, and nothing of the broken text */
    assert_int_equal(w.n, 1);
    assert_string_equal(w.v[0], "kept");
    assert_null(w.v[1]);
    strv_free(&w);
    buf_free(&err);
    /* no err buffer: the same answer */
    assert_int_equal(strv_add_shell_words(&w, text, NULL), -1);
    assert_int_equal(w.n, 0);
    strv_free(&w);
}

static void errors_name_the_column(void **st)
{
    (void)st;
    expect_error("'", "column 1: the ' there is never closed");
    expect_error("--x '{\"a\": 1}", "column 5: the ' there is never closed");
    expect_error("a b \"c", "column 5: the \" there is never closed");
    expect_error("\"a\\\"", "column 1: the \" there is never closed");
    expect_error("ok 'it\\'s'", "column 10: the ' there is never closed");
    expect_error("a\\", "column 2: the \\ at the end escapes nothing");
    expect_error("\\", "column 1: the \\ at the end escapes nothing");
    expect_error("x y z \"", "column 7");
    expect_error("--x {\"a\": 1", "column 5: the { there is never closed");
    expect_error("[1, [2]", "column 1: the [ there is never closed");
    expect_error("{\"a}\"", "column 1: the { there is never closed");
}

/* What argv prints, when it exits 0. */
static bool sh_out(char *const argv[], struct buf *out)
{
    int fds[2];
    pid_t pid;
    if (pipe(fds) < 0)
        return false;
    if (child_spawn(argv[0], false, argv, fds[1], 2, &pid) != 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    close(fds[1]);
    char b[4096];
    ssize_t n;
    while ((n = read(fds[0], b, sizeof b)) > 0)
        buf_append(out, b, (size_t)n);
    close(fds[0]);
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The table above matches a real shell: dash splits the same texts (with
 * nothing in them that it would expand). */
static void a_real_shell_agrees(void **st)
{
    (void)st;
    static const char *texts[] = {
        "--override-generation-config '{\"temperature\": 0.6}'",
        "a'b c'd\"e f\"g",
        "'it'\\''s' \"\\\" \\\\ \\n \\a\" '' a\\ b \\x",
        "a\\\nb \\\n c \"d\\\ne\" 'a\nb'",
        "'a\\b\\' c \"\" x''",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        struct buf script = BUF_INIT, out = BUF_INIT;
        buf_printf(&script, "printf '<%%s>' %s", texts[i]);
        int rc;
        char *want = split(texts[i], &rc, NULL);
        assert_int_equal(rc, 0);
        char *argv[] = {"/bin/sh", "-c", (char *)buf_str(&script), NULL};
        if (!sh_out(argv, &out))
            fail_msg("cannot run /bin/sh -c %s", buf_str(&script));
        if (strcmp(buf_str(&out), want) != 0)
            fail_msg("[%s]: sh says %s, split says %s", texts[i], buf_str(&out), want);
        free(want);
        buf_free(&script);
        buf_free(&out);
    }
}

static void hostile_input(void **st)
{
    (void)st;
    /* long: a megabyte of one quoted word, and 100000 one-byte words */
    size_t n = 1 << 20;
    char *big = malloc(n + 3);
    assert_non_null(big);
    big[0] = '\'';
    memset(big + 1, 'x', n);
    big[n + 1] = '\'';
    big[n + 2] = '\0';
    struct strv w = STRV_INIT;
    assert_int_equal(strv_add_shell_words(&w, big, NULL), 0);
    assert_int_equal(w.n, 1);
    assert_int_equal(strlen(w.v[0]), n);
    strv_free(&w);
    big[n + 1] = 'x'; /* left open: the column of the quote, at the start */
    struct buf err = BUF_INIT;
    assert_int_equal(strv_add_shell_words(&w, big, &err), -1);
    assert_non_null(strstr(buf_str(&err), "column 1:"));
    buf_free(&err);
    for (size_t i = 0; i < n; i++)
        big[i] = i % 2 ? ' ' : 'a';
    big[200000] = '\0';
    assert_int_equal(strv_add_shell_words(&w, big, NULL), 0);
    assert_int_equal(w.n, 100000);
    strv_free(&w);
    free(big);
    /* every byte but NUL, raw (binary, invalid UTF-8), inside single quotes
     * except the quote itself: one word, the bytes as they are */
    char bytes[300], want[300];
    size_t k = 0, m = 0;
    bytes[k++] = '\'';
    for (int b = 1; b < 256; b++)
        if (b != '\'') {
            bytes[k++] = (char)b;
            want[m++] = (char)b;
        }
    bytes[k++] = '\'';
    bytes[k] = want[m] = '\0';
    assert_int_equal(strv_add_shell_words(&w, bytes, NULL), 0);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.v[0], want);
    strv_free(&w);
    /* the same bytes unquoted: whatever the split, no word holds a blank
     * and the call returns (a final \ or an open quote is an error) */
    int rc = strv_add_shell_words(&w, want, &err);
    assert_true(rc == 0 || rc == -1);
    for (int i = 0; rc == 0 && i < w.n; i++)
        assert_null(strpbrk(w.v[i], " \t\n"));
    strv_free(&w);
    buf_free(&err);
    /* only quotes */
    expect("''''''", "<>");
    expect_error("'''''", "column 5");
    expect_error("\"\"\"", "column 3");
}

/* What `launch --dry-run` prints (shcmd_join) splits back into the same
 * words: an operator can paste a printed word into EXTRA. */
static void dry_run_words_paste_back(void **st)
{
    (void)st;
    static const char *words[] = {
        "--override-generation-config", "{\"temperature\": 0.6}", "", "it's", "'", "\\",
        "back\\slash", "bang!", "$(id)", "`id`", "a b\tc", "line1\nline2", "\"", "~", "*",
        "--x=y", "\xff\xfe",
    };
    struct strv in = STRV_INIT, out = STRV_INIT;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        assert_int_equal(strv_add(&in, words[i]), 0);
    struct buf line = BUF_INIT, err = BUF_INIT;
    assert_int_equal(shcmd_join(&in, &line), 0);
    if (strv_add_shell_words(&out, buf_str(&line), &err) != 0)
        fail_msg("[%s]: %s", buf_str(&line), buf_str(&err));
    assert_int_equal(out.n, in.n);
    for (int i = 0; i < in.n; i++)
        assert_string_equal(out.v[i], in.v[i]);
    strv_free(&in);
    strv_free(&out);
    buf_free(&line);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_json_example),   cmocka_unit_test(blanks_quotes_and_escapes),
        cmocka_unit_test(empty_words),        cmocka_unit_test(nothing_expanded),
        cmocka_unit_test(errors_name_the_column), cmocka_unit_test(a_real_shell_agrees),
        cmocka_unit_test(hostile_input),      cmocka_unit_test(dry_run_words_paste_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
