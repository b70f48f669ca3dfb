/* engine_image: an image's inspect document (podman's compatible API and
 * docker's write the same fields) into the id as the runtime's CLI prints
 * it and Config.Env's CUDA_VERSION as the script's sed finds it; malformed
 * documents and references that cannot go into a URL refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "engine_image.h"

#define ID "3cbc8ec016f5fbfc82eba3480de12399cbce31e7b76aa3108b8fe8246c42a79d"

static const char DOC[] =
    "{\"Id\":\"sha256:" ID "\",\"RepoTags\":[\"localhost/dsv41-sim:latest\"],"
    "\"Config\":{\"Env\":[\"PATH=/usr/local/sbin:/usr/bin\",\"NV_CUDA_VERSION=1\","
    "\"CUDA_VERSION=12.9.1\",\"CUDA_VERSION=11.0\"],\"Labels\":null},\"Size\":123}";

static int parse(const char *doc, bool strip, struct engine_image *img)
{
    const char *why = NULL;
    int rc = engine_image_parse(doc, strlen(doc), strip, img, &why);
    if (rc < 0)
        assert_non_null(why);
    return rc;
}

static void parses_id_and_cuda(void **st)
{
    (void)st;
    struct engine_image img;
    assert_int_equal(parse(DOC, true, &img), 0);
    assert_string_equal(img.id, ID); /* podman's CLI: no prefix */
    assert_string_equal(img.cuda, "12.9.1");
    assert_int_equal(parse(DOC, false, &img), 0);
    assert_string_equal(img.id, "sha256:" ID); /* docker's CLI keeps it */
    /* no Env, Env without it, an empty first one (sed's first line: empty) */
    assert_int_equal(parse("{\"Id\":\"sha256:ab\",\"Config\":{}}", true, &img), 0);
    assert_string_equal(img.id, "ab");
    assert_string_equal(img.cuda, "");
    assert_int_equal(parse("{\"Id\":\"ab\",\"Config\":{\"Env\":[\"A=1\"]}}", true, &img), 0);
    assert_string_equal(img.cuda, "");
    assert_int_equal(
        parse("{\"Id\":\"ab\",\"Config\":{\"Env\":[\"CUDA_VERSION=\",\"CUDA_VERSION=2\"]}}", true,
              &img),
        0);
    assert_string_equal(img.cuda, "");
    assert_int_equal(parse("{\"Id\":\"ab\",\"Config\":{\"Env\":null}}", true, &img), 0);
    /* escapes read as the CLI prints them; a newline ends the value */
    assert_int_equal(parse("{\"Id\":\"ab\",\"Config\":{\"Env\":[ \"X=\\\"],[\\\"\" , "
                           "\"\\u0043UDA_VERSION=12.4\\n9\"]}}",
                           true, &img),
                     0);
    assert_string_equal(img.cuda, "12.4");
    /* hostile text cleaned */
    assert_int_equal(parse("{\"Id\":\"a\\u001b[2Jb\",\"Config\":{\"Env\":[]}}", true, &img), 0);
    assert_null(strchr(img.id, 0x1b));
}

static void refuses_what_is_wrong(void **st)
{
    (void)st;
    struct engine_image img;
    assert_int_equal(parse("{\"Config\":{}}", true, &img), -1);               /* no Id */
    assert_int_equal(parse("{\"Id\":\"\"}", true, &img), -1);                 /* empty */
    assert_int_equal(parse("{\"Id\":7}", true, &img), -1);                    /* no string */
    assert_int_equal(parse("{\"Id\":\"a\",\"Config\":{\"Env\":[1]}}", true, &img), -1);
    assert_int_equal(parse("{\"Id\":\"a\",", true, &img), -1);                /* cut short */
    assert_int_equal(parse("{\"Id\":\"a\"} x", true, &img), -1);
    assert_string_equal(img.id, "");

    struct buf err = BUF_INIT;
    assert_int_equal(engine_image_ref_ok("localhost/dsv41-sim:latest", &err), 0);
    assert_int_equal(engine_image_ref_ok("nvcr.io/nvidia/vllm@sha256:" ID, &err), 0);
    assert_int_equal(engine_image_ref_ok("sha256:" ID, &err), 0);
    const char *bad[] = {"", "/etc", "-x", ".hidden", "a/../../containers/x", "a//b",
                         "a b", "a?x=1", "a%2e", "a#b", "a\nb"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        buf_reset(&err);
        assert_int_equal(engine_image_ref_ok(bad[i], &err), -1);
        assert_non_null(strstr(buf_str(&err), "go to the engine's API"));
    }
    char longref[300];
    memset(longref, 'a', sizeof longref - 1);
    longref[sizeof longref - 1] = '\0';
    assert_int_equal(engine_image_ref_ok(longref, &err), -1);
    buf_free(&err);
}

/* A transport that answers what it is given and keeps the request. */
struct canned {
    const char *ans;
    int calls;
    char req[512];
};

static int canned_exchange(void *ctx, const char *sock, const char *req, size_t len, size_t max,
                           long timeout_ms, int cancel_fd, struct buf *out, struct buf *err)
{
    struct canned *c = ctx;
    (void)sock, (void)max, (void)timeout_ms, (void)cancel_fd, (void)err;
    c->calls++;
    snprintf(c->req, sizeof c->req, "%.*s", (int)len, req);
    buf_puts(out, c->ans);
    return 0;
}

/* preflight asks a worker's engine through its session: 200 is the id,
 * 404 says the image is not there, no answer leaves the CLI, and a
 * reference that cannot go into a URL is refused before any exchange. */
static void inspect_through_a_transport(void **st)
{
    (void)st;
    char ok[1024];
    snprintf(ok, sizeof ok, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", strlen(DOC),
             DOC);
    struct canned cn = {ok, 0, ""};
    struct engine_at at = {"/run/podman/podman.sock", canned_exchange, &cn};
    struct engine_image img;
    struct buf err = BUF_INIT;
    assert_int_equal(engine_image_inspect_at(&at, "localhost/dsv41-sim:test", true, 1000, &img,
                                             &err),
                     0);
    assert_string_equal(img.id, ID);
    assert_non_null(strstr(cn.req, "GET /images/localhost/dsv41-sim:test/json HTTP/1.1\r\n"));
    cn.ans = "HTTP/1.1 404 Not Found\r\nContent-Length: 27\r\n\r\n{\"message\":\"no such image\"}";
    assert_int_equal(engine_image_inspect_at(&at, "x:1", true, 1000, &img, &err), ENGINE_NOSUCH);
    cn.ans = "";
    assert_int_equal(engine_image_inspect_at(&at, "x:1", true, 1000, &img, &err),
                     ENGINE_NO_ANSWER);
    int calls = cn.calls;
    buf_reset(&err);
    assert_int_equal(engine_image_inspect_at(&at, "x/../y", true, 1000, &img, &err), -1);
    assert_int_equal(cn.calls, calls);
    assert_non_null(strstr(buf_str(&err), "image"));
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(parses_id_and_cuda),
                                       cmocka_unit_test(refuses_what_is_wrong),
                                       cmocka_unit_test(inspect_through_a_transport)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
