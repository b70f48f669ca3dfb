/* dlcopy: download --to-workers. The copy to every worker runs beside the
 * download, one thread per worker (xfer_peer), with the download's outputs
 * as its plan; each file is held back until the download has it verified in
 * place (or had it from an earlier run), so the two overlap instead of one
 * waiting for the other. Its lines (a file in place on a worker, what a
 * worker says) go to stdout; its progress joins the download's line. */
#ifndef DSV41_DLCOPY_H
#define DSV41_DLCOPY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "config.h"
#include "dlplan.h"

struct dlcopy;

/* NULL and why (no worker configured, ...) when it cannot start. */
struct dlcopy *dlcopy_start(const struct config *c, const struct dl_plan *plan, const char *dir,
                            int streams, const atomic_int *cancel, struct buf *err);
/* The download has path verified in place: it may go. */
void dlcopy_ready(struct dlcopy *d, const char *path);
/* "worker 1.2 of 4.5 GB" for the download's progress line. */
void dlcopy_status(struct dlcopy *d, char *out, size_t n);
/* The download is over (ok: every file in place); files it did not bring
 * are given up. Waits for the copies; 0 every worker has every file. */
int dlcopy_finish(struct dlcopy *d);

#endif
