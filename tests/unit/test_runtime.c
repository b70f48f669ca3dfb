/* Golden command lines of the runtime verbs, and that hostile names stay
 * one shell word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "node.h"
#include "runtime.h"

static void golden(void **st)
{
    (void)st;
    struct buf b = BUF_INIT, err = BUF_INIT;
    assert_int_equal(runtime_check("docker", &err), 0);
    assert_int_equal(runtime_check("podman", &err), 0);
    assert_int_equal(runtime_check("nerdctl; rm -rf /", &err), -1);
    assert_non_null(strstr(buf_str(&err), "expected docker or podman"));
    runtime_cmd_logs(&b, "docker", "dsv41-r0", true, 200);
    assert_string_equal(buf_str(&b), "'docker' logs -f --tail 200 'dsv41-r0'");
    buf_reset(&b);
    runtime_cmd_kill(&b, "podman", "dsv41-r1");
    assert_string_equal(buf_str(&b), "'podman' kill 'dsv41-r1'");
    buf_reset(&b);
    runtime_cmd_rm(&b, "docker", "dsv41-r1");
    assert_string_equal(buf_str(&b), "'docker' rm -f 'dsv41-r1'");
    buf_reset(&b);
    runtime_cmd_image_present(&b, "docker", "ghcr.io/x/y@sha256:ab");
    assert_string_equal(buf_str(&b), "'docker' image inspect 'ghcr.io/x/y@sha256:ab' >/dev/null 2>&1");
    buf_reset(&b);
    runtime_cmd_inspect(&b, "$RT", "NAMES");
    assert_non_null(strstr(buf_str(&b), "\"$RT\" container inspect -f '{{.Name}}|"));
    assert_non_null(strstr(buf_str(&b), "' $NAMES"));
    buf_free(&b);
    buf_free(&err);
}

static void hostile_name_is_one_word(void **st)
{
    (void)st;
    struct buf b = BUF_INIT, err = BUF_INIT;
    /* printf stands in for the runtime: it shows the words it was given */
    buf_puts(&b, "printf '[%s]' ");
    buf_shell_quote(&b, "x'; touch /tmp/dsv41-pwned; echo '$(id)`id`");
    struct ssh_result res;
    assert_int_equal(node_run_local(buf_str(&b), 5000, 4096, &res, &err), 0);
    assert_string_equal(buf_str(&res.out), "[x'; touch /tmp/dsv41-pwned; echo '$(id)`id`]");
    ssh_result_free(&res);
    buf_free(&b);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden),
        cmocka_unit_test(hostile_name_is_one_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
