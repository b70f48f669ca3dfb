/* liveness: proof that the engine serves, not only that it is up. A dead
 * peer rank leaves rank 0 answering /health 200 and even starting a 200
 * stream that never carries a token (REFERENCE.md §10), and the wedge rule
 * (wedge.h) sees nothing while no request runs. So once the server has been
 * idle for PROBE_IDLE_S - no request running or waiting, the generation
 * counter still - one streamed completion of one token is sent; the time to
 * its token is the figure shown, and no token within PROBE_DEADLINE_S means
 * wedged. The probe's own token moves the counter, so an idle server is
 * probed once per idle interval. The state machine is pure (time passed
 * in); liveness_probe blocks and runs off the sampling thread. */
#ifndef DSV41_LIVENESS_H
#define DSV41_LIVENESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"

struct liveness {
    double idle_since;  /* when the metrics last showed activity (or first came); < 0 unknown */
    struct pval gen;    /* the generation counter last seen */
    double last_probe;  /* when the last probe ended; 0 never */
    bool in_flight;
    bool have;          /* a probe has answered */
    bool ok;            /* ... with a token */
    bool wedged;        /* ... failed as a wedged engine does: a 200 (or no answer) and no token
                         * by the deadline; other failures (a refused connection, a 401, no
                         * key) are errors of the probe, not of the engine */
    double latency_s;   /* of that token, when ok */
    double at;          /* when the last probe ended */
    char why[256];      /* why the last one failed */
};

void liveness_init(struct liveness *l);
/* Fed each scrape at now: true when a probe is due (idle for idle_s since
 * the last activity and the last probe; none in flight). The caller then
 * sets in_flight and runs the probe. A failed scrape (or a server that is
 * down): call with m NULL, which also forgets the last outcome - it said
 * nothing about the server that comes back. Tokens moving forget a failed
 * one too: an engine that generates is not wedged. */
bool liveness_due(struct liveness *l, const struct metrics *m, double now, double idle_s);
/* The probe's outcome at now: rc as liveness_probe returned it. */
void liveness_result(struct liveness *l, int rc, double latency_s, const char *why, double now);
/* One streamed /v1/completions request of one token for model, with the
 * key; gives up when *cancel turns non-zero. 0 with the seconds to the
 * first token; LIVENESS_WEDGED when no token came by the deadline (the
 * server answered 200 or not at all); -1 for any other failure; why says
 * which. */
#define LIVENESS_WEDGED (-2)
int liveness_probe(const char *base, const char *key, const char *model, double deadline_s,
                   const atomic_int *cancel, double *latency_s, char *why, size_t whysz);

#endif
