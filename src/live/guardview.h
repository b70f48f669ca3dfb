/* guardview: the console's view of every node's memory guard, and the
 * console's own guard. On the head, when no guard daemon holds the node's
 * lock, the console runs the guard as a thread of its own (it lets go when
 * `guard --stop` asks, e.g. before launch starts a daemon, and hands over to
 * a daemon when it quits while ranks run). Every node's heartbeat and last
 * log line are read (locally, or over the node's ssh session); a missing or
 * stale heartbeat is an alarm; when a guard fires, the ranks on the other
 * nodes are stopped (they would hang in NCCL) and the console says why. */
#ifndef DSV41_GUARDVIEW_H
#define DSV41_GUARDVIEW_H

#include <stdbool.h>

#include "cluster.h"
#include "config.h"
#include "state.h"

/* A heartbeat older than this is stale: the guard is hung or gone. */
#define GUARDVIEW_STALE_S 10

struct guardview;

struct guardview *guardview_start(const struct config *c, struct cluster *cl, struct state *s);
/* Reads the guards (rate-limited inside) into state; acts on a firing. */
void guardview_poll(struct guardview *gv);
/* Async-signal-safe requests from the console's signal handlers. */
void guardview_release(struct guardview *gv);
void guardview_resolve(struct guardview *gv);
void guardview_stop(struct guardview *gv);

/* Pure: what the remote check printed ("NOW TS PID AVAIL FLOOR STATE",
 * "alive"|"dead", last log line) into a view, a description and the last
 * event. */
/* "ok", "FIRED", "STALE", "NONE", "WARN", "unknown": the console's and
 * watch's one word for a guard. */
const char *guardview_word(enum guard_view g);
enum guard_view guardview_parse(const char *text, char *desc, size_t descsz, char *event,
                                size_t eventsz);

#endif
