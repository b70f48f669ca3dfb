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

struct body {
    struct buf *b;
    bool over;
};

static int take_body(void *ctx, const char *d, size_t n)
{
    struct body *c = ctx;
    if (c->b->len + n > ENGINE_BODY_MAX || buf_append(c->b, d, n) < 0) {
        c->over = true;
        return 1;
    }
    return 0;
}

int engine_inspect_answer(const char *sock, const char *name, const char *ans, size_t len,
                          struct probe_container *c, struct buf *err)
{
    memset(c, 0, sizeof *c);
    struct buf body = BUF_INIT;
    struct body bc = {&body, false};
    struct http1_resp *r = malloc(sizeof *r); /* its line buffer: not on the stack */
    if (!r) {
        buf_printf(err, "%s: out of memory", sock);
        return -1;
    }
    http1_resp_init(r, take_body, &bc);
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
        if (engine_parse_inspect(body.data, body.len, c, NULL, &why) < 0) {
            buf_printf(err, "%s: inspect %s: %s", sock, name, why);
            rc = -1;
        }
    }
    free(r);
    buf_free(&body);
    return rc;
}

int engine_inspect_at(const struct engine_at *at, const char *name, long timeout_ms,
                      struct probe_container *c, struct buf *err)
{
    memset(c, 0, sizeof *c);
    struct buf req = BUF_INIT, ans = BUF_INIT;
    int rc = engine_inspect_request(&req, name, err);
    if (rc == 0)
        rc = at->exchange(at->ctx, at->sock, req.data, req.len, ENGINE_BODY_MAX + 65536,
                          timeout_ms, &ans, err);
    if (rc == 0)
        rc = engine_inspect_answer(at->sock, name, ans.data ? ans.data : "", ans.len, c, err);
    buf_free(&req);
    buf_free(&ans);
    return rc;
}

int engine_ct_line(struct buf *lines, const char *name, int rc, const struct probe_container *c,
                   const struct buf *err)
{
    if (rc == 0) {
        probe_format_inspect_line(lines, c);
        return 0;
    }
    if (rc == ENGINE_NOSUCH)
        buf_printf(lines, "Error: no such container %s\n", name);
    else
        buf_printf(lines, "%s\n", buf_str(err));
    return 1;
}
