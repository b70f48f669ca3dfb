/* http1: a small HTTP/1.1 client for one request per connection, over any
 * byte stream: the container engine's API socket here, an ssh
 * direct-streamlocal channel to a remote node's socket later, and the static
 * guard, which cannot link libcurl. The request is formatted into a buf; the
 * response is parsed incrementally (a body split at any byte boundary),
 * de-chunked, its body handed to a callback as it arrives. Every size is
 * bounded, so a confused or hostile peer gets an error, never our memory. */
#ifndef DSV41_HTTP1_H
#define DSV41_HTTP1_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

#define HTTP1_LINE_MAX 8192      /* one status or header line */
#define HTTP1_HEAD_MAX 65536     /* the whole head, every line counted */
#define HTTP1_CHUNK_MAX (1 << 26) /* one chunk: 64 MiB, far above any engine's */

/* The body callback: non-zero stops the response (http1_feed returns 1). */
typedef int (*http1_body_fn)(void *ctx, const char *data, size_t n);

struct http1_resp {
    int status;                /* 0 until the status line is read */
    long long content_length;  /* -1 when the response has none */
    bool chunked;
    char content_type[96];     /* "" when absent */
    bool complete;             /* the whole body arrived */
    const char *error;         /* why http1_feed returned -1 (static text) */
    http1_body_fn on_body;
    void *ctx;
    /* the parser's own */
    int state;
    char line[HTTP1_LINE_MAX];
    size_t line_len, head_bytes;
    unsigned long long left;   /* of the body or of the chunk */
};

/* GET/POST/DELETE path: "Host: d" (the engines want a Host header, any
 * name), Connection: close (one request per connection: the end of a
 * body that has no length is the end of the stream), Content-Length and a
 * JSON Content-Type when body is not NULL. -1 when out of memory or when
 * method or path hold a blank or a control byte. */
int http1_request(struct buf *out, const char *method, const char *path, const char *body);

void http1_resp_init(struct http1_resp *r, http1_body_fn on_body, void *ctx);
/* 0: all of data taken (r->complete when the response ended); 1: the body
 * callback stopped it; -1: malformed (r->error says how). Bytes after the
 * end of a complete response are an error. */
int http1_feed(struct http1_resp *r, const char *data, size_t n);
/* The peer closed the stream: completes a body that runs to the close;
 * -1 (r->error) when the response was cut short. */
int http1_eof(struct http1_resp *r);

/* One exchange on a local AF_UNIX socket: connect, write req, read and feed
 * r until the response is complete, the callback stops it, cancel_fd (-1:
 * none) becomes readable, or timeout_ms passes (< 0: no deadline). Never
 * blocks past the deadline: the socket is non-blocking and every wait is a
 * poll(). 0 on a complete (or stopped, or cancelled) response, -1 with a
 * message naming the socket ("no such socket", "permission denied",
 * "timed out after N ms", ...). */
int http1_unix(const char *sock, const char *req, size_t req_len, long timeout_ms, int cancel_fd,
               struct http1_resp *r, struct buf *err);

#endif
