/* engine: the container engine's HTTP API on its unix socket (Docker Engine
 * API; podman's Docker-compatible API serves the same paths), so that a
 * container's state, logs, kill and stop cost no process: the console
 * samples every few seconds, and the guard must find a PID under memory
 * pressure. One request per connection (http1), unversioned paths (podman
 * 4.3 takes any /v1.x/ prefix and none; docker takes none as its newest).
 * A container name goes into a URL path: only [A-Za-z0-9][A-Za-z0-9_.-]*
 * is taken (rank names are dsv41-rN), anything else is refused, never
 * escaped. Nothing reaches a shell. */
#ifndef DSV41_ENGINE_H
#define DSV41_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "inspect.h"

/* Return codes besides 0 and -1 (an error, message in err). */
#define ENGINE_NOSUCH (-2)      /* 404: no such container */
#define ENGINE_NOT_RUNNING (-3) /* kill: the container is not running */
#define ENGINE_CANCELLED (-5)   /* the cancel fd said so before the answer came */

#define ENGINE_NAME_MAX 64
#define ENGINE_BODY_MAX (4u << 20) /* an inspect or error body; more is an error */
#define ENGINE_LINE_MAX 65536      /* a log line longer than this comes in pieces */

/* The API socket of runtime ("docker" or "podman"): setting (an explicit
 * path or unix://PATH; "none" for none, -1 then; NULL or "" to find it) first, then docker's
 * $DOCKER_HOST / podman's $CONTAINER_HOST when they name unix://PATH, then
 * /var/run/docker.sock, or podman's root socket /run/podman/podman.sock
 * (root) or $XDG_RUNTIME_DIR/podman/podman.sock (/run/user/UID/... without
 * it). -1 with a message when the setting or the variable names no unix
 * socket (tcp://, ssh://: the CLI is the way there) or the path is too long. */
int engine_socket(const char *runtime, const char *setting, char *out, size_t sz,
                  struct buf *err);
/* 0 when name may go into a URL path, else -1 with a message. */
int engine_name_ok(const char *name, struct buf *err);

/* GET /_ping: 0 when the engine answers "OK". */
int engine_ping(const char *sock, long timeout_ms, struct buf *err);
/* GET /containers/NAME/json into c, the fields inspect_parse_line
 * fills, from the same places (the name without docker's '/', StartedAt as
 * the engine writes it: RFC 3339, which inspect_parse_started reads; the
 * image id without "sha256:", as podman's CLI prints it). 0, ENGINE_NOSUCH,
 * or -1. timeout_ms < 0: no deadline. */
int engine_inspect(const char *sock, const char *name, long timeout_ms,
                   struct container_info *c, struct buf *err);
/* engine_inspect for another verb's sake (its errors say "VERB NAME"), with
 * Config.Tty into *tty when tty is not NULL: logs reads the body by it. */
int engine_inspect_as(const char *sock, const char *name, const char *verb, long timeout_ms,
                      struct container_info *c, bool *tty, struct buf *err);
/* The pure part: an inspect document into c (and Config.Tty into *tty,
 * when tty is not NULL); -1 with *why when it is malformed or lacks a field. */
int engine_parse_inspect(const char *json, size_t len, struct container_info *c, bool *tty,
                         const char **why);
/* POST /containers/NAME/kill?signal=SIG (a name: "KILL", "TERM"). 0,
 * ENGINE_NOSUCH, ENGINE_NOT_RUNNING (docker's 409, podman's 500 "container
 * state improper"), or -1. */
int engine_kill(const char *sock, const char *name, const char *signal, long timeout_ms,
                struct buf *err);
/* POST /containers/NAME/stop?t=N: the stop signal, N s, then SIGKILL. The
 * deadline is N s plus a margin of 15 s. 0 also when it was not running
 * (304), ENGINE_NOSUCH, or -1. */
int engine_stop(const char *sock, const char *name, int timeout_s, struct buf *err);
/* engine_stop that gives up when cancel_fd (-1: none) becomes readable:
 * ENGINE_CANCELLED (the engine goes on stopping it). */
int engine_stop_cancel(const char *sock, const char *name, int timeout_s, int cancel_fd,
                       struct buf *err);
/* SIGKILL, then DELETE /containers/NAME?force=true: gone at once, as
 * `rm -f -t 0`. 0, ENGINE_NOSUCH, or -1. */
int engine_remove(const char *sock, const char *name, long timeout_ms, struct buf *err);

/* One log line (without its '\n'): stream 1 stdout, 2 stderr (a TTY
 * container's one stream is 1). Remote text: clean it before showing it.
 * Non-zero stops the logs. */
typedef int (*engine_line_fn)(void *ctx, int stream, const char *line, size_t len);
struct engine_logs_opt {
    bool follow;     /* keep reading: lines as they are written */
    int tail;        /* the last N lines first; < 0: all */
    long timeout_ms; /* the whole call's deadline; < 0: none (follow) */
    int cancel_fd;   /* -1, or an fd that becomes readable to stop (a pipe) */
};
/* GET /containers/NAME/logs: stdout and stderr, demultiplexed (or raw for a
 * TTY container), in lines. Ends when the engine ends the stream (not
 * following, or the container exited), fn stops it, or cancel_fd says so:
 * 0; ENGINE_NOSUCH; -1 on an error or the deadline. */
int engine_logs(const char *sock, const char *name, const struct engine_logs_opt *o,
                engine_line_fn fn, void *ctx, struct buf *err);

/* The pieces of engine_logs for any transport (a remote node's socket
 * through its session, logstream.c): the request; a reader fed the answer's
 * bytes as they come (tty: the container's Config.Tty, which podman's
 * content type does not tell), the lines to fn; its end (eof: the far end
 * closed, so a body that runs to the close is complete) with engine_logs's
 * codes. feed: non-zero once it takes no more (the answer is whole, fn
 * stopped it, or it is malformed: end says which). */
int engine_logs_request(struct buf *req, const char *name, bool follow, int tail); /* -1: bad name */
struct engine_logs_reader;
struct engine_logs_reader *engine_logs_reader_new(bool tty, engine_line_fn fn, void *ctx);
int engine_logs_reader_feed(struct engine_logs_reader *rd, const char *d, size_t n);
int engine_logs_reader_end(struct engine_logs_reader *rd, const char *sock, const char *name,
                           bool eof, struct buf *err);
void engine_logs_reader_free(struct engine_logs_reader *rd);

/* For engine.c and engine_logs.c: one request, its body collected (at most
 * ENGINE_BODY_MAX) and its status. 0 when an answer came (any status). */
int engine_call(const char *sock, const char *method, const char *path, long timeout_ms,
                struct buf *body, int *status, struct buf *err);
/* engine_call that ends when cancel_fd (-1: none) becomes readable:
 * ENGINE_CANCELLED. */
int engine_call_cancel(const char *sock, const char *method, const char *path, long timeout_ms,
                       int cancel_fd, struct buf *body, int *status, struct buf *err);
/* An answer's body collected into body (at most ENGINE_BODY_MAX; over:
 * there was more), as http1's body callback with an engine_body ctx. */
struct engine_body {
    struct buf *body;
    bool over;
};
int engine_body_take(void *ctx, const char *d, size_t n);
/* A verb's error answer for NAME into err: ENGINE_NOSUCH for a 404, else -1. */
int engine_name_status(const char *sock, const char *name, const char *verb, int status,
                       const struct buf *body, struct buf *err);
/* An error answer as a message: "SOCK: WHAT: the engine's message (HTTP N)". */
void engine_error(struct buf *err, const char *sock, const char *what, int status,
                  const struct buf *body);

#endif
