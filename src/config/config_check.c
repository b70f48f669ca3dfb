/* config_check: see config_check.h. */
#include "config_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

static bool has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return true;
    return false;
}

/* Every byte of s in the set, and s not empty. */
static bool only(const char *s, const char *set)
{
    if (!*s)
        return false;
    for (const char *p = s; *p; p++)
        if (!strchr(set, *p))
            return false;
    return true;
}

#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

static bool is_target(const char *s, size_t n)
{
    /* user@host, host:port, [v6], an alias: never an option to ssh/rsync */
    if (!n || s[0] == '-' || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr(ALNUM "._-@:[]%", s[i]))
            return false;
    return true;
}

static bool each_word(const char *s, bool (*ok)(const char *w, size_t n))
{
    for (const char *p = s; *p;) {
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t");
        if (n && !ok(p, n))
            return false;
        p += n;
    }
    return true;
}

static bool env_word(const char *w, size_t n)
{
    size_t k = 0;
    while (k < n && w[k] != '=')
        k++;
    if (k == 0 || k == n || (w[0] >= '0' && w[0] <= '9'))
        return false;
    for (size_t i = 0; i < k; i++)
        if (!strchr(ALNUM "_", w[i]))
            return false;
    return !(k == 12 && strncmp(w, "VLLM_API_KEY", 12) == 0);
}

/* The value split as the ranks will get it (strv_add_shell_words); NULL
 * when it splits, else what was expected and where it broke, in form. */
static const char *split_words(const char *v, const char *what, struct strv *words, char *form,
                               int formsz)
{
    struct buf err = BUF_INIT;
    if (strv_add_shell_words(words, v, &err) == 0) {
        buf_free(&err);
        return NULL;
    }
    snprintf(form, (size_t)formsz, "%s in shell quoting ('...', \"...\", \\): %s", what,
             buf_str(&err));
    buf_free(&err);
    return form;
}

/* Each word NAME=VALUE: NULL, else the form and the first word that is not. */
static const char *env_words(const char *v, char *form, int formsz)
{
    static const char what[] = "KEY=VALUE words (KEY of letters, digits and _, not starting "
                               "with a digit; the API key is not set this way)";
    struct strv w = STRV_INIT;
    const char *want = split_words(v, what, &w, form, formsz);
    for (int i = 0; !want && i < w.n; i++)
        if (!env_word(w.v[i], strlen(w.v[i]))) {
            snprintf(form, (size_t)formsz, "%s; word %d is '%.40s%s'", what, i + 1, w.v[i],
                     strlen(w.v[i]) > 40 ? "..." : "");
            want = form;
        }
    strv_free(&w);
    return want;
}

/* The first word a program: not empty, not an option. */
static const char *command_words(const char *v, char *form, int formsz)
{
    struct strv w = STRV_INIT;
    const char *want = split_words(v, "a command", &w, form, formsz);
    if (!want && w.n == 0)
        want = "a command (it is blank)";
    else if (!want && (!w.v[0][0] || w.v[0][0] == '-'))
        want = "a command (its first word a program, not an option or empty)";
    strv_free(&w);
    return want;
}

static bool ulimit_word(const char *w, size_t n)
{
    size_t k = 0;
    while (k < n && w[k] >= 'a' && w[k] <= 'z')
        k++;
    if (k == 0 || k == n || w[k] != '=')
        return false;
    for (size_t i = k + 1; i < n; i++)
        if (!strchr("0123456789-:", w[i]))
            return false;
    return k + 1 < n;
}

/* The runtime reads the value itself (docker's and podman's size parsers
 * differ in what else they take), so only the form both read alike passes. */
static bool log_size_ok(const char *v)
{
    size_t n = strspn(v, "0123456789");
    if (n == 0 || n > 7 || v[0] == '0' || !v[n] || v[n + 1] || !strchr("kKmMgG", v[n]))
        return false;
    long long k = atoll(v);
    if (v[n] == 'm' || v[n] == 'M')
        k *= 1024;
    else if (v[n] == 'g' || v[n] == 'G')
        k *= 1024 * 1024;
    return k >= 8 && k <= 1024LL * 1024 * 1024;
}

static bool number(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(d))
        return false;
    *out = d;
    return true;
}

