/* units: see units.h. */
#include "units.h"

#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "account.h"
#include "dirs.h"
#include "fixstr.h"
#include "guard.h"
#include "guards.h"
#include "helper.h"
#include "text.h"

#define GUARD_BIN "dsv41-guard"

static void word(char *dst, size_t sz, const char *v, size_t n)
{
    text_clean(dst, sz, v, n);
    dst[strcspn(dst, " \t")] = '\0';
}

void units_parse_state(const char *text, size_t len, struct units_state *st)
{
    memset(st, 0, sizeof *st);
    st->known = true;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        static const struct {
            const char *key;
            size_t off, sz;
        } keys[] = {
            {"system=", offsetof(struct units_state, system), sizeof st->system},
            {"enabled=", offsetof(struct units_state, enabled), sizeof st->enabled},
            {"active=", offsetof(struct units_state, active), sizeof st->active},
            {"user=", offsetof(struct units_state, user), sizeof st->user},
        };
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            size_t kl = strlen(keys[k].key);
            if (n >= kl && memcmp(p, keys[k].key, kl) == 0)
                word((char *)st + keys[k].off, keys[k].sz, p + kl, n - kl);
        }
        p += n + 1;
    }
    /* without systemd as PID 1, systemctl says "offline" (and reads unit
     * files all the same: is-enabled would answer, but nothing starts them) */
    st->systemd = st->system[0] && strcmp(st->system, "offline") != 0 &&
                  strcmp(st->system, "unknown") != 0;
    if (st->systemd && !st->enabled[0]) /* is-enabled of a unit that is not there prints nothing */
        snprintf(st->enabled, sizeof st->enabled, "not-found");
}

bool units_guard_ok(const struct units_state *st)
{
    return st->known && st->systemd && strcmp(st->enabled, "enabled") == 0 &&
           strcmp(st->active, "active") == 0;
}

void units_describe(const struct units_state *st, char *out, size_t sz)
{
    if (!st->known)
        snprintf(out, sz, "n/a (not asked)");
    else if (!st->systemd)
        snprintf(out, sz, "n/a (no systemd: %s)",
                 st->system[0] ? "systemctl is-system-running says offline" : "no systemctl");
    else
        snprintf(out, sz, "%s, %s", st->enabled, st->active[0] ? st->active : "n/a");
}

int units_probe(struct cluster_node *cn, struct units_state *st, struct buf *err)
{
    return units_probe_in(cn, NULL, NULL, st, err);
}

int units_probe_in(struct cluster_node *cn, const char *state_dir, const atomic_int *cancel,
                   struct units_state *st, struct buf *err)
{
    memset(st, 0, sizeof *st);
    if (cn->node.local && units_probe_local("", state_dir, st) == 0)
        return 0;
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "printf 'user=%s\\n' \"$(id -un 2>/dev/null)\"\n"
                       "command -v systemctl >/dev/null 2>&1 || exit 0\n"
                       "printf 'system=%s\\n' \"$(systemctl is-system-running 2>/dev/null)\"\n"
                       "printf 'enabled=%s\\n' \"$(systemctl is-enabled \"$1\" 2>/dev/null)\"\n"
                       "printf 'active=%s\\n' \"$(systemctl is-active \"$1\" 2>/dev/null)\"\n");
    shcmd_arg(&cmd, UNITS_GUARD);
    struct ssh_result res;
    int rc = node_run_cancel(&cn->node, &cmd, 15000, cancel, &res, err);
    shcmd_free(&cmd);
    if (rc < 0)
        return -1;
    units_parse_state(buf_str(&res.out), res.out.len, st);
    ssh_result_free(&res);
    return 0;
}

int units_quote(struct buf *b, const char *w, bool exec_line)
{
    if (buf_puts(b, "\"") < 0)
        return -1;
    for (const char *p = w; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch == 0x7f)
            return -1;
        const char *rep = ch == '\\' ? "\\\\" : ch == '"' ? "\\\"" : ch == '%' ? "%%"
                          : ch == '$' && exec_line ? "$$" : NULL;
        if (rep ? buf_puts(b, rep) < 0 : buf_append(b, p, 1) < 0)
            return -1;
    }
    return buf_puts(b, "\"");
}

static bool plain(const char *v)
{
    for (const char *p = v; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= ' ' || ch == 0x7f || strchr("\"'\\%$;`", ch))
            return false;
    }
    return true;
}

