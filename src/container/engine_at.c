#include "engine_at.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http1.h"

int engine_inspect_request(struct buf *req, const char *name, struct buf *err)
{
    if (engine_name_ok(name, err) < 0)
        return -1;
    char path[128];
    snprintf(path, sizeof path, "/containers/%s/json", name);
    if (http1_request(req, "GET", path, NULL) < 0) {
        buf_printf(err, "inspect %s: cannot form the request", name);
        return -1;
    }
    return 0;
}


static int inspect_answer(const char *sock, const char *name, const char *ans, size_t len,
                          struct container_info *c, bool *tty, struct buf *err)
{
    memset(c, 0, sizeof *c);
    struct buf body = BUF_INIT;
    struct engine_body bc = {&body, false};
    struct http1_resp *r = malloc(sizeof *r); /* its line buffer: not on the stack */
    if (!r) {
        buf_printf(err, "%s: out of memory", sock);
        return -1;
    }
    http1_resp_init(r, engine_body_take, &bc);
    int fr = http1_feed(r, ans, len);
    if (fr == 0 && !r->complete)
        fr = http1_eof(r);
    int status = r->status, rc = 0;
    if (fr < 0 || bc.over || !r->complete || !status) {
        buf_printf(err, "%s: inspect %s: no answer of the engine's (%s)", sock, name,
                   bc.over ? "too large" : !len ? "nothing came" : r->error ? r->error
                                                                             : "cut short");
        rc = ENGINE_NO_ANSWER;
    } else if (status != 200) {
        char what[128];
        snprintf(what, sizeof what, "inspect %s", name);
        engine_error(err, sock, what, status, &body);
        rc = status == 404 ? ENGINE_NOSUCH : -1;
    } else {
        const char *why = NULL;
        if (engine_parse_inspect(body.data, body.len, c, tty, &why) < 0) {
            buf_printf(err, "%s: inspect %s: %s", sock, name, why);
            rc = -1;
        }
    }
    free(r);
    buf_free(&body);
    return rc;
}

int engine_inspect_answer(const char *sock, const char *name, const char *ans, size_t len,
                          struct container_info *c, struct buf *err)
{
    return inspect_answer(sock, name, ans, len, c, NULL, err);
}

int engine_inspect_at(const struct engine_at *at, const char *name, long timeout_ms,
                      struct container_info *c, struct buf *err)
{
    return engine_inspect_tty_at(at, name, timeout_ms, c, NULL, err);
}

int engine_inspect_tty_at(const struct engine_at *at, const char *name, long timeout_ms,
                          struct container_info *c, bool *tty, struct buf *err)
{
    if (!at->exchange)
        return engine_inspect_as(at->sock, name, "inspect", timeout_ms, c, tty, err);
    memset(c, 0, sizeof *c);
    struct buf req = BUF_INIT, ans = BUF_INIT;
    int rc = engine_inspect_request(&req, name, err);
    if (rc == 0)
        rc = at->exchange(at->ctx, at->sock, req.data, req.len, ENGINE_BODY_MAX + 65536,
                          timeout_ms, -1, &ans, err);
    if (rc == 0)
        rc = inspect_answer(at->sock, name, ans.data ? ans.data : "", ans.len, c, tty, err);
    buf_free(&req);
    buf_free(&ans);
    return rc;
}

int engine_ct_line(struct buf *lines, const char *name, int rc, const struct container_info *c,
                   const struct buf *err)
{
    if (rc == 0) {
        inspect_format_line(lines, c);
        return 0;
    }
    if (rc == ENGINE_NOSUCH)
        buf_printf(lines, "Error: no such container %s\n", name);
    else
        buf_printf(lines, "%s\n", buf_str(err));
    return 1;
}

static int call_at(const struct engine_at *at, const char *method, const char *path,
                   long timeout_ms, int cancel_fd, struct buf *body, int *status,
                   struct buf *err);

int engine_call_at(const struct engine_at *at, const char *method, const char *path,
                   long timeout_ms, struct buf *body, int *status, struct buf *err)
{
    return call_at(at, method, path, timeout_ms, -1, body, status, err);
}

/* The local socket (no exchange: engine_call_cancel) or the transport's
 * exchange, its answer read here; cancel_fd may end either. */
