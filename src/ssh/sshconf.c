#include "sshconf.h"

#include "account.h"
#include "fixstr.h"

#include <ctype.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_DEPTH 16 /* OpenSSH's READCONF_MAX_DEPTH */

/* Each thread its own copy: resolutions run on several nodes' threads. */
static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    static _Thread_local char home[PATH_MAX];
    return account_lookup(getuid(), NULL, 0, home, sizeof home) == 0 ? home : "/";
}

static const char *local_user(void)
{
    static _Thread_local char name[64]; /* ssh_target's user field */
    return account_lookup(getuid(), name, sizeof name, NULL, 0) == 0 ? name : "root";
}

/* What one resolution collects; the first value of a key wins. */
struct parse {
    struct ssh_target *t;
    struct buf *err;
    char hostname[256], user[64];
    int port;
    bool jump_set, ids_only_set;
    struct buf noted; /* keys already named in notes: said once */
};

/* Expands ~ and the tokens %d %h %u %r %% in a path. */
static void expand_path(const char *in, const struct ssh_target *t, char *out, size_t outsz)
{
    struct buf b = BUF_INIT;
    if (in[0] == '~' && in[1] == '/') {
        buf_puts(&b, home_dir());
        in++;
    }
    for (; *in; in++) {
        if (*in != '%' || !in[1]) {
            buf_append(&b, in, 1);
            continue;
        }
        in++;
        switch (*in) {
        case 'd':
            buf_puts(&b, home_dir());
            break;
        case 'h':
            buf_puts(&b, t->host);
            break;
        case 'u':
            buf_puts(&b, local_user());
            break;
        case 'r':
            buf_puts(&b, t->user);
            break;
        default:
            buf_append(&b, in, 1);
        }
    }
    snprintf(out, outsz, "%s", buf_str(&b));
    buf_free(&b);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Splits the next blank-separated word off *s (double quotes keep blanks);
 * NULL when there is none. */
static char *next_word(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return NULL;
    char *w = p, *o = p;
    bool q = false;
    for (; *p && (q || (*p != ' ' && *p != '\t')); p++) {
        if (*p == '"')
            q = !q;
        else
            *o++ = *p;
    }
    if (*p)
        p++;
    *o = '\0';
    *s = p;
    return w;
}

/* A Host line: blank-separated patterns, '!' negates. */
static bool host_line_matches(char *patterns, const char *alias)
{
    bool any = false;
    for (char *w; (w = next_word(&patterns));) {
        bool neg = *w == '!';
        if (fnmatch(neg ? w + 1 : w, alias, FNM_CASEFOLD) == 0) {
            if (neg)
                return false;
            any = true;
        }
    }
    return any;
}

/* A Match pattern-list: comma-separated, '!' negates. */
static bool list_matches(const char *list, const char *s, bool fold)
{
    bool any = false;
    char pat[256];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(pat, sizeof pat, "%.*s", (int)n, p);
        bool neg = pat[0] == '!';
        if (fnmatch(neg ? pat + 1 : pat, s, fold ? FNM_CASEFOLD : 0) == 0) {
            if (neg)
                return false;
            any = true;
        }
        p += n + (p[n] == ',');
    }
    return any;
}

static void note(struct parse *ps, const char *where, const char *key, const char *what)
{
    /* once per key: a long config repeats keys in many blocks */
    char tag[80];
    snprintf(tag, sizeof tag, "|%s|", key);
    if (strstr(buf_str(&ps->noted), tag))
        return;
    buf_puts(&ps->noted, tag);
    size_t len = strlen(ps->t->notes);
    fixstr_appendf(ps->t->notes, sizeof ps->t->notes, &len, "%s%s: %s %s", len ? "; " : "", where,
                   key, what);
}

/* Match criteria against what is known so far (OpenSSH matches `host`
 * against HostName when one was already set). -1 on bad syntax. */