/* The placeholders replaced; -1 for one that is unknown or a value that is
 * not plain. */
static int substitute(const char *tmpl, const char *const (*vals)[2], int nvals, struct buf *out,
                      struct buf *err)
{
    for (int k = 0; k < nvals; k++)
        if (!plain(vals[k][1])) {
            char shown[200];
            text_clean(shown, sizeof shown, vals[k][1], strlen(vals[k][1]));
            buf_printf(err, "%s '%s' cannot go into a unit file as it is (blanks, quotes, '\\', "
                            "'%%', '$' or control characters): choose a plainer path or name",
                       vals[k][0], shown);
            return -1;
        }
    for (const char *p = tmpl; *p;) {
        /* a comment line stays the template's words: the header that lists
         * the placeholders would otherwise read "root   the operator" */
        if ((p == tmpl || p[-1] == '\n') && (*p == '#' || *p == ';')) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
            buf_append(out, p, len);
            p += len;
            continue;
        }
        const char *at = strchr(p, '@');
        const char *nl = strchr(p, '\n');
        if (!at)
            return buf_puts(out, p);
        if (nl && nl < at) {
            /* the next line may be a comment */
            buf_append(out, p, (size_t)(nl - p) + 1);
            p = nl + 1;
            continue;
        }
        buf_append(out, p, (size_t)(at - p));
        size_t n = strspn(at + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
        if (n == 0 || at[1 + n] != '@') {
            buf_append(out, at, 1);
            p = at + 1;
            continue;
        }
        int k = 0;
        while (k < nvals && (strlen(vals[k][0]) != n || memcmp(vals[k][0], at + 1, n) != 0))
            k++;
        if (k == nvals) {
            buf_printf(err, "the unit template has @%.*s@, which nothing fills in", (int)n,
                       at + 1);
            return -1;
        }
        buf_puts(out, vals[k][1]);
        p = at + n + 2;
    }
    return 0;
}

static bool starts(const char *line, size_t n, const char *prefix)
{
    size_t pl = strlen(prefix);
    return n >= pl && memcmp(line, prefix, pl) == 0;
}

int units_render(const char *tmpl, const char *const (*vals)[2], int nvals,
                 const struct strv *exec, const struct strv *extra_env, struct buf *out,
                 struct buf *err)
{
    struct buf sub = BUF_INIT;
    if (substitute(tmpl, vals, nvals, &sub, err) < 0) {
        buf_free(&sub);
        return -1;
    }
    int rc = 0;
    bool had_exec = false;
    for (const char *p = buf_str(&sub); *p && rc == 0;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (exec && starts(p, n, "ExecStart=")) {
            had_exec = true;
            buf_puts(out, "ExecStart=");
            for (int k = 0; k < exec->n && rc == 0; k++) {
                /* systemd wants the program's path as a plain absolute path */
                if (k == 0 && (exec->v[0][0] != '/' || !plain(exec->v[0])))
                    rc = -1;
                else
                    rc = k == 0 ? buf_puts(out, exec->v[0]) : units_quote(out, exec->v[k], true);
                if (k + 1 < exec->n)
                    buf_puts(out, " ");
            }
            if (rc < 0)
                buf_printf(err, "the guard's command line cannot go into a unit file (a path "
                                "that is not absolute and plain, or a control character)");
            buf_puts(out, "\n");
        } else if (exec && starts(p, n, "Environment=DSV41_CONFIG=")) {
            /* a worker's static guard reads flags, not a config file */
        } else {
            buf_append(out, p, n);
            buf_puts(out, "\n");
            if (extra_env && starts(p, n, "Environment=STATE_DIR="))
                for (int k = 0; k < extra_env->n && rc == 0; k++) {
                    buf_puts(out, "Environment=");
                    rc = units_quote(out, extra_env->v[k], false);
                    buf_puts(out, "\n");
                    if (rc < 0)
                        buf_printf(err, "%.*s has a control character: a unit file is lines",
                                   (int)strcspn(extra_env->v[k], "="), extra_env->v[k]);
                }
        }
        p += n + (nl ? 1 : 0);
    }
    if (rc == 0 && exec && !had_exec) {
        buf_puts(err, "the unit template has no ExecStart= line");
        rc = -1;
    }
    buf_free(&sub);
    return rc;
}

