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
/* True while a session is up (a stale one counts until it is used). */
bool sshio_connected(struct sshio *io);
/* restart: run the command again whenever it ends (a sampler); without it
 * the stream ends with its command (a log that stops). Either way a stream
 * cut by a broken session is started again once the session is back. */
struct sshio_stream *sshio_stream_open(struct sshio *io, const char *cmd, bool restart,
                                       sshio_line_fn on_line, sshio_event_fn on_event, void *ctx);
/* Queues bytes for the stream's stdin. */
int sshio_stream_write(struct sshio *io, struct sshio_stream *s, const char *data, size_t len);
/* Closes and frees the stream; no callback runs after it returns. */
void sshio_stream_close(struct sshio *io, struct sshio_stream *s);
/* Reachability: false with the time it went down and why. */
bool sshio_state(struct sshio *io, time_t *down_since, char *why, size_t whysz);

#endif
