#include "theme.h"

#include "buf.h"
#include "dirs.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const ROLES[ROLE_COUNT] = {
    "normal", "header", "title", "title_focus", "dim",    "good",   "warn",
    "bad",    "gauge",  "graph", "status",      "search", "errline", "banner"};

static const char *const COLORS[] = {"black", "red",     "green", "yellow",
                                     "blue",  "magenta", "cyan",  "white"};

const char *theme_role_name(enum theme_role r)
{
    return r < ROLE_COUNT ? ROLES[r] : "?";
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static int parse_color(const char *w, short *out)
{
    if (strcasecmp(w, "default") == 0) {
        *out = -1;
        return 0;
    }
    bool bright = strncasecmp(w, "bright-", 7) == 0;
    const char *base = bright ? w + 7 : w;
    for (int i = 0; i < 8; i++)
        if (strcasecmp(base, COLORS[i]) == 0) {
            *out = (short)(i + (bright ? 8 : 0));
            return 0;
        }
    char *end;
    long v = strtol(w, &end, 10);
    if (*w && !*end && v >= 0 && v <= 255) {
        *out = (short)v;
        return 0;
    }
    return -1;
}

static int parse_attr(const char *w, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } A[] = {{"bold", THEME_BOLD}, {"dim", THEME_DIM}, {"reverse", THEME_REVERSE},
             {"underline", THEME_UNDERLINE}};
    for (size_t i = 0; i < sizeof A / sizeof *A; i++)
        if (strcasecmp(w, A[i].name) == 0) {
            *out |= A[i].bit;
            return 0;
        }
    return -1;
}

void theme_mono(struct theme *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "mono");
    for (int r = 0; r < ROLE_COUNT; r++)
        t->role[r] = (struct theme_style){-1, -1, 0};
    t->role[ROLE_HEADER].attrs = THEME_REVERSE;
    t->role[ROLE_TITLE].attrs = THEME_BOLD | THEME_UNDERLINE;
    t->role[ROLE_TITLE_FOCUS].attrs = THEME_REVERSE | THEME_BOLD;
    t->role[ROLE_DIM].attrs = THEME_DIM;
    t->role[ROLE_BAD].attrs = THEME_BOLD;
    t->role[ROLE_WARN].attrs = THEME_UNDERLINE;
    t->role[ROLE_STATUS].attrs = THEME_REVERSE;
    t->role[ROLE_SEARCH].attrs = THEME_REVERSE;
    t->role[ROLE_ERRLINE].attrs = THEME_BOLD;
    t->role[ROLE_BANNER].attrs = THEME_REVERSE | THEME_BOLD;
}

int theme_parse(const char *text, const char *file, struct theme *t, char *err, size_t errsz)
{
    theme_mono(t);
    bool seen[ROLE_COUNT] = {false};
    int lineno = 0;
    const char *p = text;
    while (*p) {
        lineno++;
        size_t n = strcspn(p, "\n");
        char line[512];
        if (n >= sizeof line) {
            snprintf(err, errsz, "%s:%d: line too long", file, lineno);
            return -1;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (p[n] == '\n');
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line);
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errsz, "%s:%d: expected ROLE = FG, BG[, ATTR...]", file, lineno);
            return -1;
        }
        *eq = '\0';
        char *role = trim(s);
        int r = -1;
        for (int k = 0; k < ROLE_COUNT; k++)
            if (strcmp(role, ROLES[k]) == 0)
                r = k;
        if (r < 0) {
            snprintf(err, errsz, "%s:%d: unknown role '%.40s'", file, lineno, role);
            return -1;
        }
        if (seen[r]) {
            snprintf(err, errsz, "%s:%d: role '%s' given twice", file, lineno, ROLES[r]);
            return -1;
        }
        seen[r] = true;
        struct theme_style st = {-1, -1, 0};
        char *save = NULL;
        int field = 0;
        for (char *w = strtok_r(eq + 1, ",", &save); w; w = strtok_r(NULL, ",", &save), field++) {
            w = trim(w);
            int bad = field == 0 ? parse_color(w, &st.fg)
                      : field == 1 ? parse_color(w, &st.bg)
                                   : parse_attr(w, &st.attrs);
            if (bad) {
                snprintf(err, errsz, "%s:%d: '%.40s' is not %s", file, lineno, w,
                         field < 2 ? "a colour (default, red, bright-red, 0-255)"
                                   : "an attribute (bold, dim, reverse, underline)");
                return -1;
            }
        }
        if (field < 2) {
            snprintf(err, errsz, "%s:%d: '%s' needs a foreground and a background", file, lineno,
                     ROLES[r]);
            return -1;
        }
        t->role[r] = st;
    }
    return 0;
}

/* The directories searched, in order. */
static int theme_dirs(char dirs[4][PATH_MAX])
{
    int n = 0;
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(dirs[n++], PATH_MAX, "%.4000s/dsv41-top/themes", xdg);
    else if (home && *home)
        snprintf(dirs[n++], PATH_MAX, "%.4000s/.config/dsv41-top/themes", home);
    char self[PATH_MAX];
    if (dirs_exe_dir(self, sizeof self) == 0) {
        snprintf(dirs[n++], PATH_MAX, "%.4000s/themes", self);          /* ./dsv41-top */
        snprintf(dirs[n++], PATH_MAX, "%.4000s/../themes", self);       /* build/dsv41-top */
        snprintf(dirs[n++], PATH_MAX, "%.4000s/../share/dsv41-top/themes", self); /* installed */
    }
    return n;
}

int theme_find(const char *name, char *path, size_t sz)
{
    if (!*name || strchr(name, '/'))
        return -1;
    char dirs[4][PATH_MAX];
    int n = theme_dirs(dirs);
    for (int i = 0; i < n; i++) {
        snprintf(path, sz, "%.3000s/%.60s.theme", dirs[i], name);
        if (access(path, R_OK) == 0)
            return 0;
    }
    return -1;
}

int theme_load(const char *name, struct theme *t, char *err, size_t errsz)
{
    char path[PATH_MAX];
    if (theme_find(name, path, sizeof path) < 0) {
        snprintf(err, errsz, "theme '%.60s' not found (looked in $XDG_CONFIG_HOME/dsv41-top/themes "
                             "and beside the program)", name);
        return -1;
    }
    struct buf text = BUF_INIT;
    if (buf_read_file(&text, path, 16383) < 0) {
        buf_free(&text);
        snprintf(err, errsz, "%.200s: cannot read", path);
        return -1;
    }
    int rc = theme_parse(buf_str(&text), path, t, err, errsz);
    buf_free(&text);
    if (rc < 0)
        return -1;
    snprintf(t->name, sizeof t->name, "%s", name);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

int theme_list(char names[][64], int max)
{
    char dirs[4][PATH_MAX];
    int nd = theme_dirs(dirs), n = 0;
    for (int i = 0; i < nd; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) && n < max) {
            size_t l = strlen(e->d_name);
            if (l <= 6 || l - 6 >= 64 || strcmp(e->d_name + l - 6, ".theme") != 0)
                continue;
            char nm[64];
            snprintf(nm, sizeof nm, "%.*s", (int)(l - 6), e->d_name);
            bool dup = false;
            for (int k = 0; k < n; k++)
                dup |= strcmp(names[k], nm) == 0;
            if (!dup)
                snprintf(names[n++], 64, "%s", nm);
        }
        if (d)
            closedir(d);
    }
    qsort(names, (size_t)n, 64, cmp_name);
    return n;
}