int units_template(const char *name, struct buf *out, struct buf *why)
{
    char self[PATH_MAX];
    if (dirs_exe_dir(self, sizeof self) < 0) {
        buf_puts(why, "cannot find the running binary");
        return -1;
    }
    /* installed (PREFIX/bin -> PREFIX/share), the source tree's copy at its
     * root, the build directory */
    static const char *const rel[] = {"/../share/dsv41-top/systemd/", "/dist/systemd/",
                                      "/../dist/systemd/"};
    for (size_t k = 0; k < sizeof rel / sizeof *rel; k++) {
        struct buf path = BUF_INIT;
        buf_printf(&path, "%s%s%s", self, rel[k], name);
        buf_reset(out);
        int rc = buf_read_file(out, buf_str(&path), 1u << 20);
        buf_free(&path);
        if (rc == 0)
            return 0;
    }
    buf_printf(why, "%s not found in %s/../share/dsv41-top/systemd (make install puts it there) "
                    "or the source tree's dist/systemd",
               name, self);
    return -1;
}

/* The guard settings the operator gave in the environment or with --set:
 * a unit's environment is systemd's, so they are written into it (those
 * from the config file come from DSV41_CONFIG). */
static void env_settings(const struct config *c, struct strv *env)
{
    static const char *const keys[] = {"RUNTIME",           "WORKERS",
                                       "MEMGUARD_GIB",      "MEMGUARD_WARN_GIB",
                                       "MEMGUARD_PSI_WARN", "MEMGUARD_PSI_KILL",
                                       "MEMGUARD_FRAG_WARN", "MEMGUARD_KMSG_WARN",
                                       "DSV41_PROC_ROOT"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        for (int i = 0; i < c->count; i++)
            if (strcmp(c->values[i].key, keys[k]) == 0 &&
                (c->values[i].source == CONFIG_SRC_ENV || c->values[i].source == CONFIG_SRC_FLAG))
                strv_addf(env, "%s=%s", keys[k], c->values[i].value);
}

/* The unit's text for node cn. */
static int unit_text(const struct config *c, struct cluster *cl, struct cluster_node *cn,
                     const char *state_dir, const char *user, const char *guard_path,
                     struct buf *text, struct buf *err)
{
    struct buf tmpl = BUF_INIT;
    if (units_template(UNITS_GUARD, &tmpl, err) < 0) {
        buf_free(&tmpl);
        return -1;
    }
    char self[PATH_MAX] = "";
    if (dirs_exe_dir(self, sizeof self) < 0)
        self[0] = '\0';
    /* the head runs dsv41-top from where it is now; a worker the static
     * guard in STATE_DIR/bin */
    char bindir[PATH_MAX + 8];
    if (cn->node.local)
        snprintf(bindir, sizeof bindir, "%s", self);
    else
        snprintf(bindir, sizeof bindir, "%s/bin", state_dir);
    const char *const vals[][2] = {
        {"BINDIR", bindir},
        {"USER", user},
        {"CONFIG", c->file ? c->file : ""},
        {"STATE_DIR", state_dir},
    };
    struct strv exec = STRV_INIT, env = STRV_INIT;
    if (!cn->node.local) {
        strv_add(&exec, guard_path);
        strv_add(&exec, "--state-dir");
        strv_add(&exec, state_dir);
        guards_args(c, cn, cl->n, &exec);
    } else {
        env_settings(c, &env);
    }
    int rc = units_render(buf_str(&tmpl), vals, 4, cn->node.local ? NULL : &exec, &env, text, err);
    strv_free(&exec);
    strv_free(&env);
    buf_free(&tmpl);
    return rc;
}

int units_head_text(const struct config *c, const char *unit, struct buf *text, struct buf *err)
{
    struct buf tmpl = BUF_INIT;
    char self[PATH_MAX], user[64], home[PATH_MAX];
    int rc = -1;
    if (units_template(unit, &tmpl, err) < 0)
        goto out;
    if (dirs_exe_dir(self, sizeof self) < 0 ||
        account_lookup(geteuid(), user, sizeof user, home, sizeof home) < 0) {
        buf_puts(err, "cannot tell the running binary's directory or this account's name");
        goto out;
    }
    struct buf cfg = BUF_INIT;
    if (c->file)
        buf_puts(&cfg, c->file);
    else
        config_default_path(&cfg);
    const char *const vals[][2] = {
        {"BINDIR", self},
        {"USER", user},
        {"CONFIG", buf_str(&cfg)},
        {"STATE_DIR", config_str(c, CFG_STATE_DIR)},
    };
    /* what the environment or --set gave: the unit's environment is
     * systemd's. A unit file is world-readable: never a secret, nor what
     * only launch reads and may carry one (EXTRA_ENV, EXTRA, VLLM_CMD);
     * a URL with a password in it is refused, named */
    struct strv env = STRV_INIT;
    bool refused = false;
    for (int i = 0; i < c->count && !refused; i++) {
        const struct config_value *v = &c->values[i];
        if ((v->source != CONFIG_SRC_ENV && v->source != CONFIG_SRC_FLAG) ||
            config_is_secret(v->key) || strcmp(v->key, "STATE_DIR") == 0 ||
            strcmp(v->key, "EXTRA_ENV") == 0 || strcmp(v->key, "EXTRA") == 0 ||
            strcmp(v->key, "VLLM_CMD") == 0)
            continue;
        const char *at = strchr(v->value, '@'), *scheme = strstr(v->value, "://");
        if (scheme && at && at > scheme && memchr(scheme + 3, ':', (size_t)(at - scheme - 3))) {
            buf_printf(err, "%s holds a URL with a password: a unit file is world-readable; put "
                            "it in the config file (DSV41_CONFIG, mode 0600) instead",
                       v->key);
            refused = true;
            continue;
        }
        strv_addf(&env, "%s=%s", v->key, v->value);
    }
    rc = refused ? -1 : units_render(buf_str(&tmpl), vals, 4, NULL, &env, text, err);
    strv_free(&env);
    buf_free(&cfg);
out:
    buf_free(&tmpl);
    return rc;
}

/* Writes the unit, stops a daemon guard, enables and (re)starts the unit,
 * and waits for its guard's first heartbeat; its last line in said. */
static int install_script(struct cluster_node *cn, const struct config *c, const char *tmp,
                          const char *guard_path, const char *state_dir, struct buf *said,
                          struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd,
                 "tmp=$1 dir=$2 unit=$3 guard=$4 state=$5\n"
                 "asroot() { if [ \"$(id -u)\" = 0 ]; then \"$@\"; else sudo -n \"$@\"; fi; }\n"
                 "if [ \"$(id -u)\" != 0 ] && ! sudo -n true 2>/dev/null; then\n"
                 "  rm -f -- \"$tmp\"; echo needs-root; exit 3\n"
                 "fi\n"
                 "same=no; cmp -s -- \"$tmp\" \"$dir/$unit\" && same=yes\n"
                 "if ! asroot install -m 0644 -- \"$tmp\" \"$dir/$unit\" 2>&1; then\n"
                 "  rm -f -- \"$tmp\"; echo \"cannot write $dir/$unit\"; exit 4\n"
                 "fi\n"
                 "rm -f -- \"$tmp\"\n"
                 "if [ $same = no ]; then asroot systemctl daemon-reload 2>&1 || exit 5; fi\n"
                 /* a daemon guard holds the lock the unit's guard needs (a
                  * guard the unit runs says it stays) */
                 "\"$guard\" --state-dir \"$state\" --stop >/dev/null 2>&1\n"
                 "asroot systemctl enable \"$unit\" 2>&1 || exit 6\n"
                 "if [ $same = no ]; then verb=restart; else verb=start; fi\n"
                 "asroot systemctl \"$verb\" \"$unit\" 2>&1 || exit 7\n"
                 "i=0\n"
                 "while [ $i -lt 100 ]; do\n"
                 "  \"$guard\" --state-dir \"$state\" --status 2>/dev/null && exit 0\n"
                 "  sleep 0.1; i=$((i + 1))\n"
                 "done\n"
                 "echo \"its guard wrote no heartbeat within 10 s (journalctl -u $unit)\"; exit 8\n");
    shcmd_arg(&cmd, tmp);
    shcmd_arg(&cmd, config_str(c, CFG_UNIT_DIR));
    shcmd_arg(&cmd, UNITS_GUARD);
    shcmd_arg(&cmd, guard_path);
    shcmd_arg(&cmd, state_dir);
    struct ssh_result res;
    int rc = node_run(&cn->node, &cmd, 60000, &res, err);
    shcmd_free(&cmd);
    if (rc < 0)
        return -1;
    /* the last line: the heartbeat, or why it failed */
    const char *o = buf_str(&res.out);
    size_t len = res.out.len;
    while (len && o[len - 1] == '\n')
        len--;
    size_t start = len;
    while (start && o[start - 1] != '\n')
        start--;
    text_one_line(said, o + start, len - start, 300);
    rc = res.exit_status;
    ssh_result_free(&res);
    return rc;
}

