/* dlrun: the download's run-time state, shared by its three threads - the
 * transfers (download.c), the hasher (dlhash.c) and the syncer (dlsync.c).
 * One mutex guards what they share: the landed and in-flight ranges, the
 * pieces' hash progress, the outputs' status and the state file's entries.
 * An output goes ACTIVE -> READY (hasher: every hash matched) -> FINISHING
 * -> DONE (syncer: in place), or FAILED from any of them. Private to the
 * download. */
#ifndef DSV41_DLRUN_H
#define DSV41_DLRUN_H

#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "download.h"
#include "ranges.h"

enum out_status { OUT_SKIP, OUT_ACTIVE, OUT_READY, OUT_FINISHING, OUT_DONE, OUT_FAILED };

struct hasher {
    EVP_MD_CTX *ctx;
    int64_t start, len, done; /* a region of the output; done: bytes hashed */
    bool sha1;                /* git's blob sha1 (small files), else sha256 */
    bool finished, ok;
};

struct piece_rt {
    struct buf url;
    bool url_ok, with_token, no_range;
    bool resolving; /* a resolver asks the hub for its URL now */
    bool whole_active; /* a transfer of the whole piece (no Range support) runs */
    int tries, refetches, said; /* said: refetches the caller was told of */
    double not_before; /* backoff: no transfer of this piece before */
    struct hasher h;
};

struct out_rt {
    const struct dl_output *o;
    struct dl_state_file *st;
    int fd;
    bool final_name; /* the file is already at its final name (checked again) */
    enum out_status status;
    struct piece_rt *pc;
    struct hasher whole; /* split shards: the whole against the manifest */
    bool has_whole;
    struct ranges inflight;
    int active; /* transfers writing into it: it is finished only when none is */
    bool announced; /* its end (DONE or FAILED) was told to the caller */
    bool presynced; /* every byte landed and synced while the hasher caught up (dlsync.c) */
    char err[512];
};

struct dl_run {
    const struct dl_plan *plan;
    struct dl_state *st;
    const struct dl_opts *o;
    struct hub *hub;
    struct out_rt *out;
    int nout;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;   /* the hasher ends */
    int fatal;   /* an errno that ends the run (ENOSPC) */
    char fatal_what[300];
    int64_t fetched;
    int64_t chunk;   /* the range size now: o->chunk, smaller near the end */
    double open_s;   /* what opening a transfer costs (connect, TLS, first byte), smoothed;
                      * the transfers' thread alone */
    /* the syncer: woken by sync_cv when an output is READY or a save is due */
    pthread_cond_t sync_cv;
    bool save_wanted, sync_stop;
    char save_err[600]; /* the state file could not be written: why */
    /* the transfer loop's multi handle while it runs (under mu): a resolver that
     * found a URL wakes it (curl_multi_wakeup is thread-safe), or an idle loop
     * would sleep out its poll - 50 ms at the start of every download */
    CURLM *wake;
    /* the resolvers: woken by resolve_cv when a URL expired */
    pthread_cond_t resolve_cv;
    bool resolve_stop;
    atomic_int resolve_quit; /* their hub requests give up (a cancel, the end) */
};

/* DIR/PATH, or DIR/PATH.incomplete. */
void dlrun_output_path(const struct dl_run *d, const struct out_rt *r, bool incomplete,
                       struct buf *b);
/* The output's file opened (made, with its directories) and preallocated;
 * NAME.incomplete until it is whole (dlfile.c); -1 with why in err (no space: d->fatal). */
int dlrun_open_output(struct dl_run *d, struct out_rt *r, struct buf *err);
/* The resolvers (dlresolve.c): n threads, each with its own hub handle,
 * turning pieces' paths into URLs ahead of the transfers. */
struct dl_resolvers;
struct dl_resolvers *dlresolve_start(struct dl_run *d, int n, struct buf *err);
void dlresolve_stop(struct dl_resolvers *rs);

/* The syncer thread: outputs put in place, the state file saved, writeback
 * started (dlsync.c); it ends after a last durable save once sync_stop. */
void *dlsync_main(void *arg);

/* The hasher thread: advances every active output's hashers over what has
 * landed; marks an output OUT_READY when all its hashes matched, and starts a
 * piece over (its bytes no longer landed) when its hash differs. */
void *dlhash_main(void *arg);
/* Sets up h for [start, start+len) of its output (sha256, or git sha1 with
 * the blob header for a file of len bytes). */
int dlhash_init(struct hasher *h, int64_t start, int64_t len, bool sha1);
void dlhash_free(struct hasher *h);

#endif
