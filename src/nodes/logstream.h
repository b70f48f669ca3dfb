/* logstream: a rank container's log, line by line (stdout and stderr as
 * one stream, as `RUNTIME logs` 2>&1 gives them), from the engine's API
 * socket on the local node where it answers (no process: engine_logs in a
 * thread of its own), else the runtime CLI as a node_stream (a child
 * locally, a channel on a remote node). The callbacks run on the stream's
 * thread, as node_stream's do: on_event(up) first, the lines, on_event(down)
 * at the end. */
#ifndef DSV41_LOGSTREAM_H
#define DSV41_LOGSTREAM_H

#include <stdbool.h>

#include "node.h"

struct logstream;

/* tail < 0: the whole log; follow: until the container ends or the stream
 * is closed. NULL when neither way could start. */
struct logstream *logstream_open(struct node *n, const char *runtime, const char *name,
                                 bool follow, int tail, sshio_line_fn on_line,
                                 sshio_event_fn on_event, void *ctx);
/* Stops it and frees it; no callback runs after it returns. */
void logstream_close(struct node *n, struct logstream *ls);
/* Where its lines come from, for the operator: "the engine's socket" or
 * "the runtime CLI". */
const char *logstream_source(const struct logstream *ls);

#endif