enum units_result units_install_node(const struct config *c, struct cluster *cl, int i,
                                     const char *state_dir, FILE *out)
{
    struct cluster_node *cn = &cl->nodes[i];
    struct units_state st;
    struct buf err = BUF_INIT, bin = BUF_INIT, gpath = BUF_INIT, text = BUF_INIT, tmp = BUF_INIT,
               said = BUF_INIT;
    enum units_result res = UNITS_FAILED;
    if (units_probe(cn, &st, &err) < 0) {
        fprintf(out, "%s: cannot ask for systemd: %s\n", cn->name, buf_str(&err));
        goto out;
    }
    if (!st.systemd) {
        fprintf(out,
                "%s: no systemd runs this node (%s): %s is not installed; the memory guard "
                "runs as `guard --daemon` (launch starts it) and does not come back after a "
                "reboot\n",
                cn->name, st.system[0] ? "systemctl is-system-running: offline" : "no systemctl",
                UNITS_GUARD);
        res = UNITS_NO_SYSTEMD;
        goto out;
    }
    if (!st.user[0]) {
        fprintf(out, "%s: cannot tell the account (id -un printed nothing)\n", cn->name);
        goto out;
    }
    /* the static guard on every node: the worker's unit runs it, and on any
     * node it stops a daemon guard that holds the lock */
    if (helper_read(GUARD_BIN, &bin, &err) < 0 ||
        helper_install(cn, state_dir, GUARD_BIN, &bin, &gpath, &err) < 0) {
        fprintf(out, "%s: cannot install %s: %s\n", cn->name, GUARD_BIN, buf_str(&err));
        goto out;
    }
    if (unit_text(c, cl, cn, state_dir, st.user, buf_str(&gpath), &text, &err) < 0) {
        fprintf(out, "%s: cannot write %s: %s\n", cn->name, UNITS_GUARD, buf_str(&err));
        goto out;
    }
    buf_printf(&tmp, "%s/%s.new", state_dir, UNITS_GUARD);
    if (node_put(&cn->node, buf_str(&tmp), buf_str(&text), text.len, 0644, &err) < 0) {
        fprintf(out, "%s: %s\n", cn->name, buf_str(&err));
        goto out;
    }
    int rc = install_script(cn, c, buf_str(&tmp), buf_str(&gpath), state_dir, &said, &err);
    if (rc == 0) {
        fprintf(out, "%s: %s enabled and running as %s: %s\n", cn->name, UNITS_GUARD, st.user,
                buf_str(&said));
        res = UNITS_RUNNING;
    } else if (rc == 3) {
        fprintf(out,
                "%s: installing %s needs root on %s: give %s passwordless sudo there (sudo -n), "
                "or reach it as root; until then the memory guard runs as `guard --daemon` "
                "(launch starts it)\n",
                cn->name, UNITS_GUARD, cn->name, st.user);
    } else if (rc < 0) {
        fprintf(out, "%s: %s\n", cn->name, buf_str(&err));
    } else {
        fprintf(out, "%s: cannot install %s (step %d): %s\n", cn->name, UNITS_GUARD, rc,
                buf_str(&said));
    }
out:
    buf_free(&err);
    buf_free(&bin);
    buf_free(&gpath);
    buf_free(&text);
    buf_free(&tmp);
    buf_free(&said);
    return res;
}

