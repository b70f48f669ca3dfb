/* guardctl: running, daemonising, stopping and asking a guard, shared by
 * `dsv41-top guard` and the static dsv41-guard binary that launch pushes to
 * workers (libc only, like guard.c). */
#ifndef DSV41_GUARDCTL_H
#define DSV41_GUARDCTL_H

#include <stdbool.h>

#include "guard.h"
#include "usage.h"

/* A heartbeat older than this (seconds): the guard is hung or gone. */
#define GUARD_FRESH_S 5

enum guardctl_action { GUARD_RUN, GUARD_DAEMON, GUARD_STOP, GUARD_STATUS, GUARD_RESOLVE };

/* Runs the action; the process exit status (status: 0 alive, 1 not). */
int guardctl(const struct guard_opts *o, enum guardctl_action a);
/* The heartbeat line as the guard wrote it ("" when none); true when the
 * process it names is alive. */
bool guardctl_heartbeat_read(const char *state_dir, char *line, size_t sz);
/* Reads STATE_DIR/guard.HOST.heartbeat: 1 fresh (<= max_age_s), 0 stale or
 * missing; fills a one-line description. */
int guardctl_heartbeat(const char *state_dir, int max_age_s, char *desc, size_t sz);
/* The signals a guard appends to its heartbeat line ("psi=F frag=N kmsg=N
 * warn=LIST") as ", psi F%, 4M blocks N, NVRM N[, WARN LIST]" ("" for a
 * guard from before them); true when a warning is set. */
bool guardctl_signals(const char *line, size_t len, char *out, size_t sz);
/* Parses the static binary's flags into o and an action; -1 on bad usage,
 * with *bad the index of the argument not understood (a path too long for
 * its field is refused, never cut). */
/* dsv41-guard's own options, its --help and its man page, dsv41-guard(8). */
extern const struct usage_doc guardd_doc;
int guardctl_parse(int argc, char **argv, struct guard_opts *o, enum guardctl_action *a, int *bad);

#endif
