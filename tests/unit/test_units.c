/* units: systemctl's answers into a unit state, the unit file's words, and
 * the template rendered for the head and for a worker; each rendering is
 * then checked by systemd-analyze verify itself (no warning allowed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "units.h"

static void parses_systemctl_answers(void **state)
{
    (void)state;
    struct units_state st;
    const char *on = "user=ops\nsystem=running\nenabled=enabled\nactive=active\n";
    units_parse_state(on, strlen(on), &st);
    assert_true(st.known && st.systemd);
    assert_string_equal(st.user, "ops");
    assert_true(units_guard_ok(&st));
    char d[200];
    units_describe(&st, d, sizeof d);
    assert_string_equal(d, "enabled, active");

    /* degraded is still systemd; a unit that is not there: is-enabled prints nothing */
    const char *missing = "system=degraded\nenabled=\nactive=inactive\nuser=ops";
    units_parse_state(missing, strlen(missing), &st);
    assert_true(st.systemd);
    assert_string_equal(st.enabled, "not-found");
    assert_string_equal(st.active, "inactive");
    assert_false(units_guard_ok(&st));

    const char *failed = "system=running\nenabled=enabled\nactive=failed\n";
    units_parse_state(failed, strlen(failed), &st);
    assert_false(units_guard_ok(&st));
    units_describe(&st, d, sizeof d);
    assert_string_equal(d, "enabled, failed");
}

static void no_systemd_is_na(void **state)
{
    (void)state;
    struct units_state st;
    char d[200];
    /* a container or these test hosts: systemctl there, PID 1 is not systemd */
    const char *offline = "user=root\nsystem=offline\nenabled=enabled\nactive=inactive\n";
    units_parse_state(offline, strlen(offline), &st);
    assert_false(st.systemd);
    assert_false(units_guard_ok(&st));
    units_describe(&st, d, sizeof d);
    assert_non_null(strstr(d, "n/a"));
    assert_non_null(strstr(d, "offline"));
    /* no systemctl at all: only the user line */
    units_parse_state("user=root\n", 10, &st);
    assert_false(st.systemd);
    units_describe(&st, d, sizeof d);
    assert_non_null(strstr(d, "no systemctl"));
    /* not asked (node down) */
    memset(&st, 0, sizeof st);
    units_describe(&st, d, sizeof d);
    assert_non_null(strstr(d, "n/a"));
}

static void hostile_answers_stay_in_their_field(void **state)
{
    (void)state;
    struct units_state st;
    const char *t = "system=running\x1b[2J junk\nenabled=enabledxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
                    "active\nuser=a\tb\n";
    units_parse_state(t, strlen(t), &st);
    assert_null(strchr(st.system, '\x1b'));
    assert_null(strchr(st.system, ' '));
    assert_true(strlen(st.enabled) < sizeof st.enabled);
    assert_string_equal(st.active, "");
    assert_string_equal(st.user, "a");
    assert_false(units_guard_ok(&st));
}

static void quotes_for_systemd(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    assert_int_equal(units_quote(&b, "a b\"c\\d%e$f"), 0);
    assert_string_equal(buf_str(&b), "\"a b\\\"c\\\\d%%e$$f\"");
    buf_reset(&b);
    assert_int_equal(units_quote(&b, "line\nbreak"), -1);
    buf_free(&b);
}

static const char TMPL[] = "[Service]\nUser=@USER@\nEnvironment=DSV41_CONFIG=@CONFIG@\n"
                           "Environment=STATE_DIR=@STATE_DIR@\nExecStart=@BINDIR@/dsv41-top guard\n"
                           "# mail: ops@example.org\n# @CONFIG@ is DSV41_CONFIG\n";

static void renders_the_head_and_a_worker(void **state)
{
    (void)state;
    const char *const vals[][2] = {{"BINDIR", "/opt/b"},
                                   {"USER", "ops"},
                                   {"CONFIG", "/home/ops/.config/dsv41-top/config"},
                                   {"STATE_DIR", "/home/ops/.dsv41-two-sparks"}};
    struct buf out = BUF_INIT, err = BUF_INIT;
    struct strv env = STRV_INIT, exec = STRV_INIT;
    strv_add(&env, "MEMGUARD_GIB=2");
    assert_int_equal(units_render(TMPL, vals, 4, NULL, &env, &out, &err), 0);
    assert_string_equal(buf_str(&out),
                        "[Service]\nUser=ops\n"
                        "Environment=DSV41_CONFIG=/home/ops/.config/dsv41-top/config\n"
                        "Environment=STATE_DIR=/home/ops/.dsv41-two-sparks\n"
                        "Environment=\"MEMGUARD_GIB=2\"\n"
                        "ExecStart=/opt/b/dsv41-top guard\n# mail: ops@example.org\n"
                        "# @CONFIG@ is DSV41_CONFIG\n");
    buf_reset(&out);
    strv_add(&exec, "/home/ops/.dsv41-two-sparks/bin/dsv41-guard");
    strv_add(&exec, "--floor");
    strv_add(&exec, "1.5");
    strv_add(&exec, "--proc-root");
    strv_add(&exec, "/proc dir%");
    assert_int_equal(units_render(TMPL, vals, 4, &exec, NULL, &out, &err), 0);
    assert_null(strstr(buf_str(&out), "Environment=DSV41_CONFIG"));
    assert_non_null(strstr(buf_str(&out),
                           "\nExecStart=/home/ops/.dsv41-two-sparks/bin/dsv41-guard \"--floor\" "
                           "\"1.5\" \"--proc-root\" \"/proc dir%%\"\n"));
    strv_free(&env);
    strv_free(&exec);
    buf_free(&out);
    buf_free(&err);
}

