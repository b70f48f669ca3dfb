/* promtext: the exporter's page, Prometheus' text format (version 0.0.4)
 * with node_exporter's conventions: base units (bytes, seconds, ratios
 * 0..1), counters ending _total, a node label on what is a node's. A
 * figure that is not known is left out (Prometheus' "no data"), never
 * written as a 0. Pure: from a copy of the state and the files. */
#ifndef DSV41_PROMTEXT_H
#define DSV41_PROMTEXT_H

#include "buf.h"
#include "opsfiles.h"
#include "state.h"

/* What this process counted from the events (settled, EVENTS_SETTLE_S). */
struct ops_counts {
    unsigned events[EVENT_NKINDS];
    unsigned guard_firings[CLUSTER_MAX_NODES]; /* by the state's node index */
    uint64_t alerts_sent, alerts_failed, alerts_dropped;
    bool supervise;        /* SUPERVISE=1 here */
    double started;        /* epoch seconds this process started */
};

/* The page, appended to out; s need not be locked by anyone else (a copy). */
void promtext_render(const struct state *s, const struct opsfiles *f, const struct ops_counts *k,
                     struct buf *out);
/* Every family is written with its HELP and TYPE even when it has no
 * sample now: the dashboard's test reads the names from a live page. */

#endif
