/* verify: sha256 manifests in sha256sum's format and parallel hashing with
 * OpenSSL's EVP. The checkpoint's sha256-manifest.txt lists the six native
 * shards (~460 GB): one thread per file, up to `jobs` at a time, because
 * NVMe reads several streams faster than one and each file hashes on one
 * core. A manifest comes from the network, so a path that leaves the
 * directory (absolute, "..") is refused, never opened. */
#ifndef DSV41_VERIFY_H
#define DSV41_VERIFY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"

#define VERIFY_MAX_FILES 100000
#define VERIFY_MAX_JOBS 64

enum verify_result {
    VERIFY_PENDING,
    VERIFY_OK,
    VERIFY_MISMATCH,   /* hashed, another sha256 */
    VERIFY_MISSING,    /* no such file */
    VERIFY_UNREADABLE, /* open or read failed: err says why */
    VERIFY_CANCELLED,
};

struct verify_entry {
    char *path; /* relative to the directory, as in the manifest */
    unsigned char want[32], got[32];
    int64_t size; /* -1 until opened */
    enum verify_result res;
    int err;          /* errno for VERIFY_UNREADABLE */
    bool not_regular; /* or: a directory, FIFO, device in the file's place */
    int line;
};

struct verify_manifest {
    struct verify_entry *e;
    int n;
};

/* Why a path from the network would leave the directory (absolute, a ".."
 * part, empty), or NULL when it stays inside. */
const char *verify_path_problem(const char *path);
/* Parses sha256sum output ("HEX  PATH" or "HEX *PATH"; blank lines and
 * '#' comments skipped). On a malformed line: -1 and "NAME:LINE: why" in
 * err. A path listed twice, absolute, or with a ".." part is malformed. */
int verify_manifest_parse(const char *text, const char *name, struct verify_manifest *m,
                          struct buf *err);
void verify_manifest_free(struct verify_manifest *m);
/* Every entry back to VERIFY_PENDING, nothing known of its file (a
 * manifest checked again, on another node). verify_run and verify_peer_run
 * start with it. */
void verify_manifest_reset(struct verify_manifest *m);
/* Keeps only the entries whose path is in paths (n of them); -1 and the
 * first path the manifest lacks in err. */
int verify_manifest_select(struct verify_manifest *m, char **paths, int n, struct buf *err);

struct verify_progress {
    _Atomic int64_t done_bytes;
    _Atomic int64_t total_bytes; /* grows as files are opened */
    _Atomic int files_done;
};

/* Called once per file as it ends, one call at a time, in completion
 * order. */
typedef void (*verify_done_fn)(const struct verify_entry *e, void *arg);
/* Called on the calling thread about every 200 ms while files are hashed
 * (for a progress line), never at the same time as a done call; it gets
 * verify_run's arg, as done does (a caller without done still passes the
 * tick's argument there). */
typedef void (*verify_tick_fn)(void *arg);

/* Hashes every entry under dir with up to jobs threads; total_bytes is the
 * sum of the files' sizes from the start (all are stat'ed first). cancel,
 * when set, ends the run early: unfinished files become VERIFY_CANCELLED.
 * Returns the number of files that are not VERIFY_OK, or -1 (errno set)
 * when dir cannot be opened or no thread could start. */
int verify_run(struct verify_manifest *m, const char *dir, int jobs,
               const atomic_int *cancel, struct verify_progress *p,
               verify_done_fn done, void *arg, verify_tick_fn tick);

/* The sha256 of an open file, read from its start; adds to *done as it
 * goes. 0, or an errno (ECANCELED when cancel was set). */
int verify_sha256_fd(int fd, unsigned char out[32], _Atomic int64_t *done,
                     const atomic_int *cancel);

const char *verify_result_name(enum verify_result r);
/* Why an entry is VERIFY_UNREADABLE. */
const char *verify_error(const struct verify_entry *e);
void verify_hex(const unsigned char d[32], char out[65]);

#endif
