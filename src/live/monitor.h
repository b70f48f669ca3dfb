/* monitor: the console's collector. One thread samples every node and the
 * API each interval (status_collect, over the nodes' warm sessions) and
 * writes the results into state: snapshots, history, RDMA rates and rising
 * error counters, server metrics with rates and the wedge; it follows each
 * rank's log (`RUNTIME logs -f`) into state's ring buffers and re-attaches
 * when a rank restarts; and it watches every node's memory guard
 * (guardview); and the checkpoint download in MODEL_DIR (dlview, a thread
 * of its own, so a node slow to answer never stalls it). Collection only:
 * nothing here draws. */
#ifndef DSV41_MONITOR_H
#define DSV41_MONITOR_H

#include "cluster.h"
#include "config.h"
#include "state.h"

struct monitor;

struct monitor *monitor_start(const struct config *c, struct cluster *cl, struct state *s,
                              int interval_ms);
/* Samples now instead of at the next tick (after an action). */
void monitor_poke(struct monitor *m);
/* Asks the console's own guard to let go of this node's lock (SIGUSR2 from
 * `guard --stop`); async-signal-safe. */
void monitor_guard_release(struct monitor *m);
/* Asks the guard watching this node to resolve the ranks now (SIGUSR1). */
void monitor_guard_resolve(struct monitor *m);
/* SIGUSR1 and SIGUSR2 - what `guard --resolve` and `guard --stop` send the
 * process holding a guard's lock - go to m's guards from now on (NULL: to
 * none, before m stops). One monitor per process takes them: the console's,
 * watch's or the exporter's. */
void monitor_take_usr(struct monitor *m);
/* Stops the thread and the log streams; when the console's own guard was
 * guarding ranks, hands over to a guard daemon first. */
void monitor_stop(struct monitor *m);

/* Pure parts, for tests. The rate in bytes/s between two counter values
 * (n/a when either is, or the counter went back). */
struct pval monitor_rate(struct pval prev, struct pval cur, double dt);
/* RoCE counters are in 4-byte words for port_*_data; sysfs hw counters in
 * bytes: the snapshot already converts, so this is plain difference. */

#endif
