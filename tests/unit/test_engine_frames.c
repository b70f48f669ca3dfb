/* engine's pure parts: the multiplexed log frames split at every byte
 * boundary, garbage and oversized frames refused; the inspect document of
 * a real podman 4.3 (fixtures/engine) into the CLI's struct; container
 * names refused before they reach a URL; the socket's discovery. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "engine_frames.h"
#include "fixture.h"

/* "S:" where the stream changes, then the payload bytes */
static int last_stream;
static int record(void *ctx, int stream, const char *d, size_t n)
{
    struct buf *b = ctx;
    if (!b->len || stream != last_stream)
        buf_printf(b, "%d:", stream);
    last_stream = stream;
    return buf_append(b, d, n);
}

static void split_everywhere(void **state)
{
    (void)state;
    struct buf s = BUF_INIT;
    fixture_frame(&s, 1, "out 0\n");
    fixture_frame(&s, 2, "err 0\n");
    fixture_frame(&s, 1, "");
    fixture_frame(&s, 1, "x");
    for (size_t cut = 0; cut <= s.len; cut++) {
        for (size_t cut2 = cut; cut2 <= s.len; cut2++) {
            struct engine_frames f;
            struct buf got = BUF_INIT;
            engine_frames_init(&f);
            assert_int_equal(engine_frames_feed(&f, s.data, cut, record, &got), 0);
            assert_int_equal(engine_frames_feed(&f, s.data + cut, cut2 - cut, record, &got), 0);
            assert_int_equal(engine_frames_feed(&f, s.data + cut2, s.len - cut2, record, &got), 0);
            assert_int_equal(engine_frames_end(&f), 0);
            assert_string_equal(buf_str(&got), "1:out 0\n2:err 0\n1:x");
            buf_free(&got);
        }
    }
    buf_free(&s);
}

static void garbage(void **state)
{
    (void)state;
    struct engine_frames f;
    /* a raw (TTY) stream read as frames */
    engine_frames_init(&f);
    assert_int_equal(engine_frames_feed(&f, "hello world\n", 12, NULL, NULL), -1);
    assert_non_null(strstr(f.error, "not a multiplexed stream"));
    assert_int_equal(engine_frames_feed(&f, "\1\0\0\0\0\0\0\0", 8, NULL, NULL), -1);
    static const char *const bad[] = {"\3\0\0\0\0\0\0\1", "\1\0\1\0\0\0\0\1", "\1\0\0\1\0\0\0\1"};
    for (int i = 0; i < 3; i++) {
        engine_frames_init(&f);
        assert_int_equal(engine_frames_feed(&f, bad[i], 8, NULL, NULL), -1);
    }
    /* larger than the bound, whatever follows */
    engine_frames_init(&f);
    assert_int_equal(engine_frames_feed(&f, "\1\0\0\0\xff\xff\xff\xff", 8, NULL, NULL), -1);
    assert_non_null(strstr(f.error, "larger than 16 MiB"));
    engine_frames_init(&f);
    assert_int_equal(engine_frames_feed(&f, "\2\0\0\0\1\0\0\0", 8, NULL, NULL), 0);
    /* cut inside a header, inside a payload */
    engine_frames_init(&f);
    assert_int_equal(engine_frames_feed(&f, "\1\0\0", 3, NULL, NULL), 0);
    assert_int_equal(engine_frames_end(&f), -1);
    engine_frames_init(&f);
    assert_int_equal(engine_frames_feed(&f, "\1\0\0\0\0\0\0\5ab", 10, NULL, NULL), 0);
    assert_int_equal(engine_frames_end(&f), -1);
    assert_non_null(strstr(f.error, "inside a frame"));
}

static int stop_now(void *ctx, int stream, const char *d, size_t n)
{
    (void)ctx, (void)stream, (void)d, (void)n;
    return 1;
}

static void the_callback_stops(void **state)
{
    (void)state;
    struct engine_frames f;
    engine_frames_init(&f);
    assert_int_equal(engine_frames_feed(&f, "\1\0\0\0\0\0\0\2ab", 10, stop_now, NULL), 1);
}

static void inspect_of_podman(void **state)
{
    (void)state;
    struct buf j = fixture_load("engine/podman-4.3-inspect.json");
    struct container_info c;
    bool tty = true;
    const char *why = NULL;
    assert_int_equal(engine_parse_inspect(j.data, j.len, &c, &tty, &why), 0);
    assert_string_equal(c.name, "dsv41-r0");
    assert_true(c.running);
    assert_int_equal(c.pid, 27070);
    assert_string_equal(c.started, "2026-12-02T03:22:47.95194252Z");
    time_t t;
    assert_int_equal(inspect_parse_started(c.started, &t), 0);
    assert_int_equal(c.exit_code, 0);
    assert_false(c.oom_killed);
    assert_string_equal(c.image, "06e541ea39d0c55a84ab416d473686182304501b6ade491a5596da230e9c8ccb");
    assert_true(c.managed);
    assert_false(tty);
    buf_free(&j);
    j = fixture_load("engine/podman-4.3-inspect-exited.json");
    assert_int_equal(engine_parse_inspect(j.data, j.len, &c, NULL, &why), 0);
    assert_false(c.running);
    assert_int_equal(c.pid, 0);
    assert_int_equal(c.exit_code, 137);
    buf_free(&j);
}