static int match_line(struct parse *ps, char *args, const char *where, bool *active)
{
    bool all = true, any = false;
    const char *host = ps->hostname[0] ? ps->hostname : ps->t->alias;
    const char *user = ps->t->user[0] ? ps->t->user : ps->user[0] ? ps->user : local_user();
    for (char *w; (w = next_word(&args));) {
        any = true;
        bool neg = *w == '!';
        const char *crit = w + neg;
        if (strcasecmp(crit, "all") == 0)
            continue;
        char *arg = next_word(&args);
        bool m;
        if (!arg) {
            buf_printf(ps->err, "%s: Match %s needs an argument", where, crit);
            return -1;
        }
        if (strcasecmp(crit, "host") == 0) {
            m = list_matches(arg, host, true);
        } else if (strcasecmp(crit, "originalhost") == 0) {
            m = list_matches(arg, ps->t->alias, true);
        } else if (strcasecmp(crit, "user") == 0) {
            m = list_matches(arg, user, false);
        } else if (strcasecmp(crit, "localuser") == 0) {
            m = list_matches(arg, local_user(), false);
        } else {
            /* exec, canonical, final, localnetwork, tagged: the block is
             * taken as not matching, and that is said */
            note(ps, where, "Match", "criteria other than host, originalhost, user, localuser "
                                     "and all are not supported (the block is skipped)");
            *active = false;
            return 0;
        }
        all &= m != neg;
    }
    if (!any) {
        buf_printf(ps->err, "%s: Match needs a criterion (Match host NAME, Match all)", where);
        return -1;
    }
    *active = all;
    return 0;
}

/* Keys that change nothing about how we reach the node. */
static bool passed_over(const char *k)
{
    static const char *keys[] = {
        "ForwardAgent", "ForwardX11", "ForwardX11Trusted", "ForwardX11Timeout", "Compression",
        "LogLevel", "ControlMaster", "ControlPath", "ControlPersist", "AddKeysToAgent",
        "UseKeychain", "SendEnv", "SetEnv", "TCPKeepAlive", "VisualHostKey", "HashKnownHosts",
        "UpdateHostKeys", "RequestTTY", "LocalForward", "RemoteForward", "DynamicForward",
        "PreferredAuthentications", "PasswordAuthentication", "KbdInteractiveAuthentication",
        "ChallengeResponseAuthentication", "GSSAPIAuthentication", "GSSAPIDelegateCredentials",
        "BatchMode", "CheckHostIP", "EscapeChar", "IPQoS", "ConnectionAttempts",
        "ExitOnForwardFailure", "PermitLocalCommand", "NumberOfPasswordPrompts",
        "ClearAllForwardings", "GatewayPorts", "StreamLocalBindMask", "StreamLocalBindUnlink",
        "ObscureKeystrokeTiming", "EnableEscapeCommandline", "ForkAfterAuthentication",
        "SessionType", "StdinNull", "PubkeyAuthentication", "AddressFamily",
        "IgnoreUnknown", "Tag",
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcasecmp(k, keys[i]) == 0)
            return true;
    return false;
}

static int parse_file(struct parse *ps, const char *path, bool active, bool never, int depth);

/* Include: globs, relative to ~/.ssh; each file is read with the block's
 * activity, and its own Host lines cannot open a block the outer one closed. */
static int include(struct parse *ps, char *args, const char *where, bool active, int depth)
{
    if (depth >= MAX_DEPTH) {
        buf_printf(ps->err, "%s: Include nested more than %d deep", where, MAX_DEPTH);
        return -1;
    }
    for (char *w; (w = next_word(&args));) {
        char pat[1024];
        if (w[0] == '~' && w[1] == '/')
            snprintf(pat, sizeof pat, "%s%s", home_dir(), w + 1);
        else if (w[0] == '/')
            snprintf(pat, sizeof pat, "%s", w);
        else
            snprintf(pat, sizeof pat, "%s/.ssh/%s", home_dir(), w);
        glob_t g;
        if (glob(pat, 0, NULL, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; i++)
                if (parse_file(ps, g.gl_pathv[i], active, !active, depth + 1) < 0) {
                    globfree(&g);
                    return -1;
                }
            globfree(&g);
        }
    }
    return 0;
}

