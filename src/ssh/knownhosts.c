/* knownhosts: see knownhosts.h. */
#include "knownhosts.h"

#include <ctype.h>
#include <fnmatch.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Base64 of at most outsz bytes; the decoded length or -1. */
static int unbase64(const char *in, size_t len, unsigned char *out, size_t outsz)
{
    if (len == 0 || len % 4 || len / 4 * 3 > outsz)
        return -1;
    int n = EVP_DecodeBlock(out, (const unsigned char *)in, (int)len);
    if (n < 0)
        return -1;
    for (size_t i = len; i > 0 && in[i - 1] == '='; i--)
        n--;
    return n;
}

/* "|1|base64(salt)|base64(HMAC-SHA1(salt, name))" */
static bool hashed_match(const char *pat, size_t len, const char *name)
{
    const char *salt = pat + 3, *bar = memchr(salt, '|', len - 3);
    if (!bar)
        return false;
    unsigned char s[64], h[64], mac[EVP_MAX_MD_SIZE];
    int sl = unbase64(salt, (size_t)(bar - salt), s, sizeof s);
    int hl = unbase64(bar + 1, len - (size_t)(bar + 1 - pat), h, sizeof h);
    unsigned int ml = 0;
    if (sl <= 0 || hl != 20 ||
        !HMAC(EVP_sha1(), s, sl, (const unsigned char *)name, strlen(name), mac, &ml))
        return false;
    return ml == 20 && memcmp(mac, h, 20) == 0;
}

/* The host field of a line against name: a match, no negated match. */
static bool hosts_match(const char *field, size_t flen, const char *name)
{
    bool any = false;
    for (size_t i = 0; i < flen;) {
        size_t n = 0;
        while (i + n < flen && field[i + n] != ',')
            n++;
        char pat[512];
        if (n && n < sizeof pat) {
            memcpy(pat, field + i, n);
            pat[n] = '\0';
            if (strncmp(pat, "|1|", 3) == 0) {
                any |= hashed_match(pat, n, name);
            } else {
                bool neg = pat[0] == '!';
                if (fnmatch(pat + neg, name, FNM_CASEFOLD) == 0) {
                    if (neg)
                        return false;
                    any = true;
                }
            }
        }
        i += n + 1;
    }
    return any;
}

/* The libssh2 hostkey methods a known_hosts key type verifies. */
static const char *methods_of(const char *type, size_t len)
{
    static const struct {
        const char *type, *methods;
    } map[] = {
        {"ssh-ed25519", "ssh-ed25519"},
        {"ecdsa-sha2-nistp256", "ecdsa-sha2-nistp256"},
        {"ecdsa-sha2-nistp384", "ecdsa-sha2-nistp384"},
        {"ecdsa-sha2-nistp521", "ecdsa-sha2-nistp521"},
        {"ssh-rsa", "rsa-sha2-512,rsa-sha2-256,ssh-rsa"},
        {"ssh-dss", "ssh-dss"},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strlen(map[i].type) == len && memcmp(map[i].type, type, len) == 0)
            return map[i].methods;
    return NULL;
}

/* OpenSSH's default HostKeyAlgorithms, the ones libssh2 knows. */
#define OPENSSH_ORDER                                                                              \
    "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,"     \
    "rsa-sha2-256"

/* True when word is one of the comma-separated items of list. */
static bool in_list(const char *list, const char *word, size_t wl)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == wl && memcmp(p, word, wl) == 0)
            return true;
        p += n + (p[n] == ',');
    }
    return false;
}

int knownhosts_pref(const char *path, const char *host, int port, const char *supported,
                    struct buf *out)
{
    struct buf text = BUF_INIT;
    if (buf_read_file(&text, path, 16u << 20) < 0)
        buf_reset(&text); /* no file: nothing known, the check says so later */
    int rc = knownhosts_pref_text(buf_str(&text), host, port, supported, out);
    buf_free(&text);
    return rc;
}

int knownhosts_pref_text(const char *text, const char *host, int port, const char *supported,
                         struct buf *out)
{
    struct buf known = BUF_INIT;
    char name[300];
    if (port == 22)
        snprintf(name, sizeof name, "%s", host);
    else
        snprintf(name, sizeof name, "[%s]:%d", host, port);
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n");
        const char *p = l, *end = l + len;
        l += len + (l[len] == '\n');
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p == end || *p == '#' || *p == '@') /* markers: not a key of this host */
            continue;
        const char *hosts = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        size_t hl = (size_t)(p - hosts);
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *type = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        const char *m = methods_of(type, (size_t)(p - type));
        if (m && hosts_match(hosts, hl, name)) {
            if (known.len)
                buf_puts(&known, ",");
            buf_puts(&known, m);
        }
    }
    /* the known types first, then the others; each group in OpenSSH's own
     * order (ed25519 before ECDSA before RSA: with nothing known the key
     * we report is the one `ssh` would show on first contact), then what
     * libssh2 offers beyond it */
    struct buf order = BUF_INIT;
    buf_puts(&order, OPENSSH_ORDER);
    for (const char *s = supported; *s;) {
        size_t n = strcspn(s, ",");
        if (n && !in_list(OPENSSH_ORDER, s, n)) {
            buf_puts(&order, ",");
            buf_append(&order, s, n);
        }
        s += n + (s[n] == ',');
    }
    for (int pass = 0; pass < 2; pass++)
        for (const char *s = buf_str(&order); *s;) {
            size_t n = strcspn(s, ",");
            if (n && in_list(supported, s, n) && in_list(buf_str(&known), s, n) == (pass == 0)) {
                if (out->len)
                    buf_puts(out, ",");
                buf_append(out, s, n);
            }
            s += n + (s[n] == ',');
        }
    buf_free(&order);
    buf_free(&known);
    return 0;
}
