/* xfer_state: what a copy has landed on a worker, kept by dsv41-xfer in
 * DIR/.dsv41-copy.state so that a killed or cut copy continues from the
 * ranges that arrived and a file verified earlier is skipped without
 * reading it again. Text (the helper is static and links no JSON library):
 *   dsv41-copy-state 1
 *   file SIZE MTIME_NS SHA256|- VERIFIED NRANGES PATH
 *   range A B            (NRANGES of them, after their file)
 * Written as a temporary file and renamed: a crash leaves the old state or
 * the new one. The landed ranges are what reached the page cache: after a
 * power cut a file's bytes may be older than its state, which its hash then
 * finds (the file is sent again, never put in place wrong). */
#ifndef DSV41_XFER_STATE_H
#define DSV41_XFER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "ranges.h"

#define XFER_STATE_NAME ".dsv41-copy.state"
#define XFER_STATE_MAX_RANGES 100000

struct xfer_state_file {
    char *path;
    int64_t size, mtime_ns;
    bool has_sha, verified;
    unsigned char sha[32];
    struct ranges landed;
};

struct xfer_state {
    struct xfer_state_file *f;
    int n;
};

/* 1 when there is none, 0 loaded, -1 damaged (err says where). */
int xfer_state_load(const char *dir, struct xfer_state *s, struct buf *err);
void xfer_state_format(const struct xfer_state *s, struct buf *out);
int xfer_state_write(const char *dir, const struct buf *text, struct buf *err);
struct xfer_state_file *xfer_state_find(struct xfer_state *s, const char *path);
/* The entry for path, added when missing; NULL out of memory. */
struct xfer_state_file *xfer_state_get(struct xfer_state *s, const char *path);
void xfer_state_free(struct xfer_state *s);

#endif
