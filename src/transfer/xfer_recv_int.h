/* xfer_recv_int: what the receiving end's files share inside src/transfer -
 * xfer_recv.c (the streams, the hasher, the run), xfer_place.c (what is
 * already here, before the streams) and xfer_sync.c (the landed bytes made
 * durable, and the state files). Not for other folders: xfer_recv.h is
 * the interface. */
#ifndef DSV41_XFER_RECV_INT_H
#define DSV41_XFER_RECV_INT_H

#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ranges.h"
#include "xfer_recv.h"
#include "xfer_state.h"
#include "xfer_wire.h"

#define MAX_CONNS 128
#define MAX_HELLOS 32       /* connections still to present the token */
#define MAX_HELLOS_FROM 4   /* ... from one address */
#define HELLO_MS 5000       /* the whole hello, however slowly it trickles in */
#define MAX_REFUSED_SAID 20 /* refusals reported; the rest counted at the end */
/* received, written (direct) and hashed at a time: one direct write per 4 MiB
 * instead of per 256 KiB took the worker from ~1.35 to ~1.0 CPU-s per GB on
 * the test hosts (user 0.85 -> 0.70: fewer lock rounds; sys 0.50 -> 0.32:
 * fewer direct writes and extent conversions; 2, 8 and 16 MiB measured
 * worse), though on their veth part of that moved to the head's side (both
 * ends ~1.45 either way). 4 MiB still sits in the cache for the hash; 16
 * streams (the most copy-to-peer picks itself) hold 64 MiB. */
#define PIECE (4 << 20)
#define HASH_STEP (4 << 20)
#define SYNC_MS 5000 /* landed bytes made durable this often: what a power cut may cost */

enum rf_status { RF_WANT, RF_CLOSING, RF_OK, RF_FAILED };

struct rfile {
    const struct xfer_file *f;
    struct xfer_state_file *st; /* its landed ranges live there */
    int fd;
    int dio_fd;   /* the same file for direct writes (xfer_disk.c), or -1 */
    bool dio_off; /* the filesystem refused a direct write: buffered from then on */
    uint32_t gen;
    struct ranges inflight; /* being written now: never written twice at once */
    bool unsynced;          /* landed ranges the disk may not hold yet */
    bool dir_unsynced;      /* NAME.incomplete made: its name may not be on the disk yet */
    int writers;
    int64_t hashed;
    bool hashing;     /* a thread is adding to the digests (outside the lock) */
    EVP_MD_CTX *ctx;  /* sha256 of the prefix hashed */
    EVP_MD_CTX *gctx; /* the git blob sha1 of it, when the hub's is known */
    bool sum_known;
    unsigned char sum[32];
    enum rf_status status;
};

struct conn {
    struct recv *r;
    int fd;
    char addr[64];
    pthread_t th;
    atomic_bool done;   /* set by its thread as it ends; read by the accepting one */
    atomic_bool authed; /* presented the token */
};

struct recv {
    const struct xfer_recv_opts *o;
    struct rfile *f;
    int n;
    struct xfer_state state;
    pthread_mutex_t mu, out_mu;
    pthread_cond_t cv;      /* bytes landed, a sum, a writer done */
    pthread_cond_t sync_cv; /* the syncer's: the end */
    int64_t landed_run;
    bool dirty, durable_dirty; /* the live state's news; the durable state's */
    atomic_bool save_said; /* said once */
    atomic_bool stop;
    struct conn *conns[MAX_CONNS];
    int nconn;
    atomic_int refused;
    const char *listen; /* where it listens: the fabric's address, or the fallback */
};

/* A report line to the head (under its lock); a closed channel stops the run. */
void xfer_recv_say(struct recv *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* xfer_disk.c: the parent directory of path inside dir (made when missing, with make),
 * nothing of it followed through a symlink; its fd, or -1 (errno). *base
 * points into path at the last name. */
int xfer_recv_open_parent(const char *dir, const char *path, bool make, const char **base);
/* xfer_disk.c: f's NAME.incomplete opened (made when missing) and
 * preallocated to its size: f->fd, and f->dio_fd where the filesystem has
 * direct I/O. Lock held. 0 or errno. */
int xfer_recv_open_incomplete(struct recv *r, struct rfile *f);
/* What a direct read or write lines up with - offset, length and buffer:
 * 4 KiB, or the page where pages are larger (64 KiB on some arm64 kernels:
 * a direct block must never share a page with a buffered write). */
size_t xfer_dio_align(void);
/* f's fds closed. */
void xfer_recv_close_file(struct rfile *f);
/* n bytes at off, whole: the aligned blocks inside through dio_fd (when
 * not -1 and p lines up), the rest through fd; a direct write the
 * filesystem refuses (EINVAL) sets *dio_refused and is written buffered.
 * 0 or errno. */
int xfer_recv_write(int fd, int dio_fd, const char *p, int64_t off, int64_t n, bool *dio_refused);
/* Up to n bytes at off into buf: direct through dio_fd (not -1) when off
 * and buf line up with whole blocks (buf then holds n rounded up to whole
 * blocks), else through fd; what pread returns (at most n). A direct read
 * the filesystem refuses sets *dio_refused and is read buffered. */
ssize_t xfer_recv_read(int fd, int dio_fd, char *buf, size_t n, int64_t off, bool *dio_refused);
/* f failed with errno e: said to the head (once), the waiters woken. Under r->mu. */
void xfer_recv_fail_file(struct recv *r, struct rfile *f, int e);
/* f's digests from its first byte: sha256, and the git blob sha1 when the
 * plan has the hub's. 0 or -1. */
int xfer_recv_digests_start(struct rfile *f);

/* xfer_place.c: the files of the plan (r->f) set up from what is here - in
 * place and matching, landed before (the state files), or from nothing. 0;
 * -1 when it could not start (said). */
int xfer_place_setup(struct recv *r);
/* What the files still need beside what is free, said before any byte; -1
 * when it does not fit. */
int xfer_place_check_space(struct recv *r);

/* xfer_sync.c: the live state saved (each second, by the run's thread); one
 * round of the syncer (fdatasync, directory fsync, the durable state: 0
 * when it was written); the syncer thread, a round every SYNC_MS while the
 * streams run. */
void xfer_sync_save_live(struct recv *r);
int xfer_sync_round(struct recv *r);
void *xfer_sync_main(void *arg);

#endif
