/* engine_at: the engine's API over any transport. engine.c speaks to a
 * local socket; a remote node's socket is reached through its ssh session
 * (a direct-streamlocal channel, node.c), which this module does not know:
 * it forms the request, hands it to the transport's exchange function and
 * reads the answer with the same parser (http1) and the same inspect
 * reading (engine_parse_inspect). Nothing of ssh here: the static guard
 * links the engine's objects without libssh2. */
#ifndef DSV41_ENGINE_AT_H
#define DSV41_ENGINE_AT_H

#include <stddef.h>

#include "buf.h"
#include "engine.h"
#include "inspect.h"

/* Besides engine.h's codes: the transport brought no answer of the
 * engine's (nothing, or bytes that are no HTTP answer). */
#define ENGINE_NO_ANSWER (-4)

/* One request, its whole answer into out (at most max bytes), within
 * timeout_ms, unless cancel_fd (-1: none) turns readable first
 * (ENGINE_CANCELLED). 0 when an answer came; otherwise negative with a
 * message (the transport's own codes pass through engine_inspect_at). */
typedef int (*engine_exchange_fn)(void *ctx, const char *sock, const char *req, size_t len,
                                  size_t max, long timeout_ms, int cancel_fd, struct buf *out,
                                  struct buf *err);

struct engine_at {
    const char *sock;           /* the socket's path where the transport reaches it */
    engine_exchange_fn exchange; /* NULL: sock is a local socket, asked directly (engine.c) */
    void *ctx;
};

/* The request GET /containers/NAME/json; -1 when name cannot go in a URL. */
int engine_inspect_request(struct buf *req, const char *name, struct buf *err);
/* Pure: a whole HTTP answer to that request into c. 0, ENGINE_NOSUCH (404),
 * ENGINE_NO_ANSWER (no HTTP answer, cut short, or malformed), or -1 (the
 * engine's error, or an inspect document that lacks a field). */
int engine_inspect_answer(const char *sock, const char *name, const char *ans, size_t len,
                          struct container_info *c, struct buf *err);
/* engine_inspect through at: the two above around the exchange (or
 * engine_inspect itself on a local socket). */
int engine_inspect_at(const struct engine_at *at, const char *name, long timeout_ms,
                      struct container_info *c, struct buf *err);
/* engine_inspect_at that also says whether the container has a TTY (how
 * its log is read: engine_logs_reader_new). */
int engine_inspect_tty_at(const struct engine_at *at, const char *name, long timeout_ms,
                          struct container_info *c, bool *tty, struct buf *err);
/* engine_call through at: the answer's status and body (at most
 * ENGINE_BODY_MAX). 0 when the engine answered (any status),
 * ENGINE_NO_ANSWER, or the transport's code. */
int engine_call_at(const struct engine_at *at, const char *method, const char *path,
                   long timeout_ms, struct buf *body, int *status, struct buf *err);
/* engine_kill and engine_stop through at, with their codes. */
int engine_kill_at(const struct engine_at *at, const char *name, const char *signal,
                   long timeout_ms, struct buf *err);
int engine_stop_at(const struct engine_at *at, const char *name, int timeout_s, struct buf *err);
/* engine_stop_at that cancel_fd (-1: none) ends: ENGINE_CANCELLED. */
int engine_stop_at_cancel(const struct engine_at *at, const char *name, int timeout_s,
                          int cancel_fd, struct buf *err);
/* A log's last tail lines (< 0: all) through at, as engine_logs gives
 * them (not followed): one exchange with a transport. engine_logs's codes,
 * ENGINE_NO_ANSWER, or the transport's. */
int engine_logs_at(const struct engine_at *at, const char *name, int tail, long timeout_ms,
                   engine_line_fn fn, void *ctx, struct buf *err);
/* engine_remove through at: SIGKILL, then DELETE ?force=true. */
int engine_remove_at(const struct engine_at *at, const char *name, long timeout_ms,
                     struct buf *err);
/* The lines a ct section holds for one rank, as engine_into writes them
 * (snapshot_local.c): the inspect line, "Error: no such container NAME",
 * or the error; returns 1 when the rank makes the CLI's exit status
 * non-zero, else 0. */
int engine_ct_line(struct buf *lines, const char *name, int rc, const struct container_info *c,
                   const struct buf *err);

#endif