int units_install(const struct config *c, struct cluster *cl, char (*state_dirs)[512], FILE *out)
{
    int bad = 0;
    for (int i = 0; i < cl->n; i++)
        if (cl->nodes[i].configured)
            bad += units_install_node(c, cl, i, state_dirs[i], out) == UNITS_FAILED;
    return bad;
}

/* ---- on the local node, without a process ---- */

/* units on the local node without systemctl: what units_probe's script
 * prints, decided from files where files decide it exactly (sd_booted()'s
 * test, the unit file and its .wants/ links, the guard's lock and its
 * cgroup); where they do not, the caller asks systemctl. See units.h. */

static bool is_dir(const char *root, const char *path)
{
    char p[PATH_MAX];
    struct stat st;
    return (size_t)snprintf(p, sizeof p, "%s%s", root, path) < sizeof p && stat(p, &st) == 0 &&
           S_ISDIR(st.st_mode);
}

/* systemctl on PATH, as `command -v` finds it. */
static bool have_systemctl(void)
{
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        char f[PATH_MAX];
        if (n && (size_t)snprintf(f, sizeof f, "%.*s/systemctl", (int)n, p) < sizeof f &&
            access(f, X_OK) == 0)
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/* systemd's unit search path, highest priority first; kind: 'c' config a
 * unit may be enabled in, 'r' runtime, 'v' vendor, 'x' one whose units
 * files cannot judge (generated, transient). */
static const struct {
    const char *dir;
    char kind;
} SEARCH[] = {
    {"/etc/systemd/system.control", 'x'}, {"/run/systemd/system.control", 'x'},
    {"/run/systemd/transient", 'x'},      {"/run/systemd/generator.early", 'x'},
    {"/etc/systemd/system", 'c'},         {"/etc/systemd/system.attached", 'x'},
    {"/run/systemd/system", 'r'},         {"/run/systemd/system.attached", 'x'},
    {"/run/systemd/generator", 'x'},      {"/usr/local/lib/systemd/system", 'v'},
    {"/usr/lib/systemd/system", 'v'},     {"/lib/systemd/system", 'v'},
    {"/run/systemd/generator.late", 'x'},
};

/* The targets of the unit's [Install] WantedBy=/RequiredBy= into wants
 * (each "T.wants" or "T.requires", space-separated); -1 for Alias= or
 * Also= (links this does not follow); 0 with wants "" for none (static). */
static int install_section(const char *text, char *wants, size_t sz)
{
    wants[0] = '\0';
    bool in = false;
    size_t used = 0;
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), l);
        l += n + (l[n] == '\n');
        char *s = line + strspn(line, " \t");
        s[strcspn(s, "\r")] = '\0';
        if (*s == '[') {
            in = strncmp(s, "[Install]", 9) == 0;
            continue;
        }
        if (!in || *s == '#' || *s == ';')
            continue;
        if (strncmp(s, "Alias=", 6) == 0 || strncmp(s, "Also=", 5) == 0 ||
            strncmp(s, "DefaultInstance=", 16) == 0)
            return -1;
        const char *suffix = strncmp(s, "WantedBy=", 9) == 0     ? ".wants"
                             : strncmp(s, "RequiredBy=", 11) == 0 ? ".requires"
                                                                  : NULL;
        if (!suffix)
            continue;
        for (char *w = strchr(s, '=') + 1; *w;) {
            w += strspn(w, " \t");
            size_t wl = strcspn(w, " \t");
            if (wl && strchr(w, '%') == NULL && used + wl + 12 < sz)
                fixstr_appendf(wants, sz, &used, "%s%.*s%s", used ? " " : "", (int)wl, w, suffix);
            else if (wl)
                return -1; /* a specifier or too many: not judged here */
            w += wl;
        }
    }
    return 0;
}

