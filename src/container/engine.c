#include "engine.h"
#include "text.h"
#include "engine_at.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http1.h"
#include "jscan.h"

static int put_path(char *out, size_t sz, const char *path, const char *from, struct buf *err)
{
    if (strncmp(path, "unix://", 7) == 0)
        path += 7;
    if (path[0] != '/') {
        buf_printf(err, "%s: \"%s\" is no unix socket (unix:///PATH or an absolute path); "
                        "the runtime's CLI is used there",
                   from, path);
        return -1;
    }
    if ((size_t)snprintf(out, sz, "%s", path) >= sz) {
        buf_printf(err, "%s: the socket's path is too long", from);
        return -1;
    }
    return 0;
}

int engine_socket(const char *runtime, const char *setting, char *out, size_t sz,
                  struct buf *err)
{
    if (setting && strcmp(setting, "none") == 0) {
        buf_puts(err, "the engine socket setting is none: the runtime's CLI is used");
        return -1;
    }
    if (setting && *setting)
        return put_path(out, sz, setting, "the engine socket setting", err);
    bool docker = strcmp(runtime, "docker") == 0;
    if (!docker && strcmp(runtime, "podman") != 0) {
        buf_printf(err, "runtime \"%s\": no API socket known (docker or podman)", runtime);
        return -1;
    }
    const char *var = docker ? "DOCKER_HOST" : "CONTAINER_HOST";
    const char *host = getenv(var);
    if (host && *host)
        return put_path(out, sz, host, var, err);
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    int n;
    if (docker)
        n = snprintf(out, sz, "/var/run/docker.sock");
    else if (geteuid() == 0)
        n = snprintf(out, sz, "/run/podman/podman.sock");
    else if (xdg && xdg[0] == '/')
        n = snprintf(out, sz, "%s/podman/podman.sock", xdg);
    else
        n = snprintf(out, sz, "/run/user/%u/podman/podman.sock", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= sz) {
        buf_printf(err, "%s's API socket: the path is too long", runtime);
        return -1;
    }
    return 0;
}

int engine_name_ok(const char *name, struct buf *err)
{
    size_t n = strlen(name);
    bool ok = n > 0 && n <= ENGINE_NAME_MAX && strchr("-_.", name[0]) == NULL;
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.' || c == '-';
    }
    if (!ok)
        buf_printf(err, "container name \"%.80s\": only letters, digits and _.- (not first), "
                        "at most %d, go to the engine's API (rank names are dsv41-rN)",
                   name, ENGINE_NAME_MAX);
    return ok ? 0 : -1;
}

int engine_body_take(void *ctx, const char *d, size_t n)
{
    struct engine_body *c = ctx;
    if (c->body->len + n > ENGINE_BODY_MAX || buf_append(c->body, d, n) < 0) {
        c->over = true;
        return 1;
    }
    return 0;
}

int engine_call_cancel(const char *sock, const char *method, const char *path, long timeout_ms,
                       int cancel_fd, struct buf *body, int *status, struct buf *err)
{
    struct buf req = BUF_INIT;
    if (http1_request(&req, method, path, NULL) < 0) {
        buf_free(&req);
        buf_printf(err, "%s: cannot form the request %s %s", sock, method, path);
        return -1;
    }
    struct engine_body c = {body, false};
    struct http1_resp *r = malloc(sizeof *r); /* 8 KiB of line buffer: not on the stack */
    if (!r) {
        buf_free(&req);
        buf_printf(err, "%s: out of memory", sock);
        return -1;
    }
    http1_resp_init(r, engine_body_take, &c);
    int rc = http1_unix(sock, req.data, req.len, timeout_ms, cancel_fd, r, err);
    *status = r->status;
    /* http1_unix ends a response early for the callback (too large) or for
     * cancel_fd; otherwise a 0 is a complete answer */
    bool cut = rc == 0 && !r->complete && !c.over;
    free(r);
    buf_free(&req);
    if (cut) {
        buf_printf(err, "%s: %s %s: interrupted", sock, method, path);
        return ENGINE_CANCELLED;
    }
    if (rc == 0 && c.over) {
        buf_printf(err, "%s: %s %s: an answer larger than %u bytes", sock, method, path,
                   ENGINE_BODY_MAX);
        return -1;
    }
    return rc;
}