static void refuses_what_a_unit_cannot_carry(void **state)
{
    (void)state;
    struct buf out = BUF_INIT, err = BUF_INIT;
    const char *const spaced[][2] = {{"BINDIR", "/opt/b"},
                                     {"USER", "ops"},
                                     {"CONFIG", "/c"},
                                     {"STATE_DIR", "/home/o ps/state"}};
    assert_int_equal(units_render(TMPL, spaced, 4, NULL, NULL, &out, &err), -1);
    assert_non_null(strstr(buf_str(&err), "STATE_DIR"));
    buf_reset(&err);
    buf_reset(&out);
    const char *const few[][2] = {{"BINDIR", "/opt/b"}, {"USER", "ops"}};
    assert_int_equal(units_render(TMPL, few, 2, NULL, NULL, &out, &err), -1);
    assert_non_null(strstr(buf_str(&err), "@CONFIG@"));
    buf_reset(&err);
    buf_reset(&out);
    struct strv exec = STRV_INIT;
    strv_add(&exec, "relative/dsv41-guard");
    const char *const vals[][2] = {{"BINDIR", "/opt/b"}, {"USER", "ops"}, {"CONFIG", "/c"},
                                   {"STATE_DIR", "/s"}};
    assert_int_equal(units_render(TMPL, vals, 4, &exec, NULL, &out, &err), -1);
    strv_free(&exec);
    buf_free(&out);
    buf_free(&err);
}

/* The real template, as the engine renders it for each kind of node, through
 * systemd-analyze verify: no output at all (it warns on stderr, exit 0). */
static void verify_file(const char *dir, const char *text)
{
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/dsv41-guard.service", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "systemd-analyze verify '%s' >'%s/said' 2>&1", path, dir);
    assert_int_equal(system(cmd), 0);
    char said[512] = "";
    snprintf(path, sizeof path, "%s/said", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(said, 1, sizeof said - 1, f);
    fclose(f);
    said[n] = '\0';
    if (n)
        fprintf(stderr, "systemd-analyze verify: %s\n", said);
    assert_int_equal(n, 0);
}

static void the_template_passes_systemd_analyze(void **state)
{
    (void)state;
    if (system("command -v systemd-analyze >/dev/null 2>&1") != 0)
        fail_msg("systemd-analyze is missing: apt-get install systemd (make deps)");
    struct buf tmpl = BUF_INIT, out = BUF_INIT, err = BUF_INIT;
    assert_int_equal(buf_read_file(&tmpl, "dist/systemd/dsv41-guard.service", 1 << 20), 0);
    char dir[] = "/tmp/dsv41-units-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cwd[400], bindir[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(bindir, sizeof bindir, "%s/build", cwd); /* build/dsv41-top exists: make unit */
    const char *const vals[][2] = {
        {"BINDIR", bindir}, {"USER", "root"}, {"CONFIG", "/nonexistent/config"}, {"STATE_DIR", dir}};
    struct strv env = STRV_INIT, exec = STRV_INIT;
    strv_add(&env, "MEMGUARD_GIB=1.5");
    assert_int_equal(units_render(buf_str(&tmpl), vals, 4, NULL, &env, &out, &err), 0);
    verify_file(dir, buf_str(&out));
    buf_reset(&out);
    char guard[600];
    snprintf(guard, sizeof guard, "%s/dsv41-guard", bindir);
    strv_add(&exec, guard);
    strv_add(&exec, "--state-dir");
    strv_add(&exec, dir);
    strv_add(&exec, "--floor");
    strv_add(&exec, "1");
    strv_add(&exec, "--proc-root");
    strv_add(&exec, "/proc");
    assert_int_equal(units_render(buf_str(&tmpl), vals, 4, &exec, NULL, &out, &err), 0);
    verify_file(dir, buf_str(&out));
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    strv_free(&env);
    strv_free(&exec);
    buf_free(&tmpl);
    buf_free(&out);
    buf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_systemctl_answers),
        cmocka_unit_test(no_systemd_is_na),
        cmocka_unit_test(hostile_answers_stay_in_their_field),
        cmocka_unit_test(quotes_for_systemd),
        cmocka_unit_test(renders_the_head_and_a_worker),
        cmocka_unit_test(refuses_what_a_unit_cannot_carry),
        cmocka_unit_test(the_template_passes_systemd_analyze),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
