/* supervise: the deployment kept up overnight (SUPERVISE=1, in watch).
 * After a rank exits or the engine wedges, every rank on every node is
 * stopped (`stop --now`: the survivor would wait in NCCL forever) and the
 * deployment launched again (`launch`), both as jobs; a backoff before
 * each try (SUPERVISE_BACKOFF_S, doubled for each relaunch in the last
 * hour), at most SUPERVISE_MAX an hour, then it stops every rank, stops
 * trying and says so. After a memory guard's firing it does not relaunch
 * the same configuration (its memory would run out again): it stops every
 * rank and leaves them stopped, unless SUPERVISE_AFTER_GUARD=1. Each
 * relaunch is an incident (STATE_DIR/incidents/DATE-restart) and a line of
 * STATE_DIR/supervise.tsv, which status and the exporter read. It acts on
 * settled events only (EVENTS_SETTLE_S): the cause, not its first symptom.
 * The ops thread drives it; nothing here blocks. */
#ifndef DSV41_SUPERVISE_H
#define DSV41_SUPERVISE_H

#include <stdbool.h>
#include <time.h>

#include "buf.h"
#include "config.h"
#include "state.h"

struct supervisor;

/* NULL when SUPERVISE is not 1 (or out of memory, said in err). */
struct supervisor *supervise_start(const struct config *c, struct state *s, struct buf *err);
/* A settled event; what the supervisor does about it is appended to
 * e->what, so that the one alert of a guard's firing says it. */
void supervise_event(struct supervisor *sv, struct state_event *e);
/* Moves the jobs along (every few hundred ms). */
void supervise_step(struct supervisor *sv);
void supervise_stop(struct supervisor *sv);

/* Pure, for tests: the relaunches an hour allows, from the times of
 * those already made (epoch seconds, any order): the wait before the next
 * one (seconds), or -1 when max is reached within the hour. */
double supervise_next_wait(const time_t *done, int n, time_t now, int max, int backoff_s);

#endif
