/* peer: copy-to-peer. The checkpoint goes to a worker with rsync over ssh,
 * as the script era did: rsync is on DGX OS, skips what is already there,
 * keeps partial files so a killed copy resumes, and is as fast as the ssh
 * cipher allows. The Engram .partNN pieces and the hub's .cache/ stay on the
 * head (REFERENCE §2); the copy is then verified on the worker against the
 * head's manifest (verify_peer) and the EXL3 bank count compared. The pure
 * parts (rsync's command line, its progress lines) are tested apart. */
#ifndef DSV41_PEER_H
#define DSV41_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "strv.h"

struct peer_progress {
    int64_t bytes; /* transferred so far */
    int pct;       /* of the whole copy */
    char rate[24]; /* as rsync writes it: "123.45MB/s" */
    char eta[16];  /* "0:00:08" */
};

/* One of rsync's --info=progress2 updates, e.g.
 * "  1,048,576,000  97%  123.45MB/s    0:00:08 (xfr#3, to-chk=0/5)";
 * false for any other line. */
bool peer_parse_progress(const char *line, struct peer_progress *p);

/* rsync's argv for copying src_dir's contents to target:dst_dir, the ssh
 * it runs configured as dsv41-top's own (SSH_CONFIG, SSH_KNOWN_HOSTS and the
 * config's UserKnownHostsFile for the host, strict host keys, no password
 * prompts). */
void peer_rsync_argv(const struct config *c, const char *src_dir, const char *target,
                     const char *also_known_hosts, const char *dst_dir, bool dry_run,
                     struct strv *argv);

#endif