static int call_at(const struct engine_at *at, const char *method, const char *path,
                   long timeout_ms, int cancel_fd, struct buf *body, int *status,
                   struct buf *err)
{
    if (!at->exchange)
        return engine_call_cancel(at->sock, method, path, timeout_ms, cancel_fd, body, status,
                                  err);
    *status = 0;
    struct buf req = BUF_INIT, ans = BUF_INIT;
    int rc = 0;
    if (http1_request(&req, method, path, NULL) < 0) {
        buf_printf(err, "%s: cannot form the request %s %s", at->sock, method, path);
        rc = -1;
    }
    if (rc == 0)
        rc = at->exchange(at->ctx, at->sock, req.data, req.len, ENGINE_BODY_MAX + 65536,
                          timeout_ms, cancel_fd, &ans, err);
    struct http1_resp *r = rc == 0 ? malloc(sizeof *r) : NULL;
    if (rc == 0 && !r) {
        buf_printf(err, "%s: out of memory", at->sock);
        rc = -1;
    }
    if (r) {
        struct engine_body bc = {body, false};
        http1_resp_init(r, engine_body_take, &bc);
        int fr = http1_feed(r, ans.data ? ans.data : "", ans.len);
        if (fr == 0 && !r->complete)
            fr = http1_eof(r);
        if (fr < 0 || bc.over || !r->complete || !r->status) {
            buf_printf(err, "%s: %s %s: no answer of the engine's (%s)", at->sock, method, path,
                       bc.over ? "too large" : !ans.len ? "nothing came" : r->error ? r->error
                                                                                  : "cut short");
            rc = ENGINE_NO_ANSWER;
        }
        *status = r->status;
        free(r);
    }
    buf_free(&req);
    buf_free(&ans);
    return rc;
}

int engine_kill_at(const struct engine_at *at, const char *name, const char *signal,
                   long timeout_ms, struct buf *err)
{
    bool ok = *signal && strlen(signal) < 16;
    for (const char *p = signal; ok && *p; p++)
        ok = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
    if (!ok) {
        buf_printf(err, "kill %s: signal \"%.20s\" is no signal name (KILL, TERM)", name, signal);
        return -1;
    }
    if (engine_name_ok(name, err) < 0)
        return -1;
    char path[160];
    snprintf(path, sizeof path, "/containers/%s/kill?signal=%s", name, signal);
    struct buf body = BUF_INIT;
    int status = 0;
    int rc = engine_call_at(at, "POST", path, timeout_ms, &body, &status, err);
    if (rc == 0 && status != 204 && status != 200) {
        rc = engine_name_status(at->sock, name, "kill", status, &body, err);
        /* docker says 409; podman 4.3 says 500 with this cause */
        if (status == 409 || (status == 500 && strstr(buf_str(&body), "state improper")))
            rc = ENGINE_NOT_RUNNING;
    }
    buf_free(&body);
    return rc;
}

int engine_stop_at(const struct engine_at *at, const char *name, int timeout_s, struct buf *err)
{
    return engine_stop_at_cancel(at, name, timeout_s, -1, err);
}

int engine_stop_at_cancel(const struct engine_at *at, const char *name, int timeout_s,
                          int cancel_fd, struct buf *err)
{
    if (timeout_s < 0 || timeout_s > 3600) {
        buf_printf(err, "stop %s: a timeout of %d s (0 to 3600)", name, timeout_s);
        return -1;
    }
    if (engine_name_ok(name, err) < 0)
        return -1;
    char path[160];
    snprintf(path, sizeof path, "/containers/%s/stop?t=%d", name, timeout_s);
    struct buf body = BUF_INIT;
    int status = 0;
    /* the engine answers once the container is gone: up to t s, then the
     * kill and its reaping */
    int rc = call_at(at, "POST", path, (long)timeout_s * 1000 + 15000, cancel_fd, &body, &status,
                     err);
    if (rc == 0 && status != 204 && status != 304 && status != 200)
        rc = engine_name_status(at->sock, name, "stop", status, &body, err);
    buf_free(&body);
    return rc;
}

int engine_remove_at(const struct engine_at *at, const char *name, long timeout_ms,
                     struct buf *err)
{
    /* SIGKILL first: podman's compatible DELETE ?force=true stops with the
     * container's stop timeout (10 s), where the caller wants it gone now,
     * as `rm -f -t 0`. A container that is not running: not worth a word. */
    struct buf why = BUF_INIT;
    int rc = engine_kill_at(at, name, "KILL", timeout_ms, &why);
    if (rc != 0 && rc != ENGINE_NOT_RUNNING)
        buf_puts(err, buf_str(&why));
    buf_free(&why);
    if (rc != 0 && rc != ENGINE_NOT_RUNNING)
        return rc;
    char path[160];
    snprintf(path, sizeof path, "/containers/%s?force=true", name);
    struct buf body = BUF_INIT;
    int status = 0;
    rc = engine_call_at(at, "DELETE", path, timeout_ms, &body, &status, err);
    if (rc == 0 && status != 204 && status != 200)
        rc = engine_name_status(at->sock, name, "remove", status, &body, err);
    buf_free(&body);
    return rc;
}
