/* engine_logs: a container's log through the API: the multiplexed frames
 * (engine_frames) or a TTY container's raw stream, cut into lines per
 * stream, so a stdout line and a stderr line written at once never mix. */
#include "engine.h"
#include "engine_at.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_frames.h"
#include "http1.h"
#include "interrupt.h"

struct logs {
    struct http1_resp r;
    bool tty, decided, raw, stopped;
    const char *bad;
    struct engine_frames fr;
    struct buf line[3], errbody;
    engine_line_fn fn;
    void *ctx;
};

static int line_out(struct logs *l, int s)
{
    struct buf *b = &l->line[s];
    size_t n = b->len;
    if (n && b->data[n - 1] == '\r')
        n--;
    int stop = l->fn && l->fn(l->ctx, s, buf_str(b), n);
    buf_reset(b);
    if (stop)
        l->stopped = true;
    return stop;
}

/* Payload bytes of stream s, wherever lines begin and end in them. */
static int emit(struct logs *l, int s, const char *d, size_t n)
{
    struct buf *b = &l->line[s];
    while (n) {
        const char *nl = memchr(d, '\n', n);
        size_t take = nl ? (size_t)(nl - d) : n;
        if (take > ENGINE_LINE_MAX - b->len)
            take = ENGINE_LINE_MAX - b->len;
        if (buf_append(b, d, take) < 0) {
            l->bad = "out of memory";
            return 1;
        }
        d += take;
        n -= take;
        bool end = n && *d == '\n';
        if (end)
            d++, n--;
        if ((end || b->len >= ENGINE_LINE_MAX) && line_out(l, s))
            return 1;
    }
    return 0;
}

static int on_frame(void *ctx, int stream, const char *d, size_t n)
{
    return emit(ctx, stream, d, n);
}

static int on_body(void *ctx, const char *d, size_t n)
{
    struct logs *l = ctx;
    if (l->r.status != 200) {
        if (l->errbody.len < 65536)
            buf_append(&l->errbody, d, n < 65536 - l->errbody.len ? n : 65536 - l->errbody.len);
        return 0;
    }
    if (!l->decided) {
        /* docker >= 1.42 names the stream; podman 4.3 says octet-stream
         * for both, so the container's Config.Tty decides */
        const char *ct = l->r.content_type;
        l->raw = strstr(ct, "raw-stream") ? true : strstr(ct, "multiplexed-stream") ? false : l->tty;
        l->decided = true;
    }
    if (l->raw)
        return emit(l, 1, d, n);
    int rc = engine_frames_feed(&l->fr, d, n, on_frame, l);
    if (rc < 0)
        l->bad = l->fr.error;
    return rc != 0;
}

int engine_logs_request(struct buf *req, const char *name, bool follow, int tail)
{
    struct buf why = BUF_INIT;
    int ok = engine_name_ok(name, &why);
    buf_free(&why);
    if (ok < 0)
        return -1;
    char path[200], t[16];
    snprintf(t, sizeof t, tail < 0 ? "all" : "%d", tail);
    snprintf(path, sizeof path,
             "/containers/%s/logs?stdout=1&stderr=1&timestamps=0&follow=%d&tail=%s", name,
             follow ? 1 : 0, t);
    return http1_request(req, "GET", path, NULL);
}

struct engine_logs_reader *engine_logs_reader_new(bool tty, engine_line_fn fn, void *ctx)
{
    struct logs *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->tty = tty;
    l->fn = fn;
    l->ctx = ctx;
    engine_frames_init(&l->fr);
    http1_resp_init(&l->r, on_body, l);
    return (struct engine_logs_reader *)l;
}

int engine_logs_reader_feed(struct engine_logs_reader *rd, const char *d, size_t n)
{
    struct logs *l = (struct logs *)rd;
    if (l->stopped || l->bad || l->r.error || l->r.complete)
        return 1;
    return http1_feed(&l->r, d, n) != 0 || l->r.complete;
}