const char *config_check_value(enum config_kind kind, double min, double max, bool empty_ok,
                               const char *v, char *form, int formsz)
{
    if (!*v)
        return empty_ok ? NULL : "a value (it is empty)";
    double d;
    switch (kind) {
    case CK_ANY:
        return has_control(v) ? "text without control characters" : NULL;
    case CK_MOUNT_PATH:
        /* -v SRC:DST splits on ':'; podman reads --env-file's value as CSV */
        if (strpbrk(v, ":,\""))
            return "an absolute path without ':', ',' or '\"' (the containers mount it)";
        /* fall through */
    case CK_PATH:
        return v[0] != '/' || has_control(v)
                   ? "an absolute path (or ~/...) without control characters"
                   : NULL;
    case CK_LOCAL_PATH:
        return has_control(v) || v[0] == '-' ? "a path without control characters" : NULL;
    case CK_FILE_NAME:
        return !only(v, ALNUM "._-") || v[0] == '.' || v[0] == '-'
                   ? "a plain file name (letters, digits, '.', '_', '-'; no '/', not starting "
                     "with '.' or '-')"
                   : NULL;
    case CK_INT: {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (!*end && !errno && n >= min && n <= max)
            return NULL;
        snprintf(form, (size_t)formsz, "a whole number from %.0f to %.0f", min, max);
        return form;
    }
    case CK_NUM:
        if (number(v, &d) && d > min && d <= max)
            return NULL;
        snprintf(form, (size_t)formsz, "a number above %.10g and at most %.10g", min, max);
        return form;
    case CK_BOOL:
        return strcmp(v, "0") && strcmp(v, "1") ? "0 or 1" : NULL;
    case CK_RUNTIME:
        return strcmp(v, "docker") && strcmp(v, "podman") ? "docker or podman" : NULL;
    case CK_SOCKET: {
        const char *path = strncmp(v, "unix://", 7) == 0 ? v + 7 : v;
        return strcmp(v, "none") && (path[0] != '/' || has_control(path))
                   ? "none, or the API socket's absolute path (or unix:///path)"
                   : NULL;
    }
    case CK_SSH_TARGET:
        return is_target(v, strlen(v)) ? NULL
                                       : "[user@]host[:port] or a Host alias of the ssh config "
                                         "(letters, digits, . _ - @ : [ ]; not starting with '-')";
    case CK_SSH_TARGETS:
        for (const char *p = v;; p++) {
            size_t n = strcspn(p, ",");
            if (!is_target(p, n))
                return "ssh targets separated by commas (host1,host2; each [user@]host[:port], "
                       "not starting with '-')";
            p += n;
            if (!*p)
                return NULL;
        }
    case CK_IPV4: {
        struct in_addr a;
        return inet_pton(AF_INET, v, &a) == 1 ? NULL : "a dotted IPv4 address (10.10.10.13)";
    }
    case CK_IFNAME:
        return only(v, ALNUM "._-") && v[0] != '-' && strlen(v) < 16
                   ? NULL
                   : "a network interface name (up to 15 letters, digits, '.', '_', '-')";
    case CK_HCAS:
        return only(v, ALNUM "._-,:=^") && v[0] != '-' ? NULL
                                                       : "RDMA device names separated by commas";
    case CK_IMAGE:
        return only(v, ALNUM "._-/:@") && strchr(ALNUM, v[0])
                   ? NULL
                   : "an image reference (registry/name:tag or name@sha256:...)";
    case CK_URL:
        return (strncmp(v, "http://", 7) == 0 || strncmp(v, "https://", 8) == 0) &&
                       !has_control(v) && !strpbrk(v, " \"<>\\^`{|}")
                   ? NULL
                   : "an http:// or https:// URL";
    case CK_REVISION:
        return only(v, ALNUM "._-/") && v[0] != '-' && v[0] != '/' && !strstr(v, "..")
                   ? NULL
                   : "a branch, tag or commit (letters, digits, '.', '_', '-', '/')";
    case CK_WORDS: {
        if (has_control(v))
            return "words on one line, without control characters";
        struct strv w = STRV_INIT;
        const char *want = split_words(v, "words", &w, form, formsz);
        strv_free(&w);
        return want;
    }
    case CK_COMMAND:
        return has_control(v) ? "a command on one line" : command_words(v, form, formsz);
    case CK_ENV_WORDS:
        /* a control byte would end the env file's line: no quoting makes one */
        return has_control(v) ? "KEY=VALUE words on one line, without control characters"
                              : env_words(v, form, formsz);
    case CK_ULIMITS:
        return !has_control(v) && each_word(v, ulimit_word) ? NULL
                                                            : "name=soft[:hard] words (memlock=-1)";
    case CK_GPUS:
        return only(v, ALNUM "=,:._-\"") && v[0] != '-' ? NULL : "all, or device=0,1 (docker's --gpus)";
    case CK_WORD:
        return only(v, ALNUM "_") ? NULL : "one word of letters, digits and '_'";
    case CK_LOG_SIZE:
        return log_size_ok(v) ? NULL
                              : "a size: a whole number with k, m or g (100m), from 8k (podman's "
                                "conmon needs a log file of at least 8 KiB) to 1024g";
    case CK_SECRET:
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
            if (*p <= 0x20 || *p >= 0x7f)
                return "printable ASCII without blanks (a token as the provider gives it)";
        return NULL;
    }
    return "a known kind of value";
}
