/* verify_peer: the checkpoint verified on a worker, against the head's
 * manifest (a damaged copy of the manifest on the worker cannot hide a
 * damaged shard). The static dsv41-verify and the manifest go into the
 * worker's STATE_DIR over sftp; the helper runs over ssh, hashing on the
 * worker's cores and disk, and reports in verify_wire lines that fill the
 * same entries verify_run fills locally. */
#ifndef DSV41_VERIFY_PEER_H
#define DSV41_VERIFY_PEER_H

#include "cluster.h"
#include "verify.h"

/* As verify_run, on node cn's model directory. manifest_text is what m was
 * parsed from. -1 and err when the helper could not be installed or run;
 * a session that ends before the report does leaves the files it did not
 * report VERIFY_CANCELLED and says so in err (the count is still
 * returned). */
int verify_peer_run(const struct config *c, struct cluster_node *cn, struct verify_manifest *m,
                    const char *manifest_text, int jobs, const atomic_int *cancel,
                    struct verify_progress *p, verify_done_fn done, void *arg,
                    verify_tick_fn tick, struct buf *err);

#endif