/* A number key: in [lo, hi], the first value wins (0: not set yet). */
static int int_key(struct parse *ps, const char *where, const char *k, const char *v, int lo,
                   int hi, int *field)
{
    int n;
    if (parse_int(v, lo, hi, &n) < 0) {
        buf_printf(ps->err, "%s: bad %s '%s' (%d to %d)", where, k, v, lo, hi);
        return -1;
    }
    if (!*field)
        *field = n;
    return 0;
}

static int apply(struct parse *ps, const char *k, char *v, const char *where, bool *active,
                 bool never, int depth)
{
    struct ssh_target *t = ps->t;
    if (strcasecmp(k, "Host") == 0) {
        *active = !never && host_line_matches(v, t->alias);
    } else if (strcasecmp(k, "Match") == 0) {
        if (match_line(ps, v, where, active) < 0)
            return -1;
        *active &= !never;
    } else if (strcasecmp(k, "Include") == 0) {
        return include(ps, v, where, *active, depth);
    } else if (!*active) {
        return 0;
    } else if (strcasecmp(k, "HostName") == 0) {
        if (!ps->hostname[0])
            snprintf(ps->hostname, sizeof ps->hostname, "%s", v);
    } else if (strcasecmp(k, "User") == 0) {
        if (!ps->user[0])
            snprintf(ps->user, sizeof ps->user, "%s", v);
    } else if (strcasecmp(k, "Port") == 0) {
        return int_key(ps, where, k, v, 1, 65535, &ps->port);
    } else if (strcasecmp(k, "IdentityFile") == 0) {
        if (t->nids < SSHCONF_MAX_IDS)
            snprintf(t->ids[t->nids++], sizeof t->ids[0], "%s", v);
    } else if (strcasecmp(k, "IdentitiesOnly") == 0) {
        if (!ps->ids_only_set)
            t->identities_only = strcasecmp(v, "yes") == 0;
        ps->ids_only_set = true;
    } else if (strcasecmp(k, "ProxyJump") == 0) {
        if (!ps->jump_set) {
            if (strchr(v, ',')) {
                buf_printf(ps->err, "%s: ProxyJump %s: dsv41-top goes through one jump host, "
                                    "not a chain",
                           where, v);
                return -1;
            }
            snprintf(t->jump, sizeof t->jump, "%s", strcasecmp(v, "none") == 0 ? "" : v);
        }
        ps->jump_set = true;
    } else if (strcasecmp(k, "ConnectTimeout") == 0) {
        return int_key(ps, where, k, v, 1, 3600, &t->connect_timeout_s);
    } else if (strcasecmp(k, "ServerAliveInterval") == 0) {
        return int_key(ps, where, k, v, 0, 86400, &t->alive_interval_s);
    } else if (strcasecmp(k, "ServerAliveCountMax") == 0) {
        return int_key(ps, where, k, v, 1, 1000, &t->alive_count_max);
    } else if (strcasecmp(k, "StrictHostKeyChecking") == 0) {
        if (strcasecmp(v, "yes") != 0)
            note(ps, where, "StrictHostKeyChecking", "is always yes in dsv41-top");
    } else if (strcasecmp(k, "ProxyCommand") == 0) {
        note(ps, where, "ProxyCommand", "is not supported (use ProxyJump)");
    } else if (strcasecmp(k, "UserKnownHostsFile") == 0) {
        char *first = next_word(&v);
        if (first && !t->known_hosts[0] && strcasecmp(first, "none") != 0)
            snprintf(t->known_hosts, sizeof t->known_hosts, "%s", first);
        if (next_word(&v))
            note(ps, where, "UserKnownHostsFile", "with several files: the first is read");
    } else if (strcasecmp(k, "IdentityAgent") == 0) {
        note(ps, where, "IdentityAgent", "is not read: dsv41-top asks the agent of SSH_AUTH_SOCK");
    } else if (!passed_over(k)) {
        note(ps, where, k, "is not supported by dsv41-top (ignored)");
    }
    return 0;
}

