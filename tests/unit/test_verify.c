/* verify: manifests as sha256sum writes them (and hostile ones), hashing
 * checked against known vectors and against coreutils' sha256sum on a file
 * of several read chunks, every result kind, cancel, and the progress
 * line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progress.h"
#include "verify.h"
#include "verify_wire.h"

#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_MILLION_A "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static char g_dir[64];

static void write_file(const char *name, const void *data, size_t n)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/dsv41-verify-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void manifest_formats(void **st)
{
    (void)st;
    struct verify_manifest m;
    struct buf err = BUF_INIT;
    const char *text = "# the six shards\n\n" SHA_ABC "  model-00001-of-00006.safetensors\r\n"
                       SHA_EMPTY " *binary mode.bin\n"
                       "\\" SHA_ABC "  back\\\\slash\\nnewline\n";
    assert_int_equal(verify_manifest_parse(text, "m.txt", &m, &err), 0);
    assert_int_equal(m.n, 3);
    assert_string_equal(m.e[0].path, "model-00001-of-00006.safetensors");
    assert_int_equal(m.e[0].line, 3);
    assert_string_equal(m.e[1].path, "binary mode.bin");
    assert_string_equal(m.e[2].path, "back\\slash\nnewline");
    char hex[65];
    verify_hex(m.e[1].want, hex);
    assert_string_equal(hex, SHA_EMPTY);
    char *only[] = {"binary mode.bin"};
    assert_int_equal(verify_manifest_select(&m, only, 1, &err), 0);
    assert_int_equal(m.n, 1);
    char *absent[] = {"nope"};
    assert_int_equal(verify_manifest_select(&m, absent, 1, &err), -1);
    assert_string_equal(buf_str(&err), "nope is not in the manifest");
    verify_manifest_free(&m);
    buf_free(&err);
}

static void manifest_errors_name_the_line(void **st)
{
    (void)st;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"abc  x\n", "m:1: expected 64 hex digits"},
        {"\n" SHA_ABC " x\n", "m:2: expected two spaces"},
        {SHA_ABC "  \n", "m:1: expected two spaces"},
        {SHA_ABC "  /etc/passwd\n", "m:1: absolute path"},
        {SHA_ABC "  a/../../etc/passwd\n", "m:1: path with a '..' part"},
        {SHA_ABC "  ..\n", "m:1: path with a '..' part"},
        {SHA_ABC "  a\n" SHA_EMPTY "  b\n" SHA_ABC "  a\n", "m:3: a is listed twice"},
        {"# only a comment\n", "m: no files listed"},
        {"", "m: no files listed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct verify_manifest m;
        struct buf err = BUF_INIT;
        assert_int_equal(verify_manifest_parse(cases[i].text, "m", &m, &err), -1);
        if (strncmp(buf_str(&err), cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s...\"", i, buf_str(&err), cases[i].want);
        assert_null(m.e);
        buf_free(&err);
    }
}

static void known_vectors(void **st)
{
    (void)st;
    char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    write_file("million", million, 1000000);
    free(million);
    char p[256];
    snprintf(p, sizeof p, "%s/million", g_dir);
    int fd = open(p, O_RDONLY);
    assert_true(fd >= 0);
    unsigned char d[32];
    char hex[65];
    _Atomic int64_t done = 0;
    assert_int_equal(verify_sha256_fd(fd, d, &done, NULL), 0);
    close(fd);
    verify_hex(d, hex);
    assert_string_equal(hex, SHA_MILLION_A);
    assert_int_equal(done, 1000000);
}

struct seen {
    int calls;
    char order[8][32];
};

static void on_done(const struct verify_entry *e, void *arg)
{
    struct seen *s = arg;
    if (s->calls < 8)
        snprintf(s->order[s->calls], sizeof s->order[0], "%s", e->path);
    s->calls++;
}

/* every kind of result, with 1 and with 4 threads */
static void run_results(void **st)
{
    (void)st;
    write_file("abc", "abc", 3);
    write_file("empty", "", 0);
    write_file("corrupt", "abd", 3);
    char p[256];
    snprintf(p, sizeof p, "%s/adir", g_dir);
    assert_int_equal(mkdir(p, 0755), 0);
    const char *text = SHA_ABC "  abc\n" SHA_EMPTY "  empty\n" SHA_ABC "  corrupt\n" SHA_ABC
                               "  gone\n" SHA_ABC "  adir\n";
    for (int jobs = 1; jobs <= 4; jobs += 3) {
        struct verify_manifest m;
        struct buf err = BUF_INIT;
        assert_int_equal(verify_manifest_parse(text, "m", &m, &err), 0);
        struct verify_progress pr = {0};
        struct seen seen = {0};
        assert_int_equal(verify_run(&m, g_dir, jobs, NULL, &pr, on_done, &seen, NULL), 3);
        assert_int_equal(seen.calls, 5);
        assert_int_equal(pr.files_done, 5);
        assert_int_equal(m.e[0].res, VERIFY_OK);
        assert_int_equal(m.e[1].res, VERIFY_OK);
        assert_int_equal(m.e[2].res, VERIFY_MISMATCH);
        assert_int_equal(m.e[3].res, VERIFY_MISSING);
        assert_int_equal(m.e[4].res, VERIFY_UNREADABLE); /* a directory */
        assert_string_equal(verify_error(&m.e[4]), "not a regular file");
        assert_int_equal(m.e[3].size, -1);
        assert_int_equal(m.e[0].size, 3);
        if (jobs == 1) /* the largest first */
            assert_string_equal(seen.order[0], "adir");
        verify_manifest_free(&m);
        buf_free(&err);
    }
    struct verify_manifest m;
    struct buf err = BUF_INIT;
    assert_int_equal(verify_manifest_parse(text, "m", &m, &err), 0);
    struct verify_progress pr = {0};
    assert_int_equal(verify_run(&m, "/nonexistent-dir", 2, NULL, &pr, NULL, NULL, NULL), -1);
    atomic_int cancel = 1;
    assert_int_equal(verify_run(&m, g_dir, 2, &cancel, &pr, NULL, NULL, NULL), 5);
    assert_int_equal(m.e[0].res, VERIFY_CANCELLED);
    assert_int_equal(m.e[3].res, VERIFY_MISSING);
    verify_manifest_free(&m);
    buf_free(&err);
}

