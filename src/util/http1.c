#include "http1.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

enum {
    S_STATUS,
    S_HEADER,
    S_BODY_LEN,
    S_BODY_CLOSE,
    S_CHUNK_SIZE,
    S_CHUNK_DATA,
    S_CHUNK_END,
    S_TRAILER,
    S_DONE,
    S_ERROR,
};

static bool plain_word(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return false;
    return true;
}

int http1_request(struct buf *out, const char *method, const char *path, const char *body)
{
    if (!plain_word(method) || !plain_word(path) || path[0] != '/')
        return -1;
    if (buf_printf(out, "%s %s HTTP/1.1\r\nHost: d\r\nConnection: close\r\n", method, path) < 0)
        return -1;
    if (body)
        return buf_printf(out, "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                          strlen(body), body);
    /* a POST without a body still says so: some servers wait for one */
    if (strcmp(method, "GET") != 0)
        return buf_puts(out, "Content-Length: 0\r\n\r\n");
    return buf_puts(out, "\r\n");
}

void http1_resp_init(struct http1_resp *r, http1_body_fn on_body, void *ctx)
{
    memset(r, 0, sizeof *r);
    r->content_length = -1;
    r->on_body = on_body;
    r->ctx = ctx;
    r->state = S_STATUS;
}

static int fail(struct http1_resp *r, const char *why)
{
    r->state = S_ERROR;
    r->error = why;
    return -1;
}

static int parse_status(struct http1_resp *r, const char *l)
{
    /* "HTTP/1.1 200 OK": the reason phrase may be empty or absent */
    if (strncmp(l, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)l[7]) || l[8] != ' ' ||
        !isdigit((unsigned char)l[9]) || !isdigit((unsigned char)l[10]) ||
        !isdigit((unsigned char)l[11]) || (l[12] && l[12] != ' '))
        return fail(r, "not an HTTP/1.x status line");
    r->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    if (r->status < 100)
        return fail(r, "a status code below 100");
    r->state = S_HEADER;
    return 0;
}

static int parse_header(struct http1_resp *r, char *l)
{
    char *colon = strchr(l, ':');
    if (!colon || colon == l)
        return fail(r, "a header line without a name");
    for (char *p = l; p < colon; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f || strchr("\"(),/;<=>?@[\\]{}", *p))
            return fail(r, "a header name that is not a token (or a folded line)");
    *colon = '\0';
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    size_t vl = strlen(v);
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
        v[--vl] = '\0';
    if (strcasecmp(l, "Content-Length") == 0) {
        if (!vl)
            return fail(r, "an empty Content-Length");
        long long n = 0;
        for (const char *p = v; *p; p++) {
            if (!isdigit((unsigned char)*p))
                return fail(r, "a Content-Length that is not a number");
            if (n > (1LL << 50))
                return fail(r, "a Content-Length too large");
            n = n * 10 + (*p - '0');
        }
        if (r->content_length >= 0 && r->content_length != n)
            return fail(r, "two different Content-Length headers");
        r->content_length = n;
    } else if (strcasecmp(l, "Transfer-Encoding") == 0) {
        if (strcasecmp(v, "chunked") != 0)
            return fail(r, "a transfer coding other than chunked");
        r->chunked = true;
    } else if (strcasecmp(l, "Content-Type") == 0) {
        size_t n = vl < sizeof r->content_type - 1 ? vl : sizeof r->content_type - 1;
        for (size_t i = 0; i < n; i++)
            r->content_type[i] = (unsigned char)v[i] < ' ' || v[i] == 0x7f ? '?' : v[i];
        r->content_type[n] = '\0';
    }
    return 0;
}

static int end_of_head(struct http1_resp *r)
{
    if (r->status < 200) {
        /* 100 Continue and the like: a whole new response follows */
        http1_body_fn fn = r->on_body;
        void *ctx = r->ctx;
        http1_resp_init(r, fn, ctx);
        return 0;
    }
    r->head_bytes = 0;
    if (r->status == 204 || r->status == 304) {
        r->state = S_DONE;
    } else if (r->chunked) {
        r->state = S_CHUNK_SIZE;
    } else if (r->content_length >= 0) {
        r->left = (unsigned long long)r->content_length;
        r->state = r->left ? S_BODY_LEN : S_DONE;
    } else {
        r->state = S_BODY_CLOSE;
    }
    r->complete = r->state == S_DONE;
    return 0;
}

