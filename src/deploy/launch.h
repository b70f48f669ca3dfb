/* launch: bringing the deployment up. Fabric and preflight on every node,
 * the key, env files and plan, stale ranks replaced, the workers' ranks
 * started before the head's, then both ranks' logs watched for the startup
 * phase until the API answers with the key. */
#ifndef DSV41_LAUNCH_H
#define DSV41_LAUNCH_H

#include <stdbool.h>

#include "config.h"

struct launch_opts {
    bool dry_run;
    bool force;
    bool no_guard; /* start the ranks even where no guard could start */
    bool install_units; /* dsv41-guard.service on every node first (units.h) */
    int timeout_s; /* READY_TIMEOUT unless given */
};

/* 0 when the API answered; 1 when the launch failed (the reason and both
 * ranks' last lines printed); 2 for bad settings. */
int launch_run(const struct config *c, const struct launch_opts *o);

#endif