/* The tick gets the run's argument, as done does. A sparse GiB takes the
 * hashing thread longer than a tick's 200 ms on any CPU (SHA-256 runs at
 * 2-3 GB/s at best), so the calling thread ticks while it runs. */
struct ticks {
    struct seen seen;
    int ticks;
};

static void counted_done(const struct verify_entry *e, void *arg)
{
    on_done(e, &((struct ticks *)arg)->seen);
}

static void count_tick(void *arg)
{
    assert_non_null(arg);
    ((struct ticks *)arg)->ticks++;
}

static void tick_gets_the_argument(void **st)
{
    (void)st;
    write_file("abc", "abc", 3);
    char p[300];
    snprintf(p, sizeof p, "%s/sparse", g_dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 1L << 30), 0);
    fclose(f);
    struct verify_manifest m;
    struct buf err = BUF_INIT;
    assert_int_equal(
        verify_manifest_parse(SHA_ABC "  abc\n" SHA_EMPTY "  sparse\n", "m", &m, &err), 0);
    struct verify_progress pr = {0};
    struct ticks t = {0};
    assert_int_equal(verify_run(&m, g_dir, 2, NULL, &pr, counted_done, &t, count_tick), 1);
    assert_int_equal(t.seen.calls, 2);
    assert_true(t.ticks >= 1);
    unlink(p);
    verify_manifest_free(&m);
    buf_free(&err);
}

/* A file of several read chunks against coreutils' sha256sum, the tool
 * the script era used: the two implementations must agree. */
static void agrees_with_sha256sum(void **st)
{
    (void)st;
    size_t n = 9u << 20 | 12345;
    unsigned char *data = malloc(n);
    assert_non_null(data);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        data[i] = (unsigned char)x;
    }
    write_file("big.bin", data, n);
    free(data);
    char cmd[256], line[256];
    snprintf(cmd, sizeof cmd, "cd '%s' && sha256sum big.bin", g_dir);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(pclose(f), 0);
    struct verify_manifest m;
    struct buf err = BUF_INIT;
    assert_int_equal(verify_manifest_parse(line, "sha256sum", &m, &err), 0);
    struct verify_progress pr = {0};
    assert_int_equal(verify_run(&m, g_dir, 2, NULL, &pr, NULL, NULL, NULL), 0);
    assert_int_equal(pr.total_bytes, (int64_t)n);
    assert_int_equal(pr.done_bytes, (int64_t)n);
    verify_manifest_free(&m);
    buf_free(&err);
}