static int parse_chunk_size(struct http1_resp *r, const char *l)
{
    unsigned long long n = 0;
    const char *p = l;
    for (; isxdigit((unsigned char)*p); p++) {
        n = n * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0' : (*p | 0x20) - 'a' + 10);
        if (n > HTTP1_CHUNK_MAX)
            return fail(r, "a chunk larger than 64 MiB");
    }
    if (p == l)
        return fail(r, "a chunk size that is not hexadecimal");
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p && *p != ';') /* ";name=value" extensions mean nothing to us */
        return fail(r, "garbage after a chunk size");
    r->left = n;
    r->state = n ? S_CHUNK_DATA : S_TRAILER;
    return 0;
}

/* A whole line (without its "\r\n") for the state that reads lines. */
static int line_done(struct http1_resp *r)
{
    char *l = r->line;
    if (r->line_len && l[r->line_len - 1] == '\r')
        r->line_len--;
    l[r->line_len] = '\0';
    if (memchr(l, '\0', r->line_len) || memchr(l, '\r', r->line_len))
        return fail(r, "a NUL or a stray CR inside a line");
    switch (r->state) {
    case S_STATUS:
        return parse_status(r, l);
    case S_HEADER:
        return r->line_len ? parse_header(r, l) : end_of_head(r);
    case S_CHUNK_SIZE:
        return parse_chunk_size(r, l);
    case S_CHUNK_END:
        if (r->line_len)
            return fail(r, "a chunk longer than its size");
        r->state = S_CHUNK_SIZE;
        return 0;
    default: /* S_TRAILER: trailer fields are read and dropped */
        if (!r->line_len) {
            r->state = S_DONE;
            r->complete = true;
        } else if (!strchr(l, ':')) {
            return fail(r, "a malformed trailer line");
        }
        return 0;
    }
}

static int deliver(struct http1_resp *r, const char *d, size_t n)
{
    return r->on_body && n && r->on_body(r->ctx, d, n) ? 1 : 0;
}

int http1_feed(struct http1_resp *r, const char *data, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t take;
        switch (r->state) {
        case S_ERROR:
            return -1;
        case S_DONE:
            return fail(r, "bytes after the end of the response");
        case S_BODY_CLOSE:
            return deliver(r, data + i, n - i);
        case S_BODY_LEN:
        case S_CHUNK_DATA:
            take = n - i < r->left ? n - i : (size_t)r->left;
            r->left -= take;
            i += take;
            if (!r->left) {
                r->state = r->state == S_BODY_LEN ? S_DONE : S_CHUNK_END;
                r->complete = r->state == S_DONE;
            }
            if (deliver(r, data + i - take, take))
                return 1;
            break;
        default: {
            const char *nl = memchr(data + i, '\n', n - i);
            take = nl ? (size_t)(nl - (data + i)) : n - i;
            if (r->line_len + take >= HTTP1_LINE_MAX)
                return fail(r, "a line longer than 8192 bytes");
            if (r->state == S_STATUS || r->state == S_HEADER) {
                r->head_bytes += take + (nl ? 1 : 0);
                if (r->head_bytes > HTTP1_HEAD_MAX)
                    return fail(r, "a response head longer than 64 KiB");
            }
            memcpy(r->line + r->line_len, data + i, take);
            r->line_len += take;
            i += take;
            if (!nl)
                return 0;
            i++;
            int rc = line_done(r);
            r->line_len = 0;
            if (rc < 0)
                return -1;
        }
        }
    }
    return 0;
}

int http1_eof(struct http1_resp *r)
{
    if (r->state == S_BODY_CLOSE) {
        r->state = S_DONE;
        r->complete = true;
    }
    if (r->state == S_DONE)
        return 0;
    if (r->state == S_ERROR)
        return -1;
    return fail(r, r->state == S_STATUS || r->state == S_HEADER
                       ? "the stream ended inside the response's head"
                       : "the stream ended inside the response's body");
}
