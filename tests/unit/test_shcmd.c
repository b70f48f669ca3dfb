/* shcmd: hostile values reach the script as the exact bytes they are, run
 * locally (no quoting at all) and through the line a remote login shell
 * gets - checked with every shell installed here (sh, dash, bash, zsh,
 * fish, tcsh, csh), each as the account's shell would run it: SHELL -c LINE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "node.h"
#include "shcmd.h"

static const char *HOSTILE[] = {
    "plain",
    "two words",
    "",
    "it's",
    "'",
    "\"double\"",
    "$(touch /tmp/dsv41-shcmd-pwned)",
    "`touch /tmp/dsv41-shcmd-pwned`",
    "a;touch /tmp/dsv41-shcmd-pwned;#",
    "line1\nline2",
    "\n",
    "--help",
    "-rf",
    "../../etc/passwd",
    "back\\slash",
    "\\",
    "\\\\",
    "\\'",
    "bang!history !! !$",
    "%s %d %n",
    "tab\there",
    "$HOME ${HOME} $0 $1 $@",
    "* ? [a-z] ~",
    "{a,b} | & > < ( )",
    "caf\xc3\xa9 \xe2\x9c\x93",
};
#define NHOSTILE (sizeof HOSTILE / sizeof *HOSTILE)

/* What `printf '[%s]' "$@"` prints for the hostile values. */
static void expected(struct buf *out)
{
    for (size_t i = 0; i < NHOSTILE; i++)
        buf_printf(out, "[%s]", HOSTILE[i]);
}

static void hostile_cmd(struct shcmd *c, bool multiline)
{
    if (multiline) /* a newline in the script: the escaped form */
        shcmd_script(c, "set -e\nprintf '[%s]' \"$@\"\n");
    else
        shcmd_script(c, "printf '[%s]' \"$@\"");
    for (size_t i = 0; i < NHOSTILE; i++)
        shcmd_arg(c, HOSTILE[i]);
}

static bool pwned(void)
{
    return access("/tmp/dsv41-shcmd-pwned", F_OK) == 0;
}

static void local_run_passes_bytes(void **st)
{
    (void)st;
    unlink("/tmp/dsv41-shcmd-pwned");
    for (int ml = 0; ml < 2; ml++) {
        struct shcmd c = SHCMD_INIT;
        struct buf want = BUF_INIT, err = BUF_INIT;
        hostile_cmd(&c, ml);
        expected(&want);
        struct ssh_result res;
        assert_int_equal(node_run_local(&c, 5000, 1 << 20, &res, &err), 0);
        assert_int_equal(res.exit_status, 0);
        assert_string_equal(buf_str(&res.out), buf_str(&want));
        ssh_result_free(&res);
        shcmd_free(&c);
        buf_free(&want);
        buf_free(&err);
    }
    assert_false(pwned());
}

/* Runs `shell -c line` and returns its stdout (and -1 when the shell is
 * not installed). */