static void progress_line(void **st)
{
    (void)st;
    struct buf b = BUF_INIT;
    progress_format(&b, 123000000000, 462000000000, 100, 10);
    assert_string_equal(buf_str(&b), "[##........] 123.0 GB of 462.0 GB  26.6 %  1.23 GB/s  4m36s left");
    buf_reset(&b);
    progress_format(&b, 0, 462000000000, 0.1, 0); /* no rate yet: no guess */
    assert_string_equal(buf_str(&b), "0 B of 462.0 GB  0.0 %");
    buf_reset(&b);
    progress_format(&b, 5, 0, 2, 4); /* an empty total */
    assert_string_equal(buf_str(&b), "[....] 5 B of 0 B  0.0 %  2 B/s");
    /* shown as lines (not a terminal): only once the period has passed */
    FILE *f = tmpfile();
    assert_non_null(f);
    struct progress_out o;
    progress_out_init(&o, 0, f);
    o.tty = false;
    assert_false(progress_out_due(&o)); /* period 0: no lines */
    progress_out_init(&o, 5, f);
    o.tty = false;
    progress_out_show(&o, "too soon");
    o.last -= 6;
    assert_true(progress_out_due(&o));
    progress_out_show(&o, "verify: a line");
    assert_false(progress_out_due(&o));
    progress_out_clear(&o); /* nothing redrawn: nothing to take away */
    char got[64] = "";
    rewind(f);
    assert_int_equal(fread(got, 1, sizeof got - 1, f), strlen("verify: a line\n"));
    assert_string_equal(got, "verify: a line\n");
    fclose(f);
    char d[16];
    progress_duration(d, sizeof d, 3725);
    assert_string_equal(d, "1h02m");
    progress_bytes(d, sizeof d, 999);
    assert_string_equal(d, "999 B");
    buf_free(&b);
}

/* The worker's report: what the helper writes the head reads back the
 * same, a hostile file name cannot forge a line, and anything malformed is
 * only text. */
static void wire_round_trip(void **st)
{
    (void)st;
    struct verify_entry e = {.path = "dir/odd name\nfile ok 3 - 0 forged\\x", .size = 49999999999,
                             .res = VERIFY_MISMATCH};
    memset(e.got, 0xab, sizeof e.got);
    struct buf b = BUF_INIT;
    verify_wire_file(&b, &e);
    assert_non_null(strchr(b.data, '\n'));
    assert_ptr_equal(strchr(b.data, '\n'), b.data + b.len - 1); /* one line */
    b.data[--b.len] = '\0';
    struct verify_wire *w = malloc(sizeof *w);
    assert_non_null(w);
    verify_wire_parse(b.data, w);
    assert_int_equal(w->kind, VW_FILE);
    assert_string_equal(w->e.path, e.path);
    assert_int_equal(w->e.res, VERIFY_MISMATCH);
    assert_true(w->e.size == 49999999999);
    assert_memory_equal(w->e.got, e.got, 32);
    struct verify_entry u = {.path = "fifo", .size = 0, .res = VERIFY_UNREADABLE, .not_regular = true};
    buf_reset(&b);
    verify_wire_file(&b, &u);
    b.data[--b.len] = '\0';
    verify_wire_parse(b.data, w);
    assert_int_equal(w->kind, VW_FILE);
    assert_true(w->e.not_regular);
    assert_string_equal(verify_error(&w->e), "not a regular file");
    buf_reset(&b);
    verify_wire_progress(&b, 5, 10);
    verify_wire_end(&b, 2, true);
    char *nl = strchr(b.data, '\n');
    *nl = '\0';
    verify_wire_parse(b.data, w);
    assert_true(w->kind == VW_PROGRESS && w->done == 5 && w->total == 10);
    nl[strlen(nl + 1)] = '\0';
    verify_wire_parse(nl + 1, w);
    assert_true(w->kind == VW_END && w->bad == 2 && w->interrupted);
    static const char *text[] = {
        "cannot read the directory /x", "progress 1", "progress 1 2 3", "progress -1 2",
        "progress + 1 2", "file OK 3 - 0 ", "file GOOD 3 - 0 a", "file OK x - 0 a",
        "file OK 3 abc 0 a", "file OK 3 - notaerrno a", "file OK 3 - 0 bad\\escape",
        "end 1", "end 1 2", "", "file", "end 1 1 trailing",
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        verify_wire_parse(text[i], w);
        if (w->kind != VW_TEXT)
            fail_msg("'%s' parsed as a report", text[i]);
    }
    free(w);
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(manifest_formats),
        cmocka_unit_test(manifest_errors_name_the_line),
        cmocka_unit_test(known_vectors),
        cmocka_unit_test(run_results),
        cmocka_unit_test(tick_gets_the_argument),
        cmocka_unit_test(agrees_with_sha256sum),
        cmocka_unit_test(progress_line),
        cmocka_unit_test(wire_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
