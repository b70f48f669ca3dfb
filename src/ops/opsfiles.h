/* opsfiles: what the exporter and the alerts read from STATE_DIR's files
 * rather than from the sampler: the incidents on disk by kind, the last
 * acceptance's verdict, the newest bench run's figures, the supervisor's
 * restarts and a running copy's progress. Read by the ops thread every few
 * seconds, never by a scrape. */
#ifndef DSV41_OPSFILES_H
#define DSV41_OPSFILES_H

#include <stdbool.h>
#include <stdint.h>

#include "benchhist.h"
#include "config.h"
#include "events.h"
#include "suprec.h"

/* STATE_DIR/copy-progress: "PID LANDED NEED EPOCH NODE" while a copy runs. */
#define OPSFILES_COPY "copy-progress"

struct opsfiles {
    bool read;                       /* loaded at least once */
    unsigned incidents[EVENT_NKINDS]; /* directories under STATE_DIR/incidents, by kind */
    unsigned incidents_other;
    /* the newest acceptance run */
    char accept_last[200];           /* accept_view's line; "" none */
    int accept_pass;                 /* 1 pass, 0 fail, -1 none or not judged */
    /* the newest bench run of this deployment */
    bool have_bench;
    struct benchhist_rec bench;
    double bench_epoch;              /* its time as epoch seconds */
    struct suprec sup;               /* the supervisor's record */
    /* a copy running now */
    bool copying;
    int64_t copy_landed, copy_need;
    char copy_node[32];
};

void opsfiles_load(const struct config *c, struct opsfiles *f);

/* An incident directory's name (TIME-SLUG or TIME-SLUG-N) to its kind's
 * index in EVENT_KINDS; -1 when none. */
int opsfiles_incident_kind(const char *name);

#endif