static int run_shell(const char *shell, const char *line, struct buf *out)
{
    char path[64];
    snprintf(path, sizeof path, "/bin/%s", shell);
    if (access(path, X_OK) != 0) {
        snprintf(path, sizeof path, "/usr/bin/%s", shell);
        if (access(path, X_OK) != 0)
            return -1;
    }
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    char *argv[] = {path, "-c", (char *)line, NULL};
    pid_t pid;
    assert_int_equal(child_spawn(path, false, argv, p[1], p[1], &pid), 0);
    close(p[1]);
    char tmp[4096];
    ssize_t n;
    while ((n = read(p[0], tmp, sizeof tmp)) > 0)
        buf_append(out, tmp, (size_t)n);
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void every_login_shell_reads_the_same_words(void **st)
{
    (void)st;
    static const char *shells[] = {"sh", "dash", "bash", "zsh", "fish", "tcsh", "csh"};
    unlink("/tmp/dsv41-shcmd-pwned");
    int ran = 0;
    for (size_t s = 0; s < sizeof shells / sizeof *shells; s++) {
        for (int ml = 0; ml < 2; ml++) {
            struct shcmd c = SHCMD_INIT;
            struct buf line = BUF_INIT, want = BUF_INIT, got = BUF_INIT;
            hostile_cmd(&c, ml);
            expected(&want);
            assert_int_equal(shcmd_line(&c, &line), 0);
            int rc = run_shell(shells[s], buf_str(&line), &got);
            if (rc >= 0) {
                if (strcmp(buf_str(&got), buf_str(&want)) != 0)
                    fprintf(stderr, "%s (%s script) read:\n%s\nfrom:\n%s\n", shells[s],
                            ml ? "multi-line" : "one-line", buf_str(&got), buf_str(&line));
                assert_int_equal(rc, 0);
                assert_string_equal(buf_str(&got), buf_str(&want));
                ran++;
            }
            shcmd_free(&c);
            buf_free(&line);
            buf_free(&want);
            buf_free(&got);
        }
    }
    assert_true(ran >= 2); /* sh at least, in both forms */
    assert_false(pwned());
}

static void a_line_for_csh_has_no_newline(void **st)
{
    (void)st;
    struct shcmd c = SHCMD_INIT;
    struct buf line = BUF_INIT;
    hostile_cmd(&c, true);
    assert_int_equal(shcmd_line(&c, &line), 0);
    assert_null(strchr(buf_str(&line), '\n'));
    assert_int_equal(strncmp(buf_str(&line), "exec /bin/sh -c ", 16), 0);
    shcmd_free(&c);
    buf_free(&line);
}

static void plain_exec_needs_no_shell(void **st)
{
    (void)st;
    struct shcmd c = SHCMD_INIT;
    shcmd_exec(&c, "printf", "[%s]", "a b", "$(id)", (char *)NULL);
    assert_true(shcmd_plain_exec(&c));
    struct buf err = BUF_INIT;
    struct ssh_result res;
    assert_int_equal(node_run_local(&c, 5000, 4096, &res, &err), 0);
    assert_string_equal(buf_str(&res.out), "[a b][$(id)]");
    ssh_result_free(&res);
    shcmd_free(&c);
    /* a program that is not there: exit 127 as from sh, not a failure to run */
    shcmd_exec(&c, "dsv41-no-such-program", (char *)NULL);
    assert_int_equal(node_run_local(&c, 5000, 4096, &res, &err), 0);
    assert_int_equal(res.exit_status, 127);
    /* (qemu-user's emulated spawn reports its failure to no one: exit 127 alone) */
    if (!getenv("DSV41_TEST_QEMU"))
        assert_non_null(strstr(buf_str(&res.err), "not found"));
    ssh_result_free(&res);
    shcmd_free(&c);
    shcmd_script(&c, "exec \"$@\" 2>&1");
    shcmd_arg(&c, "true");
    assert_false(shcmd_plain_exec(&c));
    shcmd_free(&c);
    buf_free(&err);
}

static void killed_by_a_signal_is_not_success(void **st)
{
    (void)st;
    struct shcmd c = SHCMD_INIT;
    struct buf err = BUF_INIT;
    shcmd_script(&c, "kill -9 $$");
    struct ssh_result res;
    assert_int_equal(node_run_local(&c, 5000, 4096, &res, &err), 0);
    assert_int_equal(res.exit_status, 128 + 9);
    ssh_result_free(&res);
    shcmd_free(&c);
    buf_free(&err);
}

static void join_is_for_people(void **st)
{
    (void)st;
    struct strv w = STRV_INIT;
    strv_add(&w, "run");
    strv_add(&w, "--name");
    strv_add(&w, "dsv41-r0");
    strv_add(&w, "{\"image\":1}");
    strv_add(&w, "it's");
    struct buf b = BUF_INIT;
    shcmd_join(&w, &b);
    assert_string_equal(buf_str(&b), "run --name dsv41-r0 '{\"image\":1}' 'it'\"'\"'s'");
    strv_free(&w);
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(local_run_passes_bytes),
        cmocka_unit_test(every_login_shell_reads_the_same_words),
        cmocka_unit_test(a_line_for_csh_has_no_newline),
        cmocka_unit_test(plain_exec_needs_no_shell),
        cmocka_unit_test(killed_by_a_signal_is_not_success),
        cmocka_unit_test(join_is_for_people),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
