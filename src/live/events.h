/* events: what an operator is told of when nobody looks at the console.
 * The engine pushes an event into the state's ring (STATE_EVENTS) when
 * something happens: the incident writer for what leaves an incident
 * directory (a guard firing, a wedge, a rank's exit: the event names the
 * directory), events_check after each sample for the rest (a guard's
 * warning, a node gone unreachable, the fabric drifting under a rank, a
 * bench below the accepted baseline), and src/ops for its own (an
 * acceptance's verdict, a restart). Readers (alerts, the supervisor, the
 * exporter's counters) follow the ring by sequence number, each at its own
 * pace; the ring never waits for them. */
#ifndef DSV41_EVENTS_H
#define DSV41_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "state.h"

/* Every kind, in the order the exporter lists them. */
#define EVENT_KINDS                                                                                \
    "guard-fired", "guard-warning", "wedged", "rank-exited", "node-unreachable", "fabric-drift",   \
        "acceptance", "bench-regression", "restart", "supervise-stopped"
#define EVENT_NKINDS 10

/* An incident's event is settled this long after it was pushed or last
 * changed: a guard's firing seen a second after the rank exit it caused
 * turns the incident (and its event) into a guard firing, and what acts on
 * events (an alert, a relaunch) must see the cause, not its first symptom. */
#define EVENTS_SETTLE_S 5.0
/* A symptom (a wedge, a rank's exit) settles only once every node's guard
 * was asked after it was seen, so a guard's firing that caused it - its
 * poll slow on a loaded node - renames it before anything acts on it; at
 * most this long (a node whose guard cannot be asked). */
#define EVENTS_CAUSE_WAIT_S 30.0

/* Pushes an event (takes the lock); its sequence number. what is cleaned. */
uint64_t events_push(struct state *s, const char *kind, const char *node, const char *incident,
                     const char *what);
/* The event seq, when still in the ring, takes a new kind, node, line and
 * directory (an incident renamed to its likelier cause); false when gone.
 * An event already read is not changed for its readers: the caller pushes
 * a new one then. */
bool events_update(struct state *s, uint64_t seq, const char *kind, const char *node,
                   const char *what, const char *incident);
/* Up to max events from *next on, oldest first, those pushed at least
 * settle_s ago (monotonic) only - a symptom also once its cause is known
 * (EVENTS_CAUSE_WAIT_S) - in order: it stops at the first unsettled one.
 * *next moves past what was read; events the ring dropped before they
 * were read are skipped, and their number added to *lost when not NULL. */
int events_read(struct state *s, uint64_t *next, double settle_s, struct state_event *out, int max,
                uint64_t *lost);
/* The oldest of the configured nodes' last guard asks (a failed ask counts
 * as asked: what it could not tell waits EVENTS_CAUSE_WAIT_S at most; a node
 * never asked is left out); now when guards is false (none is read). */
double events_guards_asked(struct state *s, bool guards);
/* A symptom seen before at has had its cause told (the guards were asked
 * after it and what they said renamed it: incident_causes_seen); never
 * moves back. */
void events_causes_seen(struct state *s, double at);
/* The index of kind in EVENT_KINDS; -1 when it is none. */
int events_kind_index(const char *kind);
const char *events_kind_name(int i);

/* The edges events_check looks for; zeroed before the first call, which
 * only learns how things stand. */
struct events_watch {
    bool seen[CLUSTER_MAX_NODES], server_seen;
    bool up[CLUSTER_MAX_NODES];
    bool warned[CLUSTER_MAX_NODES];
    bool drifted[CLUSTER_MAX_NODES];
    char regression[320];
};
/* After each sample (state unlocked). */
void events_check(struct events_watch *w, struct state *s);

#endif
