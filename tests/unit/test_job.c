/* Jobs: a child runs the program itself with the job's words. After an
 * upgrade replaced the program's file, readlink("/proc/self/exe") names
 * "PATH (deleted)": the job must still start. The test binary is its own
 * job: "job-child" prints a line; "as-deleted" runs from a copy of itself
 * that it deletes first, then starts a job and says how it ended. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "job.h"
#include "state.h"

/* Starts a job of this very program and waits for it: 0 when it ended
 * well and printed the child's line. */
static int run_job(void)
{
    static struct state s;
    if (state_init(&s) < 0)
        return 2;
    char *argv[] = {"job-child", NULL};
    unsigned id = job_start(&s, "selftest", argv);
    int rc = 3;
    for (int i = 0; id && i < 1000; i++) {
        state_lock(&s);
        for (int k = 0; k < STATE_JOBS; k++) {
            struct state_job *j = &s.jobs[k];
            if (j->id == id && j->status != JOB_RUNNING)
                rc = j->status == JOB_OK && strstr(j->last, "job child ran") ? 0 : 4;
        }
        state_unlock(&s);
        if (rc != 3)
            break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    job_shutdown(&s);
    state_free(&s);
    return rc;
}

/* Under qemu-user (tests/aarch64/run.sh) a program of the emulated CPU
 * cannot exec another without binfmt_misc, which this machine's kernel is
 * not given: a job, which runs this very program again, is skipped there. */
static bool under_qemu(void)
{
    return getenv("DSV41_TEST_QEMU") != NULL;
}

static void a_job_of_a_replaced_program(void **st)
{
    (void)st;
    if (under_qemu())
        skip();
    char dir[] = "/tmp/dsv41-job-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char copy[64];
    snprintf(copy, sizeof copy, "%s/test_job", dir);
    struct buf self = BUF_INIT;
    assert_int_equal(buf_read_file(&self, "/proc/self/exe", 256u << 20), 0);
    int fd = open(copy, O_WRONLY | O_CREAT | O_EXCL, 0700);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, self.data, self.len), (ssize_t)self.len);
    close(fd);
    buf_free(&self);
    pid_t p = fork();
    if (p == 0) {
        execl(copy, copy, "as-deleted", (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(p, &status, 0), p);
    rmdir(dir);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void a_job_runs(void **st)
{
    (void)st;
    if (under_qemu())
        skip();
    assert_int_equal(run_job(), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "job-child") == 0) {
        puts("job child ran");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "as-deleted") == 0) {
        unlink(argv[0]); /* the file goes, as in an upgrade */
        return run_job();
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_job_runs),
        cmocka_unit_test(a_job_of_a_replaced_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