int engine_call(const char *sock, const char *method, const char *path, long timeout_ms,
                struct buf *body, int *status, struct buf *err)
{
    return engine_call_cancel(sock, method, path, timeout_ms, -1, body, status, err);
}

void engine_error(struct buf *err, const char *sock, const char *what, int status,
                  const struct buf *body)
{
    /* the engines answer {"message": "..."} (podman adds "cause") */
    struct jscan_val v;
    struct buf msg = BUF_INIT;
    if (jscan_get_dotted(buf_str(body), body->len, "message", &v, NULL) == 0)
        jscan_string(&v, &msg);
    char clean[512];
    text_copy_field(clean, sizeof clean, buf_str(&msg), msg.len);
    buf_printf(err, "%s: %s: %s (HTTP %d)", sock, what, clean[0] ? clean : "no message", status);
    buf_free(&msg);
}

int engine_ping(const char *sock, long timeout_ms, struct buf *err)
{
    struct buf body = BUF_INIT;
    int status = 0;
    int rc = engine_call(sock, "GET", "/_ping", timeout_ms, &body, &status, err);
    if (rc == 0 && (status != 200 || strcmp(buf_str(&body), "OK") != 0)) {
        engine_error(err, sock, "ping", status, &body);
        rc = -1;
    }
    buf_free(&body);
    return rc;
}

int engine_name_status(const char *sock, const char *name, const char *verb, int status,
                       const struct buf *body, struct buf *err)
{
    char what[128];
    snprintf(what, sizeof what, "%s %s", verb, name);
    engine_error(err, sock, what, status, body);
    return status == 404 ? ENGINE_NOSUCH : -1;
}

int engine_inspect_as(const char *sock, const char *name, const char *verb, long timeout_ms,
                      struct container_info *c, bool *tty, struct buf *err)
{
    memset(c, 0, sizeof *c);
    if (engine_name_ok(name, err) < 0)
        return -1;
    char path[128];
    snprintf(path, sizeof path, "/containers/%s/json", name);
    struct buf body = BUF_INIT;
    int status = 0;
    int rc = engine_call(sock, "GET", path, timeout_ms, &body, &status, err);
    if (rc == 0 && status != 200) {
        rc = engine_name_status(sock, name, verb, status, &body, err);
    } else if (rc == 0) {
        const char *why = NULL;
        if (engine_parse_inspect(body.data, body.len, c, tty, &why) < 0) {
            buf_printf(err, "%s: %s %s: %s", sock, verb, name, why);
            rc = -1;
        }
    }
    buf_free(&body);
    return rc;
}

int engine_inspect(const char *sock, const char *name, long timeout_ms,
                   struct container_info *c, struct buf *err)
{
    return engine_inspect_as(sock, name, "inspect", timeout_ms, c, NULL, err);
}

/* The verbs are engine_at's (written once for every transport); here
 * the transport is the local socket itself (an engine_at without exchange). */
int engine_kill(const char *sock, const char *name, const char *signal, long timeout_ms,
                struct buf *err)
{
    return engine_kill_at(&(struct engine_at){sock, NULL, NULL}, name, signal, timeout_ms, err);
}

int engine_stop(const char *sock, const char *name, int timeout_s, struct buf *err)
{
    return engine_stop_cancel(sock, name, timeout_s, -1, err);
}

int engine_stop_cancel(const char *sock, const char *name, int timeout_s, int cancel_fd,
                       struct buf *err)
{
    return engine_stop_at_cancel(&(struct engine_at){sock, NULL, NULL}, name, timeout_s,
                                 cancel_fd, err);
}

int engine_remove(const char *sock, const char *name, long timeout_ms, struct buf *err)
{
    return engine_remove_at(&(struct engine_at){sock, NULL, NULL}, name, timeout_ms, err);
}