static int parse_file(struct parse *ps, const char *path, bool active, bool never, int depth)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[2048];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        s[strcspn(s, "\r\n")] = '\0';
        if (!*s || *s == '#')
            continue;
        size_t kl = strcspn(s, " \t=");
        char *v = s + kl;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v == '=')
            v++;
        while (*v == ' ' || *v == '\t')
            v++;
        s[kl] = '\0';
        size_t vl = strlen(v);
        while (vl && isspace((unsigned char)v[vl - 1]))
            v[--vl] = '\0';
        char where[600];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        bool multi = strcasecmp(s, "Host") == 0 || strcasecmp(s, "Match") == 0 ||
                     strcasecmp(s, "Include") == 0;
        if (!multi && vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
            v[vl - 1] = '\0';
            v++;
        }
        rc = apply(ps, s, v, where, &active, never, depth);
    }
    fclose(f);
    return rc;
}

static int split_target(const char *target, struct ssh_target *out, struct buf *err)
{
    if (!target || !*target) {
        buf_puts(err, "no ssh target given (set WORKER, e.g. WORKER=user@10.10.10.11)");
        return -1;
    }
    for (const char *c = target; *c; c++)
        if (isspace((unsigned char)*c) || iscntrl((unsigned char)*c) || *c == '\'') {
            buf_printf(err, "ssh target '%s' contains spaces or control characters", target);
            return -1;
        }
    if (target[0] == '-') {
        buf_printf(err, "ssh target '%s' starts with '-'", target);
        return -1;
    }
    const char *at = strrchr(target, '@');
    const char *hostpart = at ? at + 1 : target;
    if (at) {
        if ((size_t)(at - target) >= sizeof out->user || at == target) {
            buf_printf(err, "ssh target '%s': bad user name", target);
            return -1;
        }
        memcpy(out->user, target, (size_t)(at - target));
    }
    snprintf(out->alias, sizeof out->alias, "%s", hostpart);
    /* host:port, unless it looks like a bare IPv6 address */
    char *colon = strchr(out->alias, ':');
    if (colon && !strchr(colon + 1, ':')) {
        *colon = '\0';
        if (parse_int(colon + 1, 1, 65535, &out->port) < 0) {
            buf_printf(err, "ssh target '%s': bad port", target);
            return -1;
        }
    }
    if (!out->alias[0]) {
        buf_printf(err, "ssh target '%s': no host", target);
        return -1;
    }
    return 0;
}

int sshconf_resolve(const char *config_path, const char *target, struct ssh_target *out,
                    struct buf *err)
{
    memset(out, 0, sizeof *out);
    if (split_target(target, out, err) < 0)
        return -1;
    struct parse ps = {.t = out, .err = err};
    if (config_path) {
        snprintf(out->config, sizeof out->config, "%s", config_path);
        /* lines before the first Host or Match apply to every host */
        if (parse_file(&ps, config_path, true, false, 0) < 0) {
            buf_free(&ps.noted);
            return -1;
        }
    }
    buf_free(&ps.noted);
    snprintf(out->host, sizeof out->host, "%s", out->alias);
    if (ps.hostname[0]) { /* HostName may itself use %h */
        char tmp[256];
        expand_path(ps.hostname, out, tmp, sizeof tmp);
        snprintf(out->host, sizeof out->host, "%s", tmp);
    }
    if (!out->user[0])
        snprintf(out->user, sizeof out->user, "%s", ps.user[0] ? ps.user : local_user());
    if (!out->port)
        out->port = ps.port ? ps.port : 22;
    if (out->known_hosts[0]) {
        char tmp[512];
        expand_path(out->known_hosts, out, tmp, sizeof tmp);
        snprintf(out->known_hosts, sizeof out->known_hosts, "%s", tmp);
    }
    if (out->nids) {
        for (int i = 0; i < out->nids; i++) {
            char tmp[512];
            expand_path(out->ids[i], out, tmp, sizeof tmp);
            snprintf(out->ids[i], sizeof out->ids[i], "%s", tmp);
        }
    } else {
        static const char *defaults[] = {"id_ed25519", "id_ecdsa", "id_rsa"};
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
            snprintf(out->ids[out->nids++], sizeof out->ids[0], "%s/.ssh/%s", home_dir(),
                     defaults[i]);
    }
    return 0;
}
