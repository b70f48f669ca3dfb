/* accept_int: what accept's two files share (accept_cmd.c: the options and
 * the checks before anything stops; accept_window.c: the window itself,
 * promote and roll back, and --baseline). */
#ifndef DSV41_ACCEPT_INT_H
#define DSV41_ACCEPT_INT_H

#include <stdbool.h>

#include "accept.h"
#include "buf.h"
#include "config.h"

enum {
    ACCEPT_PROMOTED = 0,
    ACCEPT_ROLLED_BACK = 1,
    ACCEPT_USAGE = 2,
    ACCEPT_REFUSED = 3,
    ACCEPT_BROKEN = 4,
};

struct accept_run {
    const struct config *c;
    const char *cand, *base_ref;
    char accept_dir[4096], run_dir[4200], base_dir[4200];
    char digests[1024];
    char hash[17];
    struct buf api, key;
    int ready_timeout, timeout_s, ctx, idle_wait;
    bool force;
    struct accept_thresholds t;
};

/* Waits up to r->idle_wait s for no request running or waiting; true when
 * idle, or when nothing listens at all. */
bool accept_wait_idle(const struct accept_run *r);
/* The window: stop, launch the candidate, the suite, promote or roll back. */
int accept_window(struct accept_run *r);
/* --baseline: the running image measured, recorded only when every check passed. */
int accept_record_baseline(struct accept_run *r);

#endif