int engine_logs_reader_end(struct engine_logs_reader *rd, const char *sock, const char *name,
                           bool eof, struct buf *err)
{
    struct logs *l = (struct logs *)rd;
    bool cut = l->stopped || l->bad || l->r.error;
    if (eof && !l->r.complete && !cut)
        http1_eof(&l->r);
    if (!l->r.status) {
        buf_printf(err, "%s: logs %s: no answer of the engine's (%s)", sock, name,
                   l->bad ? l->bad : l->r.error ? l->r.error : "nothing came");
        return ENGINE_NO_ANSWER;
    }
    if (l->r.status != 200) {
        char what[128];
        snprintf(what, sizeof what, "logs %s", name);
        engine_error(err, sock, what, l->r.status, &l->errbody);
        return l->r.status == 404 ? ENGINE_NOSUCH : -1;
    }
    if (!l->bad && l->r.complete && !l->raw && engine_frames_end(&l->fr) < 0)
        l->bad = l->fr.error;
    /* a last line without its newline (the container's last words, or
     * what came before the cut) */
    for (int s = 0; s < 3 && !l->stopped && !l->bad; s++)
        if (l->line[s].len)
            line_out(l, s);
    if (l->bad || (l->r.error && !l->stopped)) {
        buf_printf(err, "%s: logs %s: a malformed log stream: %s", sock, name,
                   l->bad ? l->bad : l->r.error);
        return -1;
    }
    if (!l->r.complete && !l->stopped) {
        buf_printf(err, "%s: logs %s: the stream was cut short", sock, name);
        return -1;
    }
    return 0;
}

void engine_logs_reader_free(struct engine_logs_reader *rd)
{
    struct logs *l = (struct logs *)rd;
    if (!l)
        return;
    for (int s = 0; s < 3; s++)
        buf_free(&l->line[s]);
    buf_free(&l->errbody);
    free(l);
}

int engine_logs(const char *sock, const char *name, const struct engine_logs_opt *o,
                engine_line_fn fn, void *ctx, struct buf *err)
{
    /* the inspect first: Config.Tty says how to read the body, and a
     * missing container is told apart before any stream */
    struct container_info c;
    bool tty = false;
    long t = o->timeout_ms;
    int rc = engine_inspect_as(sock, name, "logs", t < 0 || t > 10000 ? 10000 : t, &c, &tty, err);
    if (rc != 0)
        return rc;
    struct engine_logs_reader *rd = engine_logs_reader_new(tty, fn, ctx);
    struct buf req = BUF_INIT;
    if (!rd || engine_logs_request(&req, name, o->follow, o->tail) < 0) {
        buf_printf(err, "%s: logs %s: out of memory", sock, name);
        engine_logs_reader_free(rd);
        buf_free(&req);
        return -1;
    }
    struct logs *l = (struct logs *)rd;
    rc = http1_unix(sock, req.data, req.len, o->timeout_ms, o->cancel_fd, &l->r, err);
    buf_free(&req);
    if (cancel_fd_set(o->cancel_fd))
        l->stopped = true; /* its caller ended it: no cut to speak of */
    if (rc == 0)
        rc = engine_logs_reader_end(rd, sock, name, false, err);
    engine_logs_reader_free(rd);
    return rc < 0 && rc != ENGINE_NOSUCH ? -1 : rc;
}

/* a log's tail in one answer through a transport: room for the frames of
 * a long tail; a larger answer is no answer (the caller's CLI then) */
#define LOGS_AT_MAX (16u << 20)

int engine_logs_at(const struct engine_at *at, const char *name, int tail, long timeout_ms,
                   engine_line_fn fn, void *ctx, struct buf *err)
{
    if (!at->exchange) {
        struct engine_logs_opt o = {.follow = false, .tail = tail, .timeout_ms = timeout_ms,
                                    .cancel_fd = -1};
        return engine_logs(at->sock, name, &o, fn, ctx, err);
    }
    struct container_info c;
    bool tty = false;
    int rc = engine_inspect_tty_at(at, name, timeout_ms, &c, &tty, err);
    if (rc != 0)
        return rc;
    struct engine_logs_reader *rd = engine_logs_reader_new(tty, fn, ctx);
    struct buf req = BUF_INIT, ans = BUF_INIT;
    if (!rd || engine_logs_request(&req, name, false, tail) < 0) {
        buf_printf(err, "%s: logs %s: out of memory", at->sock, name);
        rc = -1;
    }
    if (rc == 0)
        rc = at->exchange(at->ctx, at->sock, req.data, req.len, LOGS_AT_MAX, timeout_ms, -1, &ans,
                          err);
    if (rc == 0) {
        engine_logs_reader_feed(rd, ans.data ? ans.data : "", ans.len);
        rc = engine_logs_reader_end(rd, at->sock, name, true, err);
    }
    engine_logs_reader_free(rd);
    buf_free(&req);
    buf_free(&ans);
    return rc;
}
