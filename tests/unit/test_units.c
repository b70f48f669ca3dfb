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

#include <sys/stat.h>

#include "guard.h"
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
    assert_int_equal(units_quote(&b, "a b\"c\\d%e$f", true), 0);
    assert_string_equal(buf_str(&b), "\"a b\\\"c\\\\d%%e$$f\"");
    buf_reset(&b);
    /* in Environment= a $ is itself */
    assert_int_equal(units_quote(&b, "a$f%", false), 0);
    assert_string_equal(buf_str(&b), "\"a$f%%\"");
    buf_reset(&b);
    assert_int_equal(units_quote(&b, "line\nbreak", true), -1);
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

static char ROOT[64];

/* mkdir -p of p's folder (no shell: a test below empties PATH) */
static void parents(const char *p)
{
    char d[512];
    snprintf(d, sizeof d, "%s", p);
    for (char *s = d + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(d, 0755);
        *s = '/';
    }
}

static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", ROOT, rel);
    parents(p);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_to(const char *target, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", ROOT, rel);
    parents(p);
    unlink(p);
    assert_int_equal(symlink(target, p), 0);
}

static void gone(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s%s", ROOT, rel);
    assert_int_equal(unlink(p), 0);
}

static const char *state_of(void)
{
    static char w[24];
    if (units_file_state(ROOT, UNITS_GUARD, w, sizeof w) < 0)
        return "(undecided)";
    return w;
}

#define UNIT "/etc/systemd/system/dsv41-guard.service"
#define WANTS "/etc/systemd/system/multi-user.target.wants/dsv41-guard.service"

/* is-enabled's words from the unit search path under a root of our own */
static void unit_files_decide_enabled(void **st)
{
    (void)st;
    snprintf(ROOT, sizeof ROOT, "/tmp/dsv41-units-root.XXXXXX");
    assert_non_null(mkdtemp(ROOT));
    assert_string_equal(state_of(), ""); /* no unit file anywhere: not-found */
    const char *unit = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n"
                       "[Install]\nWantedBy=multi-user.target\n";
    put(UNIT, unit);
    assert_string_equal(state_of(), "disabled");
    link_to(UNIT, WANTS);
    assert_string_equal(state_of(), "enabled");
    gone(WANTS);
    link_to("/usr/lib/systemd/system/dsv41-guard.service",
            "/run/systemd/system/multi-user.target.wants/dsv41-guard.service");
    assert_string_equal(state_of(), "enabled-runtime");
    gone("/run/systemd/system/multi-user.target.wants/dsv41-guard.service");
    /* RequiredBy= and more than one target */
    put(UNIT, "[Install]\nWantedBy=a.target b.target\nRequiredBy=c.target\n");
    link_to(UNIT, "/etc/systemd/system/c.target.requires/dsv41-guard.service");
    assert_string_equal(state_of(), "enabled");
    gone("/etc/systemd/system/c.target.requires/dsv41-guard.service");
    link_to(UNIT, "/etc/systemd/system/b.target.wants/dsv41-guard.service");
    assert_string_equal(state_of(), "enabled");
    gone("/etc/systemd/system/b.target.wants/dsv41-guard.service");
    /* a WantedBy= outside [Install] is not one; none in it: static */
    put(UNIT, "[Service]\nWantedBy=x.target\n[Install]\n# WantedBy=y.target\n");
    assert_string_equal(state_of(), "static");
    /* links and aliases this does not follow: systemctl decides */
    put(UNIT, "[Install]\nWantedBy=multi-user.target\nAlias=g.service\n");
    assert_string_equal(state_of(), "(undecided)");
    put(UNIT, "[Install]\nWantedBy=%i.target\n");
    assert_string_equal(state_of(), "(undecided)");
    gone(UNIT);
    link_to("/opt/dsv41-guard.service", UNIT);
    assert_string_equal(state_of(), "(undecided)");
    link_to("/dev/null", UNIT);
    assert_string_equal(state_of(), "masked");
    gone(UNIT);
    /* the vendor directory, enabled from /etc; a generated one wins over both */
    put("/usr/lib/systemd/system/dsv41-guard.service", unit);
    assert_string_equal(state_of(), "disabled");
    link_to("/usr/lib/systemd/system/dsv41-guard.service", WANTS);
    assert_string_equal(state_of(), "enabled");
    put("/run/systemd/generator/dsv41-guard.service", unit);
    assert_string_equal(state_of(), "(undecided)"); /* it comes before the vendor's */
    gone("/run/systemd/generator/dsv41-guard.service");
    put("/run/systemd/transient/dsv41-guard.service", unit);
    assert_string_equal(state_of(), "(undecided)");
    gone("/run/systemd/transient/dsv41-guard.service");
    assert_string_equal(state_of(), "enabled");
}

