/* xfer_state: what a copy has landed on a worker, kept by dsv41-xfer so
 * that a killed or cut copy continues from the ranges that arrived and a
 * file verified earlier is skipped without reading it again. Text (the
 * helper is static and links no JSON library):
 *   dsv41-copy-state 2
 *   boot BOOT_ID SEQ     (the node's boot when written; SEQ grows per write)
 *   file SIZE MTIME_NS SHA256|- VERIFIED NRANGES PATH
 *   range A B            (NRANGES of them, after their file)
 * Two files, each written as a temporary file and renamed (a crash leaves
 * the old one or the new one):
 *   DIR/.dsv41-copy.state  durable: lists only ranges that were fdatasync'ed
 *                          before it was written, and is fsync'ed with its
 *                          directory; it holds across a power cut.
 *   DIR/.dsv41-copy.live   every second: what reached the page cache. Good
 *                          only while the node has not restarted (its boot
 *                          line says which boot wrote it), since a power cut
 *                          loses the page cache and may leave this file
 *                          empty or old (nothing synced it).
 * The newer one of the two that still holds is used. A version 1 state
 * (no boot line: written before there were two) is taken as durable; the
 * file's hash finds any bytes it claimed that a power cut lost. */
#ifndef DSV41_XFER_STATE_H
#define DSV41_XFER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "ranges.h"

#define XFER_STATE_NAME ".dsv41-copy.state"
#define XFER_STATE_LIVE ".dsv41-copy.live"
#define XFER_STATE_MAX_RANGES 100000
#define XFER_STATE_MAX_SEQ (1LL << 50)
#define XFER_BOOT_LEN 40

struct xfer_state_file {
    char *path;
    int64_t size, mtime_ns;
    bool has_sha, verified;
    unsigned char sha[32];
    struct ranges landed; /* in the page cache (the live file) */
    struct ranges synced; /* of those, on the disk (the durable file) */
};

struct xfer_state {
    struct xfer_state_file *f;
    int n;
    uint64_t seq; /* of the last write loaded or made */
    char boot[XFER_BOOT_LEN]; /* of the state loaded ("" for a version 1) */
    char boot_now[XFER_BOOT_LEN]; /* this boot's, read at the first write */
    bool boot_read;
};

/* This node's boot ID ("" when unknown: then no live state is trusted). */
void xfer_state_boot(char out[XFER_BOOT_LEN]);
/* One of the two files, name XFER_STATE_NAME or XFER_STATE_LIVE: 1 when
 * there is none (or it is empty), 0 loaded, -1 damaged (err says where).
 * The ranges go to landed; synced stays empty. */
int xfer_state_load(const char *dir, const char *name, struct xfer_state *s, struct buf *err);
/* The state to go on from: the live file when this boot wrote it and it is
 * the newer, else the durable one. synced holds what the durable one
 * vouches for. 1 none, 0 loaded, -1 both damaged; note says what was
 * chosen when it matters to an operator (a restart since, a damaged file). */
int xfer_state_resume(const char *dir, struct xfer_state *s, struct buf *note);
/* The live text (landed ranges) or the durable one (synced ranges) under
 * the next SEQ; s->seq grows. */
void xfer_state_format(struct xfer_state *s, bool durable, struct buf *out);
/* durable: the file and its directory fsync'ed. */
int xfer_state_write(const char *dir, const char *name, const struct buf *text, bool durable,
                     struct buf *err);
struct xfer_state_file *xfer_state_find(struct xfer_state *s, const char *path);
/* The entry for path, added when missing; NULL out of memory. */
struct xfer_state_file *xfer_state_get(struct xfer_state *s, const char *path);
/* A file's ranges forgotten, landed and synced (started over, verified). */
void xfer_state_forget(struct xfer_state_file *f);
void xfer_state_free(struct xfer_state *s);

#endif
