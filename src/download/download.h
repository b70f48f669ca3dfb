/* download: the checkpoint from the hub into a directory, in one thread of
 * libcurl multi: several files at once and parallel ranges inside a large
 * one, each file's CDN URL resolved once and reused for all of its ranges
 * (resolved again when it expires), retries with exponential backoff and
 * jitter (Retry-After honoured), a short range continued from where it
 * stopped, a server that answers 200 to a Range request handled. Bytes are
 * written with pwrite into NAME.incomplete (preallocated), the split shards'
 * parts straight into their place in the shard. A second thread hashes each
 * piece's contiguous prefix as it grows (still in the page cache), so a file
 * is checked the moment its last byte lands: LFS files against lfs.oid,
 * small ones against their git blob sha1, a split shard also as a whole
 * against sha256-manifest.txt; a mismatch fetches the piece again. Verified,
 * the file is renamed into place. Progress goes to dlstate as it lands. */
#ifndef DSV41_DOWNLOAD_H
#define DSV41_DOWNLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dlplan.h"
#include "dlstate.h"
#include "hub.h"

enum dl_event_kind {
    DL_EV_PROGRESS, /* about twice a second */
    DL_EV_FILE_OK,  /* an output verified and in place */
    DL_EV_FILE_SKIP, /* already complete and verified by an earlier run */
    DL_EV_REFETCH,  /* a piece's hash differed: fetched again */
    DL_EV_RETRY,    /* a transfer failed and will be tried again */
    DL_EV_FAILED,   /* an output gave up */
};

struct dl_status {
    int64_t total, done;  /* bytes of the outputs; landed or verified */
    int64_t fetched;      /* bytes received this run */
    double rate;          /* bytes/s, smoothed */
    int files, files_done, busy;
    const char *path;     /* the output an event is about */
    const char *detail;   /* why (retry, refetch, failure) */
};

typedef void (*dl_event_fn)(enum dl_event_kind k, const struct dl_status *s, void *arg);

struct dl_opts {
    const char *dir;
    int connections;    /* transfers at once (16) */
    int64_t chunk;      /* bytes per range (64 MiB) */
    bool verify_all;    /* hash complete files again */
    bool keep_parts;    /* also write each split shard's parts out (KEEP_PARTS=1) */
    const atomic_int *cancel;
    dl_event_fn on_event;
    void *arg;
};

/* Disk the plan still needs under dir (outputs not complete, minus what
 * their files already hold), and what the filesystem has free. */
int download_space(const struct dl_plan *p, const struct dl_state *st, const char *dir,
                   bool keep_parts, int64_t *need, int64_t *avail, struct buf *err);
/* 0 when every output is complete and verified; 1 when some failed (err
 * names the first) or the run was cancelled; -1 when it could not go on
 * (no space, an unwritable directory: err says what to do). st is updated
 * and saved as it goes. */
int download_run(struct hub *h, const struct dl_plan *p, struct dl_state *st,
                 const struct dl_opts *o, struct buf *err);

#endif
