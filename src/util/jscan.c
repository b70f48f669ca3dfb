#include "jscan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct scan {
    const char *p, *end;
    const char *why;
    const char *const *path;
    int npath;
    struct jscan_val *out;
};

/* Where decoded bytes go: a fixed array (a key, to compare) or a buf. */
struct sink {
    char *fixed;
    size_t cap, len;
    bool over;
    struct buf *b;
};

static void put(struct sink *k, const char *d, size_t n)
{
    if (k->b) {
        if (buf_append(k->b, d, n) < 0)
            k->over = true;
    } else if (k->len + n > k->cap) {
        k->over = true;
    } else {
        memcpy(k->fixed + k->len, d, n);
    }
    k->len += n;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(struct sink *k, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
    }
    put(k, u, n);
}

/* Decodes the inside of a string the scanner has already checked. */
static void decode(const char *p, const char *end, struct sink *k)
{
    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t)(end - p));
        if (!bs) {
            put(k, p, (size_t)(end - p));
            return;
        }
        put(k, p, (size_t)(bs - p));
        char c = bs[1];
        p = bs + 2;
        if (c != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            put(k, &to[strchr(from, c) - from], 1);
            continue;
        }
        unsigned cp = (unsigned)hex4(p);
        p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            int lo = hex4(p + 2);
            if (lo >= 0xdc00 && lo <= 0xdfff) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
                p += 6;
            }
        }
        put_utf8(k, cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp);
    }
}

static int bad(struct scan *s, const char *why)
{
    s->why = why;
    return -1;
}

static void skip_ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* A string at s->p (its '"'); its inside in [*in, *in_end). */
static int scan_string(struct scan *s, const char **in, const char **in_end)
{
    const char *p = s->p + 1;
    *in = p;
    for (;;) {
        if (p >= s->end)
            return bad(s, "an unterminated string");
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            break;
        if (c < 0x20)
            return bad(s, "a control character inside a string");
        if (c == '\\') {
            if (s->end - p < 2)
                return bad(s, "an unterminated string");
            if (p[1] == 'u') {
                if (s->end - p < 6 || hex4(p + 2) < 0)
                    return bad(s, "a bad \\u escape");
                p += 6;
                continue;
            }
            if (!memchr("\"\\/bfnrt", p[1], 8))
                return bad(s, "an unknown escape");
            p += 2;
            continue;
        }
        p++;
    }
    *in_end = p;
    s->p = p + 1;
    return 0;
}

static int digits(struct scan *s)
{
    const char *a = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > a ? 0 : bad(s, "a malformed number");
}

static int scan_number(struct scan *s)
{
    if (*s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (digits(s) < 0)
        return -1;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (digits(s) < 0)
            return -1;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (digits(s) < 0)
            return -1;
    }
    return 0;
}

static int literal(struct scan *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return bad(s, "an unknown literal");
    s->p += n;
    return 0;
}

static int scan_value(struct scan *s, int depth, int matched);

static bool key_is(const char *in, const char *in_end, const char *want)
{
    char key[JSCAN_KEY_MAX];
    struct sink k = {.fixed = key, .cap = sizeof key};
    decode(in, in_end, &k);
    return !k.over && k.len == strlen(want) && memcmp(key, want, k.len) == 0;
}

static int scan_members(struct scan *s, int depth, int matched, bool object)
{
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == (object ? '}' : ']')) {
        s->p++;
        return 0;
    }
    for (;;) {
        int child = -1;
        if (object) {
            const char *in, *in_end;
            if (s->p >= s->end || *s->p != '"')
                return bad(s, "an object key that is no string");
            if (scan_string(s, &in, &in_end) < 0)
                return -1;
            if (matched >= 0 && matched < s->npath && s->out->type == JSCAN_ABSENT &&
                key_is(in, in_end, s->path[matched]))
                child = matched + 1;
            skip_ws(s);
            if (s->p >= s->end || *s->p != ':')
                return bad(s, "a missing ':' after an object key");
            s->p++;
        }
        if (scan_value(s, depth + 1, child) < 0)
            return -1;
        skip_ws(s);
        if (s->p >= s->end)
            return bad(s, "an unterminated object or array");
        if (*s->p == (object ? '}' : ']')) {
            s->p++;
            return 0;
        }
        if (*s->p != ',')
            return bad(s, "a missing ',' between members");
        s->p++;
        skip_ws(s);
    }
}

