/* ops: what runs beside the monitor when no one looks (watch, exporter).
 * A thread follows the state's events (settled: EVENTS_SETTLE_S): counts
 * them for the exporter, hands them to the supervisor (SUPERVISE=1) and to
 * the alerts (ALERT_WEBHOOK, ALERT_CMD); it reads STATE_DIR's files every
 * few seconds (opsfiles) and turns a new acceptance verdict into an event.
 * Never blocks the sampling: alerts are sent by a thread of their own,
 * relaunches run as jobs. */
#ifndef DSV41_OPS_H
#define DSV41_OPS_H

#include <stdbool.h>

#include "buf.h"
#include "config.h"
#include "state.h"

struct ops;

/* -1 with the fix in err when a setting is wrong (ALERT_FORMAT, ALERT_CMD);
 * supervise: SUPERVISE=1 is honoured (watch; the exporter never relaunches). */
int ops_start(const struct config *c, struct state *s, bool supervise, struct ops **out,
              struct buf *err);
/* The exporter's page, from the state (locked here briefly) and the files. */
void ops_render(struct ops *o, struct buf *out);
/* Gives queued alerts a moment to go, then stops. */
void ops_stop(struct ops *o);

#endif
