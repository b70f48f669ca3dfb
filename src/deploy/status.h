/* status: what every node and the API look like now, with the problems that
 * keep the deployment from being well, as text for people and JSON for
 * scripts. This is the collection; the output is src/cmd/status_out.h's. */
#ifndef DSV41_STATUS_H
#define DSV41_STATUS_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "api.h"
#include "metrics.h"
#include "cluster.h"
#include "alike.h"
#include "drift.h"
#include "snapshot.h"
#include "units.h"

#define STATUS_MAX_NOTES 32

#define STATUS_STEPS 5
/* The names of the steps of step_ms, in order. */
extern const char *const status_step_names[STATUS_STEPS];

struct status_report {
    int n;
    struct {
        const struct cluster_node *cn;
        struct snapshot snap;
        time_t down_since;
        char phase[40];  /* its rank's startup phase, read while the API is not up */
        char guard[400]; /* its memory guard in one line; "" when not asked */
        int guard_rc;    /* guards_describe's answer */
        struct units_state unit; /* dsv41-guard.service; asked with the guard */
        struct alike_print alike; /* kernel, driver, image, CUDA, NCCL; asked with the guard */
        struct drift_start started; /* the fabric its running rank started with; asked with the guard */
        /* how long each step took, ms (make bench's per-step figures): the
         * sample, the guard, its unit, the nodes-alike facts, the drift */
        double step_ms[STATUS_STEPS];
    } nodes[CLUSTER_MAX_NODES];
    double api_ms, metrics_ms; /* the head's own steps */
    struct api_health api;
    bool metrics_ok;
    struct metrics metrics;
    bool rates_ok; /* a second scrape was taken (requests were running) */
    struct metrics_rates rates;
    double rates_window_s;
    char wedged[320]; /* why the engine is wedged; "" when it is not */
    /* the wedge is a rank not running while /health answers: told from two
     * samples (the API's answer now, the node's containers up to a second
     * older), so a launch's first answer can race it: the monitor wants it twice */
    bool rank_down;
    int nproblems, nwarnings;
    char problems[STATUS_MAX_NOTES][320];
    char warnings[STATUS_MAX_NOTES][320];
};

/* `status`'s collection: snapshots of all nodes (in parallel), their guards,
 * the API with its metrics, the ranks' log tails while they boot. */
void status_collect(const struct config *c, struct cluster *cl, struct status_report *r);
/* What a launch plans with: every node's snapshot and the API's answer, no
 * guard, unit, nodes-alike or drift asks and no log tails (a launch starts
 * the guards itself; the alike facts cost the runtime's CLI three times). */
void status_survey(const struct config *c, struct cluster *cl, struct status_report *r);
/* The console's round, every second: the ranks' logs are followed by the
 * console itself (no log tail for the phase), rates and the wedge come from
 * successive calls (one metrics scrape, never a wait), each node's memory
 * guard is read by the console (not asked here), and a node that does not
 * answer within 1 s gives its last snapshot, late (sampler_sample). Without
 * full no container state is asked: the containers r holds from its
 * previous round are kept (the runtime CLI is the dearest part of a sample),
 * as they are for a node whose answer came without them; a node with none
 * known yet has ct_sampled false. */
void status_sample(const struct config *c, struct cluster *cl, struct status_report *r, bool full);
/* Appends the nodes' GPU power to a wedge verdict (wedge_gpu_note). */
void status_wedge_gpu(const struct status_report *r, char *why, size_t n);

#endif