/* A link named unit in DIR/T.wants/ for some T in wants. */
static bool wanted_in(const char *root, const char *dir, const char *wants, const char *unit)
{
    for (const char *w = wants; *w;) {
        size_t n = strcspn(w, " ");
        char p[PATH_MAX];
        struct stat st;
        if ((size_t)snprintf(p, sizeof p, "%s%s/%.*s/%s", root, dir, (int)n, w, unit) < sizeof p &&
            lstat(p, &st) == 0)
            return true;
        w += n + (w[n] == ' ');
    }
    return false;
}

int units_file_state(const char *root, const char *unit, char *out, size_t sz)
{
    out[0] = '\0';
    for (size_t k = 0; k < sizeof SEARCH / sizeof *SEARCH; k++) {
        char p[PATH_MAX];
        struct stat ls;
        if ((size_t)snprintf(p, sizeof p, "%s%s/%s", root, SEARCH[k].dir, unit) >= sizeof p)
            return -1;
        if (lstat(p, &ls) < 0)
            continue;
        if (SEARCH[k].kind == 'x')
            return -1; /* generated or transient: systemctl knows */
        if (S_ISLNK(ls.st_mode)) {
            char to[PATH_MAX];
            ssize_t n = readlink(p, to, sizeof to - 1);
            if (n > 0 && (to[n] = '\0', strcmp(to, "/dev/null") == 0)) {
                snprintf(out, sz, "%s", SEARCH[k].kind == 'r' ? "masked-runtime" : "masked");
                return 0;
            }
            return -1; /* linked or an alias */
        }
        struct buf text = BUF_INIT;
        char wants[512];
        int rc = S_ISREG(ls.st_mode) && buf_read_file(&text, p, 1u << 20) == 0
                     ? install_section(buf_str(&text), wants, sizeof wants)
                     : -1;
        buf_free(&text);
        if (rc < 0)
            return -1;
        if (!wants[0])
            snprintf(out, sz, "static");
        else if (wanted_in(root, "/etc/systemd/system", wants, unit))
            snprintf(out, sz, "enabled");
        else if (wanted_in(root, "/run/systemd/system", wants, unit))
            snprintf(out, sz, "enabled-runtime");
        else
            snprintf(out, sz, "disabled");
        return 0;
    }
    /* no unit file: is-enabled prints nothing (units_parse_state's not-found) */
    return 0;
}

