/* text: see text.h. */
#include "text.h"

#include <ctype.h>

#include <stdbool.h>
#include <string.h>

/* Length of a valid UTF-8 sequence at s (1..4) with its code point, or 0
 * when the bytes are not one (overlong, surrogate, beyond U+10FFFF, cut). */
static int utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0], need, min;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1, min = 0x80, c &= 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        need = 2, min = 0x800, c &= 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 3, min = 0x10000, c &= 0x07;
    else
        return 0;
    if (n < need + 1)
        return 0;
    for (unsigned k = 1; k <= need; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return (int)need + 1;
}

/* Code points that are invisible yet change how the rest of a line shows:
 * C1 controls, bidi embeddings/overrides/isolates, marks, BOM. */
static bool invisible(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

/* Index just past the escape sequence that starts at s[i] == ESC. */
static size_t skip_escape(const unsigned char *s, size_t len, size_t i)
{
    i++;
    if (i >= len)
        return i;
    unsigned char c = s[i++];
    if (c == '[') { /* CSI: parameters, intermediates, one final byte */
        while (i < len && s[i] >= 0x20 && s[i] <= 0x3f)
            i++;
        return i < len && s[i] >= 0x40 && s[i] <= 0x7e ? i + 1 : i;
    }
    if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') { /* strings to BEL or ST */
        for (; i < len; i++) {
            if (s[i] == 0x07)
                return i + 1;
            if (s[i] == 0x1b && i + 1 < len && s[i + 1] == '\\')
                return i + 2;
        }
        return i;
    }
    while (c >= 0x20 && c <= 0x2f && i < len) /* intermediates, then the final */
        c = s[i++];
    return i;
}

size_t text_clean_used(char *dst, size_t dstsz, const char *src, size_t len, size_t *used)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0, i = 0;
    if (!dstsz)
        return 0;
    while (i < len) {
        unsigned char b = s[i];
        char tmp[8];
        size_t tn = 0, next = i + 1;
        if (b == 0x1b) {
            next = skip_escape(s, len, i);
        } else if (b == '\r') {
            if (i + 1 < len) /* a terminal would overwrite: keep what follows */
                o = 0;
        } else if (b == '\t') {
            size_t w = 8 - o % 8;
            memset(tmp, ' ', w);
            tn = w;
        } else if (b < 0x20 || b == 0x7f) {
            /* other controls vanish */
        } else if (b < 0x80) {
            tmp[tn++] = (char)b;
        } else {
            unsigned cp;
            int n = utf8_decode(s + i, len - i, &cp);
            if (n == 0) {
                tmp[tn++] = '?';
            } else {
                next = i + (size_t)n;
                if (!invisible(cp)) {
                    memcpy(tmp, s + i, (size_t)n);
                    tn = (size_t)n;
                }
            }
        }
        if (o + tn >= dstsz)
            break;
        memcpy(dst + o, tmp, tn);
        o += tn;
        i = next;
    }
    dst[o] = '\0';
    if (used)
        *used = i < len ? i : len;
    return o;
}

size_t text_clean(char *dst, size_t dstsz, const char *src, size_t len)
{
    return text_clean_used(dst, dstsz, src, len, NULL);
}

int text_one_line(struct buf *out, const char *src, size_t len, size_t max)
{
    char line[1024];
    size_t start = out->len;
    for (size_t i = 0; i < len && out->len - start < max;) {
        size_t n = 0;
        while (i + n < len && src[i + n] != '\n')
            n++;
        size_t l = text_clean(line, sizeof line, src + i, n);
        size_t a = 0;
        while (a < l && line[a] == ' ')
            a++;
        while (l > a && line[l - 1] == ' ')
            l--;
        if (l > a) {
            if (out->len > start && buf_puts(out, " / ") < 0)
                return -1;
            size_t room = max - (out->len - start);
            if (buf_append(out, line + a, l - a < room ? l - a : room) < 0)
                return -1;
        }
        i += n + 1;
    }
    return 0;
}

int text_secret_name(const char *name, size_t len)
{
    static const char *const words[] = {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD",
                                        "CREDENTIAL"};
    char up[256];
    if (len >= sizeof up)
        len = sizeof up - 1;
    for (size_t i = 0; i < len; i++)
        up[i] = (char)toupper((unsigned char)name[i]);
    up[len] = '\0';
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(up, words[i]))
            return 1;
    return 0;
}

void text_hide_secrets(const char *src, size_t len, enum text_hide mode, struct buf *out)
{
    size_t i = 0;
    while (i < len) {
        /* at the start of a line (or a word): a name, then '=' */
        size_t n = 0;
        if (src[i] == '_' || isalpha((unsigned char)src[i]))
            while (i + n < len && (src[i + n] == '_' || isalnum((unsigned char)src[i + n])))
                n++;
        if (n && i + n < len && src[i + n] == '=' && text_secret_name(src + i, n)) {
            buf_append(out, src + i, n + 1);
            buf_puts(out, "(hidden)");
            i += n + 1;
            char q = 0;
            while (i < len && src[i] != '\n') {
                if (mode == TEXT_HIDE_WORDS) {
                    if (q) {
                        if (q == '"' && src[i] == '\\' && i + 1 < len)
                            i++; /* \" inside double quotes */
                        else if (src[i] == q)
                            q = 0;
                    } else if (src[i] == '\'' || src[i] == '"') {
                        q = src[i];
                    } else if (src[i] == '\\' && i + 1 < len) {
                        i++;
                    } else if (src[i] == ' ' || src[i] == '\t') {
                        break;
                    }
                }
                i++;
            }
            continue;
        }
        /* to the next place a name may start */
        size_t k = i + (n ? n : 1);
        if (mode == TEXT_HIDE_LINES) {
            while (k < len && src[k - 1] != '\n')
                k++;
        } else {
            while (k < len && src[k - 1] != ' ' && src[k - 1] != '\t' && src[k - 1] != '\n')
                k++;
        }
        buf_append(out, src + i, k - i);
        i = k;
    }
}

void text_copy_field(char *dst, size_t dstsz, const char *src, size_t len)
{
    if (!dstsz)
        return;
    const unsigned char *s = (const unsigned char *)src;
    size_t i = 0, o = 0;
    while (i < len && o + 1 < dstsz) {
        unsigned cp;
        int d = s[i] < 0x80 ? 1 : utf8_decode(s + i, len - i, &cp);
        size_t l = d > 0 ? (size_t)d : 0;
        if (l == 0 || (l == 1 && (s[i] < 0x20 || s[i] == 0x7f)) || (l == 2 && s[i] == 0xc2 &&
                                                                   s[i + 1] < 0xa0)) {
            /* control bytes (C0, DEL, C1) and broken UTF-8 become '?' */
            dst[o++] = '?';
            i += l ? l : 1;
            continue;
        }
        if (o + l >= dstsz)
            break; /* never split a character */
        memcpy(dst + o, s + i, l);
        o += l;
        i += l;
    }
    dst[o] = '\0';
}
