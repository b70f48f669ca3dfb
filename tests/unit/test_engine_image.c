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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(parses_id_and_cuda),
                                       cmocka_unit_test(refuses_what_is_wrong)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