bool units_cgroup_names(const char *text, const char *unit)
{
    size_t ul = strlen(unit);
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        /* "0::/system.slice/UNIT" (v2), "1:name=systemd:/system.slice/UNIT" (v1) */
        const char *c1 = memchr(l, ':', n);
        const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l)) : NULL;
        if (c2) {
            const char *path = c2 + 1, *end = l + n;
            for (const char *s = path; s + ul + 1 <= end; s++)
                if (*s == '/' && memcmp(s + 1, unit, ul) == 0 &&
                    (s + 1 + ul == end || s[1 + ul] == '/'))
                    return true;
        }
        l += n + (l[n] == '\n');
    }
    return false;
}

/* "active" when the guard that holds state_dir's lock lives in the unit's
 * cgroup; -1 when that does not decide it. */
static int active_state(const char *root, const char *state_dir, const char *enabled, char *out,
                        size_t sz)
{
    if (state_dir && state_dir[0]) {
        char lock[768];
        guard_file(state_dir, "lock", lock, sizeof lock);
        struct buf b = BUF_INIT, cg = BUF_INIT;
        long pid = buf_read_file(&b, lock, 64) == 0 ? atol(buf_str(&b)) : -1;
        char p[PATH_MAX];
        bool in = pid > 0 &&
                  (size_t)snprintf(p, sizeof p, "%s/proc/%ld/cgroup", root, pid) < sizeof p &&
                  buf_read_file(&cg, p, 1u << 16) == 0 &&
                  units_cgroup_names(buf_str(&cg), UNITS_GUARD);
        buf_free(&b);
        buf_free(&cg);
        if (in) {
            snprintf(out, sz, "active");
            return 0;
        }
    }
    /* a unit with no file anywhere runs nothing (transient ones were
     * left to systemctl); any other may be failed, activating, inactive */
    if (!enabled[0]) {
        snprintf(out, sz, "inactive");
        return 0;
    }
    return -1;
}

int units_probe_local(const char *root, const char *state_dir, struct units_state *st)
{
    struct buf t = BUF_INIT;
    char user[256] = "";
    account_lookup(geteuid(), user, sizeof user, NULL, 0);
    buf_printf(&t, "user=%s\n", user);
    int rc = 0;
    if (have_systemctl()) {
        /* sd_booted(): systemd is PID 1 when this directory is there */
        if (!is_dir(root, "/run/systemd/system")) {
            buf_puts(&t, "system=offline\n");
        } else {
            char en[24], act[24];
            rc = units_file_state(root, UNITS_GUARD, en, sizeof en);
            if (rc == 0)
                rc = active_state(root, state_dir, en, act, sizeof act);
            if (rc == 0)
                buf_printf(&t, "system=%s\nenabled=%s\nactive=%s\n", UNITS_BOOTED, en, act);
        }
    }
    if (rc == 0)
        units_parse_state(buf_str(&t), t.len, st);
    buf_free(&t);
    return rc;
}
