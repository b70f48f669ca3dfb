/* hashfile: read() and the mapping give coreutils' sha256 over windows and
 * an unaligned tail; a file cut short under the mapping (SIGBUS) is hashed
 * again by read() with the progress counted once; a SIGBUS that is not the
 * mapping's still reaches the handler that was there before; measuring
 * settles on one way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hashfile.h"
#include "verify.h"

static char g_path[64];
static size_t g_size;
static char g_want[65];

/* 40 MiB and a tail: two and a half mapping windows, pages not filled */
static int setup(void **st)
{
    (void)st;
    snprintf(g_path, sizeof g_path, "/tmp/dsv41-hashfile-XXXXXX");
    int fd = mkstemp(g_path);
    if (fd < 0)
        return -1;
    g_size = (40u << 20) + 4097;
    unsigned char *data = malloc(g_size);
    if (!data)
        return -1;
    uint32_t x = 88172645u;
    for (size_t i = 0; i < g_size; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        data[i] = (unsigned char)x;
    }
    int ok = write(fd, data, g_size) == (ssize_t)g_size;
    free(data);
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", g_path);
    FILE *f = popen(cmd, "r");
    ok = ok && f && fread(g_want, 1, 64, f) == 64;
    if (f)
        pclose(f);
    return ok ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    unlink(g_path);
    return 0;
}

static void hash_path(int64_t seen, char hex[65], int64_t *done_out)
{
    int fd = open(g_path, O_RDONLY);
    assert_true(fd >= 0);
    unsigned char d[32];
    _Atomic int64_t done = 0;
    int rc = seen ? hashfile_sha256_seen(fd, seen, d, &done, NULL)
                  : hashfile_sha256(fd, d, &done, NULL);
    close(fd);
    assert_int_equal(rc, 0);
    verify_hex(d, hex);
    *done_out = done;
}

static void each_way_agrees(void **st)
{
    (void)st;
    const enum hashfile_way ways[] = {HASHFILE_READ, HASHFILE_MAP, HASHFILE_AUTO};
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        hashfile_set_way(ways[i]);
        char hex[65];
        int64_t done;
        hash_path(0, hex, &done);
        assert_string_equal(hex, g_want);
        assert_int_equal(done, (int64_t)g_size);
    }
}

/* The file seen 64 MiB long, as before a truncation: the mapping's pages
 * past the real end raise SIGBUS, and the answer is the real file's. */
static void cut_short_under_the_mapping(void **st)
{
    (void)st;
    hashfile_set_way(HASHFILE_MAP);
    char hex[65];
    int64_t done;
    hash_path(64 << 20, hex, &done);
    assert_string_equal(hex, g_want);
    assert_int_equal(done, (int64_t)g_size);
    /* and read() alone: it stops at the end it meets */
    hashfile_set_way(HASHFILE_READ);
    hash_path(64 << 20, hex, &done);
    assert_string_equal(hex, g_want);
    assert_int_equal(done, (int64_t)g_size);
}

static volatile sig_atomic_t g_theirs;

static void their_bus(int sig)
{
    (void)sig;
    g_theirs++;
}

/* In a child (its own signal dispositions): a handler installed before the
 * mapped hash's own gets, through it, a SIGBUS that is not a mapping's; and
 * the mapped hash still catches its own after that. No exec: under
 * qemu-user a program cannot exec another (tests/aarch64/run.sh). */
static int foreign_child(void)
{
    signal(SIGBUS, their_bus);
    hashfile_set_way(HASHFILE_MAP);
    int64_t done;
    char hex[65];
    hash_path(0, hex, &done); /* puts the hash's handler before theirs */
    struct sigaction cur;
    sigaction(SIGBUS, NULL, &cur);
    if (!(cur.sa_flags & SA_SIGINFO))
        return 4; /* theirs is still the one installed: nothing chained */
    raise(SIGBUS);
    if (g_theirs != 1)
        return 5;
    hash_path(64 << 20, hex, &done);
    return strcmp(hex, g_want) == 0 ? 0 : 3;
}

static void foreign_sigbus_reaches_their_handler(void **st)
{
    (void)st;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(foreign_child());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void measuring_settles(void **st)
{
    (void)st;
    hashfile_set_way(HASHFILE_AUTO);
    char hex[65], how[128];
    int64_t done;
    /* 40 MiB a pass, each way measured over 64 MiB: four passes at most */
    for (int i = 0; i < 4; i++)
        hash_path(0, hex, &done);
    hashfile_describe(how, sizeof how);
    if (strncmp(how, "read() (", 8) != 0 && strncmp(how, "mmap (", 6) != 0)
        fail_msg("not settled after 160 MiB: \"%s\"", how);
    assert_non_null(strstr(how, "CPU per GB: read() "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_way_agrees),
        cmocka_unit_test(cut_short_under_the_mapping),
        cmocka_unit_test(foreign_sigbus_reaches_their_handler),
        cmocka_unit_test(measuring_settles),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