static void inspect_refused(void **state)
{
    (void)state;
    struct container_info c;
    const char *why = NULL;
    static const struct {
        const char *doc, *why;
    } bad[] = {
        {"{\"State\":{}}", "no Name"},
        {"{\"Name\":\"/a\",\"State\":{\"Pid\":1}}", "no State.Running"},
        {"{\"Name\":\"/a\",\"State\":{\"Running\":true,\"Pid\":1.5}}", "State.Pid"},
        {"{\"Name\":\"/a\",\"State\":{\"Running\":true,\"Pid\":1,\"ExitCode\":1,"
         "\"OOMKilled\":\"no\"}}", "no State.OOMKilled"},
        {"{\"Name\":\"/a\"", "unterminated"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(engine_parse_inspect(bad[i].doc, strlen(bad[i].doc), &c, NULL, &why), -1);
        if (!strstr(why, bad[i].why))
            fail_msg("%s: %s, want %s", bad[i].doc, why, bad[i].why);
    }
    /* remote text: control bytes never reach the struct; labels absent */
    const char *d = "{\"Name\":\"/a\\u001b[31mb\",\"Image\":\"x\\n\",\"State\":{\"Running\":false,"
                    "\"Pid\":0,\"ExitCode\":-1,\"OOMKilled\":true},\"Config\":{\"Labels\":null}}";
    assert_int_equal(engine_parse_inspect(d, strlen(d), &c, NULL, &why), 0);
    assert_string_equal(c.name, "a?[31mb");
    assert_string_equal(c.image, "x?");
    assert_true(c.oom_killed);
    assert_false(c.managed);
}

static void names(void **state)
{
    (void)state;
    struct buf err = BUF_INIT;
    assert_int_equal(engine_name_ok("dsv41-r0", &err), 0);
    assert_int_equal(engine_name_ok("a.b_c-9", &err), 0);
    static const char *const bad[] = {"", "-r0", ".r0", "..", "a/b", "a b", "a?x=1", "a%2f",
                                      "r\n0", "\xc3\xa9",
                                      "a1234567890123456789012345678901234567890123456789012345678901234"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_reset(&err);
        if (engine_name_ok(bad[i], &err) != -1)
            fail_msg("accepted: %s", bad[i]);
        assert_non_null(strstr(buf_str(&err), "dsv41-rN"));
    }
    buf_free(&err);
}

static void socket_discovery(void **state)
{
    (void)state;
    char p[108];
    struct buf err = BUF_INIT;
    unsetenv("DOCKER_HOST");
    unsetenv("CONTAINER_HOST");
    assert_int_equal(engine_socket("docker", NULL, p, sizeof p, &err), 0);
    assert_string_equal(p, "/var/run/docker.sock");
    setenv("DOCKER_HOST", "unix:///srv/d.sock", 1);
    assert_int_equal(engine_socket("docker", "", p, sizeof p, &err), 0);
    assert_string_equal(p, "/srv/d.sock");
    setenv("DOCKER_HOST", "tcp://10.0.0.1:2375", 1);
    assert_int_equal(engine_socket("docker", NULL, p, sizeof p, &err), -1);
    assert_non_null(strstr(buf_str(&err), "DOCKER_HOST"));
    /* the setting first */
    assert_int_equal(engine_socket("docker", "unix:///x.sock", p, sizeof p, &err), 0);
    assert_string_equal(p, "/x.sock");
    assert_int_equal(engine_socket("docker", "/y.sock", p, sizeof p, &err), 0);
    assert_string_equal(p, "/y.sock");
    assert_int_equal(engine_socket("docker", "relative.sock", p, sizeof p, &err), -1);
    /* none wins over the variables: the CLI */
    assert_int_equal(engine_socket("docker", "none", p, sizeof p, &err), -1);
    assert_non_null(strstr(buf_str(&err), "none"));
    unsetenv("DOCKER_HOST");
    setenv("CONTAINER_HOST", "ssh://core@h/run/podman/podman.sock", 1);
    assert_int_equal(engine_socket("podman", NULL, p, sizeof p, &err), -1);
    setenv("CONTAINER_HOST", "unix:///run/p.sock", 1);
    assert_int_equal(engine_socket("podman", NULL, p, sizeof p, &err), 0);
    assert_string_equal(p, "/run/p.sock");
    unsetenv("CONTAINER_HOST");
    setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
    assert_int_equal(engine_socket("podman", NULL, p, sizeof p, &err), 0);
    assert_string_equal(p, geteuid() == 0 ? "/run/podman/podman.sock"
                                          : "/run/user/1000/podman/podman.sock");
    assert_int_equal(engine_socket("lxc", NULL, p, sizeof p, &err), -1);
    char small[8];
    assert_int_equal(engine_socket("docker", NULL, small, sizeof small, &err), -1);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(split_everywhere),  cmocka_unit_test(garbage),
        cmocka_unit_test(the_callback_stops), cmocka_unit_test(inspect_of_podman),
        cmocka_unit_test(inspect_refused),   cmocka_unit_test(names),
        cmocka_unit_test(socket_discovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
