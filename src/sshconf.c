#include "sshconf.h"

#include <ctype.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw ? pw->pw_dir : "/";
}

static const char *local_user(void)
{
    struct passwd *pw = getpwuid(getuid());
    return pw ? pw->pw_name : "root";
}

/* A Host line: whitespace-separated patterns, '!' negates. */
static bool host_matches(char *patterns, const char *alias)
{
    bool any = false;
    for (char *save = NULL, *p = strtok_r(patterns, " \t", &save); p;
         p = strtok_r(NULL, " \t", &save)) {
        bool neg = *p == '!';
        if (fnmatch(neg ? p + 1 : p, alias, 0) == 0) {
            if (neg)
                return false;
            any = true;
        }
    }
    return any;
}

/* Expands ~ and the tokens %d %h %u %r %% in IdentityFile. */
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

static int parse_port(const char *s, int *port)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > 65535)
        return -1;
    *port = (int)v;
    return 0;
}

int sshconf_resolve(const char *config_path, const char *target, struct ssh_target *out,
                    struct buf *err)
{
    memset(out, 0, sizeof *out);
    if (!target || !*target) {
        buf_puts(err, "no ssh target given (set WORKER, e.g. WORKER=user@10.10.10.11)");
        return -1;
    }
    for (const char *c = target; *c; c++)
        if (isspace((unsigned char)*c) || iscntrl((unsigned char)*c) || *c == '\'') {
            buf_printf(err, "ssh target '%s' contains spaces or control characters", target);
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
        if (parse_port(colon + 1, &out->port) < 0) {
            buf_printf(err, "ssh target '%s': bad port", target);
            return -1;
        }
    }
    if (!out->alias[0]) {
        buf_printf(err, "ssh target '%s': no host", target);
        return -1;
    }
    char hostname[256] = "", user[64] = "";
    int port = 0;
    FILE *f = config_path ? fopen(config_path, "r") : NULL;
    if (f) {
        char line[2048];
        bool active = true; /* lines before the first Host apply to all */
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            char *s = line;
            while (isspace((unsigned char)*s))
                s++;
            s[strcspn(s, "\r\n")] = '\0';
            if (!*s || *s == '#')
                continue;
            size_t kl = strcspn(s, " \t=");
            char *v = s + kl;
            while (*v == ' ' || *v == '\t' || *v == '=')
                v++;
            s[kl] = '\0';
            size_t vl = strlen(v);
            while (vl && isspace((unsigned char)v[vl - 1]))
                v[--vl] = '\0';
            if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                v[vl - 1] = '\0';
                v++;
            }
            if (strcasecmp(s, "Host") == 0) {
                active = host_matches(v, out->alias);
            } else if (strcasecmp(s, "Match") == 0) {
                active = false; /* not supported: skip the block rather than guess */
            } else if (!active) {
                continue;
            } else if (strcasecmp(s, "HostName") == 0 && !hostname[0]) {
                snprintf(hostname, sizeof hostname, "%s", v);
            } else if (strcasecmp(s, "User") == 0 && !user[0]) {
                snprintf(user, sizeof user, "%s", v);
            } else if (strcasecmp(s, "Port") == 0 && !port) {
                if (parse_port(v, &port) < 0) {
                    buf_printf(err, "%s:%d: bad Port '%s'", config_path, lineno, v);
                    fclose(f);
                    return -1;
                }
            } else if (strcasecmp(s, "IdentityFile") == 0 && out->nids < SSHCONF_MAX_IDS) {
                snprintf(out->ids[out->nids++], sizeof out->ids[0], "%s", v);
            }
        }
        fclose(f);
    }
    /* HostName may itself use %h */
    if (hostname[0]) {
        snprintf(out->host, sizeof out->host, "%s", out->alias);
        char tmp[256];
        expand_path(hostname, out, tmp, sizeof tmp);
        snprintf(out->host, sizeof out->host, "%s", tmp);
    } else {
        snprintf(out->host, sizeof out->host, "%s", out->alias);
    }
    if (!out->user[0])
        snprintf(out->user, sizeof out->user, "%s", user[0] ? user : local_user());
    if (!out->port)
        out->port = port ? port : 22;
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
