/* dlview: the console's view of the checkpoint download into MODEL_DIR. A
 * thread reads what the download itself keeps on disk - its state file (the
 * commit, each file's landed ranges, which are verified), who holds its lock
 * (from /proc/locks, never by taking it) and assemble's journals - once per
 * interval, and writes a summary into state->download: bytes and files done,
 * the rate over the last polls and its history, the files in flight, the
 * ones verified while it watched, the shards being rebuilt. So the pane
 * shows a download started from a shell just as one started by the key, and
 * one that was killed: unfinished, resumable. Collection only. */
#ifndef DSV41_DLVIEW_H
#define DSV41_DLVIEW_H

#include "config.h"
#include "dlstate.h"
#include "state.h"

struct dlview;

struct dlview *dlview_start(const struct config *c, struct state *s, int interval_ms);
void dlview_stop(struct dlview *v);

/* Pure, for tests: totals and the files in flight of a state file into d
 * (the rest of d untouched). */
void dlview_summarize(const struct dl_state *st, struct state_download *d);

#endif
