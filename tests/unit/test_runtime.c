/* Golden command lines of the runtime verbs, and that hostile names stay
 * one shell word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "runtime.h"

/* The words of a command, joined for comparing. */
static const char *words(const struct shcmd *c, struct buf *b)
{
    buf_reset(b);
    shcmd_join(&c->args, b);
    return buf_str(b);
}

static void golden(void **st)
{
    (void)st;
    struct buf b = BUF_INIT, err = BUF_INIT;
    struct shcmd c = SHCMD_INIT;
    assert_int_equal(runtime_check("docker", &err), 0);
    assert_int_equal(runtime_check("podman", &err), 0);
    assert_int_equal(runtime_check("nerdctl; rm -rf /", &err), -1);
    assert_non_null(strstr(buf_str(&err), "expected docker or podman"));
    runtime_cmd_logs(&c, "docker", "dsv41-r0", true, 200);
    assert_string_equal(words(&c, &b), "docker logs -f --tail 200 -- dsv41-r0");
    assert_string_equal(buf_str(&c.script), "exec \"$@\" 2>&1");
    shcmd_free(&c);
    runtime_cmd_kill(&c, "podman", "dsv41-r1");
    assert_string_equal(words(&c, &b), "podman kill -- dsv41-r1");
    assert_true(shcmd_plain_exec(&c));
    shcmd_free(&c);
    runtime_cmd_rm(&c, "docker", "dsv41-r1");
    assert_string_equal(words(&c, &b), "docker rm -f -- dsv41-r1");
    shcmd_free(&c);
    runtime_cmd_rm(&c, "podman", "dsv41-r1");
    assert_string_equal(words(&c, &b), "podman rm -f -t 0 -- dsv41-r1");
    shcmd_free(&c);
    runtime_cmd_stop(&c, "podman", "dsv41-r0", 60);
    assert_string_equal(words(&c, &b), "podman stop -t 60 -- dsv41-r0");
    assert_true(shcmd_plain_exec(&c));
    shcmd_free(&c);
    struct strv lo = STRV_INIT;
    assert_int_equal(runtime_log_args(&lo, "docker", "100m", "5"), 0);
    buf_reset(&b);
    shcmd_join(&lo, &b);
    assert_string_equal(buf_str(&b),
                        "--log-driver json-file --log-opt max-size=100m --log-opt max-file=5");
    strv_free(&lo);
    buf_reset(&b);
    assert_int_equal(runtime_log_args(&lo, "podman", "20k", "5"), 0);
    shcmd_join(&lo, &b);
    assert_string_equal(buf_str(&b), "--log-driver k8s-file --log-opt max-size=20k");
    strv_free(&lo);
    assert_int_equal(runtime_log_args(&lo, "docker", "", "5"), 0);
    assert_int_equal(lo.n, 0);
    strv_free(&lo);
    runtime_cmd_image_present(&c, "docker", "--help");
    assert_string_equal(words(&c, &b), "docker image inspect -- --help");
    shcmd_free(&c);
    struct strv names = STRV_INIT;
    runtime_rank_names(&names, 2);
    runtime_cmd_inspect(&c, "podman", &names);
    assert_non_null(strstr(words(&c, &b), "podman container inspect -f '{{.Name}}|"));
    assert_non_null(strstr(buf_str(&b), "' -- dsv41-r0 dsv41-r1"));
    shcmd_free(&c);
    strv_free(&names);
    buf_free(&b);
    buf_free(&err);
}

static void hostile_name_is_one_word(void **st)
{
    (void)st;
    struct buf err = BUF_INIT;
    struct shcmd c = SHCMD_INIT;
    /* printf stands in for the runtime: it shows the words it was given */
    runtime_cmd_kill(&c, "printf", "x'; touch /tmp/dsv41-pwned; echo '$(id)`id`");
    free(c.args.v[1]); /* "kill" becomes printf's format */
    c.args.v[1] = strdup("[%s]");
    struct ssh_result res;
    assert_int_equal(node_run_local(&c, 5000, 4096, &res, &err), 0);
    assert_string_equal(buf_str(&res.out), "[--][x'; touch /tmp/dsv41-pwned; echo '$(id)`id`]");
    ssh_result_free(&res);
    shcmd_free(&c);
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