static int scan_value(struct scan *s, int depth, int matched)
{
    skip_ws(s);
    if (s->p >= s->end)
        return bad(s, "a missing value");
    const char *start = s->p;
    enum jscan_type t;
    int rc;
    const char *in, *in_end;
    switch (*s->p) {
    case '{':
    case '[':
        if (depth >= JSCAN_DEPTH)
            return bad(s, "nesting deeper than 64");
        t = *s->p == '{' ? JSCAN_OBJECT : JSCAN_ARRAY;
        rc = scan_members(s, depth, matched, t == JSCAN_OBJECT);
        break;
    case '"':
        t = JSCAN_STRING;
        rc = scan_string(s, &in, &in_end);
        break;
    case 't':
    case 'f':
        t = JSCAN_BOOL;
        rc = literal(s, *s->p == 't' ? "true" : "false");
        break;
    case 'n':
        t = JSCAN_NULL;
        rc = literal(s, "null");
        break;
    default:
        if (*s->p != '-' && (*s->p < '0' || *s->p > '9'))
            return bad(s, "an unexpected character");
        t = JSCAN_NUMBER;
        rc = scan_number(s);
    }
    if (rc < 0)
        return -1;
    if (matched == s->npath && s->out->type == JSCAN_ABSENT) {
        s->out->type = t;
        s->out->raw = start;
        s->out->raw_len = (size_t)(s->p - start);
        s->out->b = t == JSCAN_BOOL && *start == 't';
    }
    return 0;
}

int jscan_get(const char *json, size_t len, const char *const *path, int npath,
              struct jscan_val *out, const char **why)
{
    memset(out, 0, sizeof *out);
    struct scan s = {json, json + len, NULL, path, npath, out};
    if (scan_value(&s, 0, 0) == 0) {
        skip_ws(&s);
        if (s.p == s.end)
            return 0;
        s.why = "text after the document";
    }
    memset(out, 0, sizeof *out);
    if (why)
        *why = s.why;
    return -1;
}

int jscan_get_dotted(const char *json, size_t len, const char *dotted, struct jscan_val *out,
                     const char **why)
{
    char tmp[512];
    const char *path[16];
    int n = 0;
    size_t dl = strlen(dotted);
    if (dl >= sizeof tmp) {
        memset(out, 0, sizeof *out);
        if (why)
            *why = "a path longer than 511 bytes";
        return -1;
    }
    memcpy(tmp, dotted, dl + 1);
    for (char *p = tmp; dl && p; n++) {
        char *dot = strchr(p, '.');
        if (dot)
            *dot = '\0';
        if (n == 16 || !*p) {
            memset(out, 0, sizeof *out);
            if (why)
                *why = n == 16 ? "a path of more than 16 keys" : "an empty key in a path";
            return -1;
        }
        path[n] = p;
        p = dot ? dot + 1 : NULL;
    }
    return jscan_get(json, len, path, n, out, why);
}

int jscan_string(const struct jscan_val *v, struct buf *out)
{
    if (v->type != JSCAN_STRING || v->raw_len < 2)
        return -1;
    struct sink k = {.b = out};
    decode(v->raw + 1, v->raw + v->raw_len - 1, &k);
    if (!out->data && buf_append(out, "", 0) < 0)
        return -1;
    return k.over ? -1 : 0;
}

int jscan_long(const struct jscan_val *v, long *out)
{
    char tmp[32];
    if (v->type != JSCAN_NUMBER || v->raw_len >= sizeof tmp ||
        memchr(v->raw, '.', v->raw_len) || memchr(v->raw, 'e', v->raw_len) ||
        memchr(v->raw, 'E', v->raw_len))
        return -1;
    memcpy(tmp, v->raw, v->raw_len);
    tmp[v->raw_len] = '\0';
    char *end;
    errno = 0;
    long n = strtol(tmp, &end, 10);
    if (errno || *end)
        return -1;
    *out = n;
    return 0;
}
