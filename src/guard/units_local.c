/* units on the local node without systemctl: what units_probe's script
 * prints, decided from files where files decide it exactly (sd_booted()'s
 * test, the unit file and its .wants/ links, the guard's lock and its
 * cgroup); where they do not, the caller asks systemctl. See units.h. */
#include "units.h"
#include "account.h"

#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"

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
                used += (size_t)snprintf(wants + used, sz - used, "%s%.*s%s", used ? " " : "",
                                         (int)wl, w, suffix);
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