static void cgroups_name_the_unit(void **st)
{
    (void)st;
    assert_true(units_cgroup_names("0::/system.slice/dsv41-guard.service\n", UNITS_GUARD));
    assert_true(units_cgroup_names("12:pids:/\n1:name=systemd:/system.slice/dsv41-guard.service\n"
                                   "0::/system.slice/dsv41-guard.service",
                                   UNITS_GUARD));
    assert_true(units_cgroup_names("0::/system.slice/dsv41-guard.service/sub\n", UNITS_GUARD));
    assert_false(units_cgroup_names("0::/user.slice/user-0.slice/session-3.scope\n", UNITS_GUARD));
    assert_false(units_cgroup_names("0::/system.slice/dsv41-guard.service-x\n", UNITS_GUARD));
    assert_false(units_cgroup_names("0::/system.slice/xdsv41-guard.service\n", UNITS_GUARD));
    assert_false(units_cgroup_names("/system.slice/dsv41-guard.service\n", UNITS_GUARD));
    assert_false(units_cgroup_names("", UNITS_GUARD));
}

/* The whole local answer: the account, systemd or not, the unit's words */
static void probes_the_local_node_from_files(void **st)
{
    (void)st;
    char bin[128], path[160], state[128];
    snprintf(bin, sizeof bin, "%s/bin", ROOT);
    mkdir(bin, 0755);
    char rm[160];
    snprintf(rm, sizeof rm, "rm -rf '%s/run/systemd/system'", ROOT); /* the test above made it */
    assert_int_equal(system(rm), 0);
    setenv("PATH", bin, 1); /* restore_path puts it back */
    struct units_state u;
    /* no systemctl on PATH: no systemd, as the script's `command -v` says */
    assert_int_equal(units_probe_local(ROOT, NULL, &u), 0);
    assert_true(u.known && !u.systemd);
    assert_string_equal(u.system, "");
    assert_true(u.user[0]);
    char d[200];
    units_describe(&u, d, sizeof d);
    assert_string_equal(d, "n/a (no systemd: no systemctl)");
    put("/bin/systemctl", "#!/bin/sh\n");
    snprintf(path, sizeof path, "%s/bin/systemctl", ROOT);
    chmod(path, 0755);
    /* systemctl, but systemd is not PID 1 (no /run/systemd/system) */
    assert_int_equal(units_probe_local(ROOT, NULL, &u), 0);
    assert_false(u.systemd);
    units_describe(&u, d, sizeof d);
    assert_string_equal(d, "n/a (no systemd: systemctl is-system-running says offline)");
    /* booted; the unit enabled (from the test above); its guard in its cgroup */
    put("/run/systemd/system/.keep", "");
    snprintf(state, sizeof state, "%s/state", ROOT);
    mkdir(state, 0700);
    assert_int_equal(units_probe_local(ROOT, state, &u), -1); /* no guard: failed? inactive? */
    char lock[768], pid[32], cg[96];
    guard_file(state, "lock", lock, sizeof lock);
    snprintf(pid, sizeof pid, "%ld systemd\n", (long)getpid());
    put(lock + strlen(ROOT), pid);
    snprintf(cg, sizeof cg, "/proc/%ld/cgroup", (long)getpid());
    put(cg, "0::/user.slice/session-1.scope\n");
    assert_int_equal(units_probe_local(ROOT, state, &u), -1); /* a guard, not the unit's */
    put(cg, "0::/system.slice/dsv41-guard.service\n");
    assert_int_equal(units_probe_local(ROOT, state, &u), 0);
    assert_true(u.systemd);
    assert_string_equal(u.system, UNITS_BOOTED);
    assert_string_equal(u.enabled, "enabled");
    assert_string_equal(u.active, "active");
    assert_true(units_guard_ok(&u));
    units_describe(&u, d, sizeof d);
    assert_string_equal(d, "enabled, active");
    /* no unit file at all: not-found, and it runs nothing */
    gone(WANTS);
    gone("/usr/lib/systemd/system/dsv41-guard.service");
    put(cg, "0::/user.slice\n");
    assert_int_equal(units_probe_local(ROOT, state, &u), 0);
    assert_string_equal(u.enabled, "not-found");
    assert_string_equal(u.active, "inactive");
    assert_false(units_guard_ok(&u));
}

static char *saved_path;

static int save_path(void **st)
{
    (void)st;
    const char *p = getenv("PATH");
    saved_path = strdup(p ? p : "/usr/bin:/bin");
    return saved_path ? 0 : -1;
}

static int restore_path(void **st)
{
    (void)st;
    setenv("PATH", saved_path, 1);
    free(saved_path);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ROOT);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_systemctl_answers),
        cmocka_unit_test(unit_files_decide_enabled),
        cmocka_unit_test(cgroups_name_the_unit),
        cmocka_unit_test_setup_teardown(probes_the_local_node_from_files, save_path,
                                        restore_path),
        cmocka_unit_test(no_systemd_is_na),
        cmocka_unit_test(hostile_answers_stay_in_their_field),
        cmocka_unit_test(quotes_for_systemd),
        cmocka_unit_test(renders_the_head_and_a_worker),
        cmocka_unit_test(refuses_what_a_unit_cannot_carry),
        cmocka_unit_test(the_template_passes_systemd_analyze),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
