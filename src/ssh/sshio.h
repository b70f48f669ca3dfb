/* sshio: the I/O thread that owns one remote node's ssh session. It keeps the
 * session (connect, keepalive, reconnect with backoff) and drives all of its
 * channels without blocking: short commands (sshio_run) and long-lived
 * streams whose output is delivered line by line (sshio_stream_open). Callers
 * on any thread only queue work and wait; libssh2 is touched by this thread
 * alone. */
#ifndef DSV41_SSHIO_H
#define DSV41_SSHIO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "ssh.h"
#include "sshconf.h"

struct sshio;
struct sshio_stream;

/* Called on the I/O thread for each line of a stream (without '\n'; a line
 * longer than 1 MiB is delivered in pieces). up=false when the stream ended
 * or the session broke; it restarts by itself when the session is back. */
typedef void (*sshio_line_fn)(void *ctx, const char *line, size_t len);
typedef void (*sshio_event_fn)(void *ctx, bool up);
/* Non-zero: no more is wanted (the answer is whole, or cannot be read):
 * the stream ends. */
typedef int (*sshio_bytes_fn)(void *ctx, const char *data, size_t len);

struct sshio *sshio_start(const char *name, const struct ssh_target *t, const char *known_hosts,
                          int timeout_ms);
void sshio_stop(struct sshio *io);
/* Runs a command; 0 when it ran (res->exit_status), -1 when the node could
 * not be reached or the session broke (err says why). While the node is
 * known to be down it fails at once until the backoff ends, unless force.
 * A nonzero *cancel (may be NULL) gives up within ~200 ms: its channel is
 * closed, "interrupted". */
int sshio_run(struct sshio *io, const char *cmd, size_t max, int timeout_ms, bool force,
              const atomic_int *cancel, struct ssh_result *res, struct buf *err);
/* Writes a file on the node over sftp (created or truncated, then set to
 * mode). Same return and backoff rules as sshio_run. */
int sshio_put(struct sshio *io, const char *path, const char *data, size_t len, int mode,
              int timeout_ms, bool force, struct buf *err);
/* One request/answer exchange with a unix socket on the node, over a
 * direct-streamlocal channel of the session (the engine's API socket). It
 * never forces a connect or a reconnect and never waits on the I/O thread:
 * its caller keeps its own deadline, and what it gives up is finished and
 * freed by the thread. Return codes of sshio_unix_wait/_end: 0 the answer
 * (all of it, until the far end closed, at most max bytes), -1 the session
 * (down, or its sshd silent: nothing to blame the socket for), these: */
#define SSHIO_UNIX_REFUSED (-2) /* sshd would not open it: no socket, or forwarding refused */
#define SSHIO_UNIX_SILENT (-3)  /* opened, and no (whole) answer in time, or one over max */
struct sshio_unix;

/* Queues the exchange; NULL with a message when the node is known down. */
struct sshio_unix *sshio_unix_start(struct sshio *io, const char *sock, const char *req,
                                    size_t len, size_t max, int timeout_ms, struct buf *err);
/* Waits until it ended or until_ms (monotonic; its own deadline at most):
 * 1 while it runs, else its code. */
int sshio_unix_wait(struct sshio *io, struct sshio_unix *u, long long until_ms);
/* Takes the answer (out) or why not (err) and lets the exchange go: one
 * still running is abandoned (-1 or SSHIO_UNIX_SILENT as far as it got). */
int sshio_unix_end(struct sshio *io, struct sshio_unix *u, struct buf *out, struct buf *err);
/* The three in one. */
int sshio_unix(struct sshio *io, const char *sock, const char *req, size_t len, size_t max,
               int timeout_ms, struct buf *out, struct buf *err);
/* True while a session is up (a stale one counts until it is used). */
bool sshio_connected(struct sshio *io);
/* restart: run the command again whenever it ends (a sampler); without it
 * the stream ends with its command (a log that stops). Either way a stream
 * cut by a broken session is started again once the session is back. */
struct sshio_stream *sshio_stream_open(struct sshio *io, const char *cmd, bool restart,
                                       sshio_line_fn on_line, sshio_event_fn on_event, void *ctx);
/* A stream from a unix socket on the node (a followed log): req written on
 * a direct-streamlocal channel (no EOF after it), the answer's bytes handed
 * to on_bytes as they come, on the I/O thread. on_event(true) once the
 * channel is open; on_event(false) when it ended: the far end closed,
 * on_bytes wanted no more, sshd would not open it, or the session broke;
 * after a break the request is sent again on the next session (a new
 * answer follows on_event(true), as a CLI stream's command runs again).
 * Closed with sshio_stream_close. */
struct sshio_stream *sshio_stream_open_unix(struct sshio *io, const char *sock, const char *req,
                                            size_t len, sshio_bytes_fn on_bytes,
                                            sshio_event_fn on_event, void *ctx);
/* Queues bytes for the stream's stdin. */
int sshio_stream_write(struct sshio *io, struct sshio_stream *s, const char *data, size_t len);
/* Closes and frees the stream; no callback runs after it returns. */
void sshio_stream_close(struct sshio *io, struct sshio_stream *s);
/* Reachability: false with the time it went down and why. */
bool sshio_state(struct sshio *io, time_t *down_since, char *why, size_t whysz);

#endif
