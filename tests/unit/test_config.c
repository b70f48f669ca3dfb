/* Configuration layering (default < file < env < flag), derived defaults,
 * errors that name file and line, and ssh config resolution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "sshconf.h"

static char tmpdir[64];

static int setup(void **st)
{
    (void)st;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dsv41-cfg-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("HOME", tmpdir, 1);
    unsetenv("WORKER");
    unsetenv("MODEL_DIR");
    unsetenv("WORKER_MODEL_DIR");
    unsetenv("PORT");
    unsetenv("STATE_DIR");
    unsetenv("API_KEY_FILE");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void layering(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "%s/config", tmpdir);
    write_file(path, "# comment\nWORKER=fromfile\nexport PORT=\"9000\"\nMODEL_DIR = '/m'\n");
    setenv("PORT", "9100", 1);
    char *flags[] = {"WORKER=fromflag"};
    struct config c;
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, path, flags, 1, &err), 0);
    assert_string_equal(config_get(&c, "WORKER"), "fromflag");
    assert_string_equal(config_get(&c, "PORT"), "9100");
    assert_string_equal(config_get(&c, "MODEL_DIR"), "/m");
    /* derived default follows the layered value it references */
    assert_string_equal(config_get(&c, "WORKER_MODEL_DIR"), "/m");
    char want[160];
    snprintf(want, sizeof want, "%s/.dsv41-two-sparks/api_key", tmpdir);
    assert_string_equal(config_get(&c, "API_KEY_FILE"), want);
    for (int i = 0; i < c.count; i++) {
        if (strcmp(c.values[i].key, "MODEL_DIR") == 0) {
            assert_int_equal(c.values[i].source, CONFIG_SRC_FILE);
            assert_non_null(strstr(c.values[i].origin, ":4"));
        }
        if (strcmp(c.values[i].key, "PORT") == 0)
            assert_int_equal(c.values[i].source, CONFIG_SRC_ENV);
    }
    long port;
    assert_int_equal(config_get_long(&c, "PORT", &port, &err), 0);
    assert_int_equal(port, 9100);
    assert_int_equal(config_get_long(&c, "WORKER", &port, &err), -1);
    assert_true(config_is_secret("HF_TOKEN"));
    assert_false(config_is_secret("PORT"));
    unsetenv("PORT");
    config_free(&c);
    buf_free(&err);
}

static void bad_file_names_line(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "%s/bad", tmpdir);
    write_file(path, "PORT=1\nNOT_A_SETTING=2\n");
    struct config c;
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(&c, path, NULL, 0, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":2: unknown setting 'NOT_A_SETTING'"));
    config_free(&c);
    buf_reset(&err);
    write_file(path, "just words\n");
    assert_int_equal(config_load(&c, path, NULL, 0, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":1: expected KEY=VALUE"));
    config_free(&c);
    buf_reset(&err);
    char *flags[] = {"BOGUS=1"};
    assert_int_equal(config_load(&c, "/nonexistent/config", flags, 1, &err), -1);
    assert_non_null(strstr(buf_str(&err), "BOGUS=1"));
    config_free(&c);
    buf_free(&err);
}

static void sshconf(void **st)
{
    (void)st;
    char path[128];
    snprintf(path, sizeof path, "%s/ssh_config", tmpdir);
    write_file(path, "Host spark2 spark-*\n  HostName 10.10.10.%h\n  User ops\n  Port 2222\n"
                     "  IdentityFile ~/.ssh/spark_key\n"
                     "Host *\n  User fallback\n  Port 22\n  IdentityFile %d/.ssh/other\n");
    struct ssh_target t;
    struct buf err = BUF_INIT;
    assert_int_equal(sshconf_resolve(path, "spark2", &t, &err), 0);
    assert_string_equal(t.host, "10.10.10.spark2");
    assert_string_equal(t.user, "ops");
    assert_int_equal(t.port, 2222);
    assert_int_equal(t.nids, 2);
    char want[160];
    snprintf(want, sizeof want, "%s/.ssh/spark_key", tmpdir);
    assert_string_equal(t.ids[0], want);
    assert_int_equal(sshconf_resolve(path, "root@other:2200", &t, &err), 0);
    assert_string_equal(t.host, "other");
    assert_string_equal(t.user, "root");
    assert_int_equal(t.port, 2200);
    assert_int_equal(sshconf_resolve("/nonexistent", "h", &t, &err), 0);
    assert_int_equal(t.port, 22);
    assert_int_equal(t.nids, 3); /* OpenSSH's default identity files */
    assert_int_equal(sshconf_resolve(path, "", &t, &err), -1);
    assert_int_equal(sshconf_resolve(path, "a b", &t, &err), -1);
    assert_int_equal(sshconf_resolve(path, "h:99999", &t, &err), -1);
    write_file(path, "Host x\n Port banana\n");
    buf_reset(&err);
    assert_int_equal(sshconf_resolve(path, "x", &t, &err), -1);
    assert_non_null(strstr(buf_str(&err), ":2: bad Port"));
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layering),
        cmocka_unit_test(bad_file_names_line),
        cmocka_unit_test(sshconf),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
