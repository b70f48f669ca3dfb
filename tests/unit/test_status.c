/* status_collect end to end on this machine: the head from fixture roots,
 * a worker whose ssh port refuses, and no API. Collection runs one thread
 * per node, which the TSan build checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "status_out.h"

static void refused_worker_and_no_api(void **st)
{
    (void)st;
    struct buf proc = BUF_INIT, sys = BUF_INIT, err = BUF_INIT;
    buf_printf(&proc, "%s/proc/spark", fixture_dir());
    buf_printf(&sys, "%s/sysfs/spark-head", fixture_dir());
    setenv("DSV41_PROC_ROOT", buf_str(&proc), 1);
    setenv("DSV41_SYS_ROOT", buf_str(&sys), 1);
    setenv("WORKER", "root@127.0.0.1:1", 1);
    setenv("API_URL", "http://127.0.0.1:1", 1);
    setenv("RUNTIME", "docker", 1); /* no daemon here: a runtime problem */
    setenv("SSH_CONFIG", "/nonexistent", 1);
    struct config c;
    assert_int_equal(config_load(&c, "/nonexistent", NULL, 0, &err), 0);
    assert_int_equal(ssh_global_init(), 0);
    assert_int_equal(api_global_init(), 0);
    struct cluster cl;
    assert_int_equal(cluster_open(&c, &cl, &err), 0);
    struct status_report *r = malloc(sizeof *r);
    status_collect(&c, &cl, r);
    assert_true(r->nodes[0].snap.reachable);
    assert_true(r->nodes[0].snap.mem.total_kib.v == 127601496);
    assert_false(r->nodes[1].snap.reachable);
    assert_non_null(strstr(r->nodes[1].snap.error, "Connection refused"));
    assert_true(r->nodes[1].down_since > 0);
    assert_true(r->nproblems >= 3);
    cJSON *j = status_to_json(r);
    cJSON *nodes = cJSON_GetObjectItem(j, "nodes");
    assert_int_equal(cJSON_GetArraySize(nodes), 2);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 1), "reachable")));
    /* the head's MemAvailable in the fixture is above the 1 GiB floor */
    for (int i = 0; i < r->nproblems; i++)
        assert_null(strstr(r->problems[i], "guard floor"));
    cJSON_Delete(j);
    free(r);
    cluster_close(&cl);
    config_free(&c);
    buf_free(&proc);
    buf_free(&sys);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_worker_and_no_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
