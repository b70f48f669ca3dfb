/* interrupt: a caught signal only sets the flag; one not caught, and a
 * second one, end the process as by default; a local command with a cancel
 * token is killed soon after the token turns (run on real child processes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"
#include "mono.h"
#include "node.h"
#include "shcmd.h"

/* How a child that installs the handler and raises sigs ends: its exit
 * status, or 128 + the signal that ended it. */
static int child_outcome(bool catching, int nsigs, int sig)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* as a terminal starts us: a test run in the background (bash
         * without job control ignores SIGINT there) must not decide */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        interrupt_install();
        if (catching)
            interrupt_catch();
        for (int i = 0; i < nsigs; i++)
            raise(sig);
        _exit(interrupt_pending() == sig ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void caught_sets_the_flag(void **state)
{
    (void)state;
    assert_int_equal(child_outcome(true, 1, SIGINT), 0);
    assert_int_equal(child_outcome(true, 1, SIGTERM), 0);
    assert_int_equal(child_outcome(true, 1, SIGHUP), 0);
}

/* The fd for waits that poll: not readable before, readable after a caught
 * signal, and still after a second one (never drained). */
static void the_fd_turns_readable(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        interrupt_install();
        interrupt_catch();
        int fd = interrupt_fd();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (fd < 0 || poll(&p, 1, 0) != 0)
            _exit(2);
        raise(SIGTERM);
        if (poll(&p, 1, 1000) != 1)
            _exit(3);
        raise(SIGTERM);
        _exit(poll(&p, 1, 0) == 1 ? 0 : 4);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void not_caught_ends_as_by_default(void **state)
{
    (void)state;
    assert_int_equal(child_outcome(false, 1, SIGINT), 128 + SIGINT);
    assert_int_equal(child_outcome(false, 1, SIGTERM), 128 + SIGTERM);
}

static void the_second_one_ends_it(void **state)
{
    (void)state;
    assert_int_equal(child_outcome(true, 2, SIGINT), 128 + SIGINT);
}

/* started under nohup: SIGHUP stays ignored, the others are caught */
static void ignored_stays_ignored(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        interrupt_install();
        interrupt_catch();
        raise(SIGHUP);
        if (interrupt_pending() != 0)
            _exit(1);
        raise(SIGTERM);
        _exit(interrupt_pending() == SIGTERM ? 0 : 2);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void *set_later(void *arg)
{
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

static void a_local_command_is_cancelled(void **state)
{
    (void)state;
    atomic_int cancel = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, set_later, &cancel), 0);
    struct shcmd c = SHCMD_INIT;
    shcmd_exec(&c, "sleep", "30", (char *)NULL);
    struct ssh_result res;
    struct buf err = BUF_INIT;
    double t0 = mono_s();
    assert_int_equal(node_run_local_cancel(&c, 60000, 4096, &cancel, &res, &err), -1);
    /* the 30 s sleep was killed, not waited for: a bound no load reaches */
    assert_true(mono_s() - t0 < 20);
    assert_string_equal(buf_str(&err), "interrupted");
    pthread_join(th, NULL);
    /* an untouched token changes nothing */
    atomic_int never = 0;
    buf_reset(&err);
    shcmd_free(&c);
    shcmd_exec(&c, "echo", "ran", (char *)NULL);
    assert_int_equal(node_run_local_cancel(&c, 60000, 4096, &never, &res, &err), 0);
    assert_string_equal(buf_str(&res.out), "ran\n");
    ssh_result_free(&res);
    shcmd_free(&c);
    buf_free(&err);
}

/* The console ignores SIGPIPE; what it starts must not inherit that (a
 * `cmd | head` in a script would spin instead of ending). */
static void children_get_sigpipe_back(void **state)
{
    (void)state;
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    struct shcmd c = SHCMD_INIT;
    shcmd_script(&c, "sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status");
    struct ssh_result res;
    struct buf err = BUF_INIT;
    assert_int_equal(node_run_local(&c, 10000, 4096, &res, &err), 0);
    unsigned long long ign = strtoull(buf_str(&res.out), NULL, 16);
    assert_true(buf_str(&res.out)[0] != '\0');
    assert_int_equal(ign & (1ull << (SIGPIPE - 1)), 0);
    ssh_result_free(&res);
    shcmd_free(&c);
    buf_free(&err);
    signal(SIGPIPE, old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(caught_sets_the_flag),
        cmocka_unit_test(the_fd_turns_readable),
        cmocka_unit_test(not_caught_ends_as_by_default),
        cmocka_unit_test(the_second_one_ends_it),
        cmocka_unit_test(ignored_stays_ignored),
        cmocka_unit_test(a_local_command_is_cancelled),
        cmocka_unit_test(children_get_sigpipe_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
