/* dlplan: what a download writes. Each output is a file of the directory;
 * most are one hub file, but a shard the hub holds as SHARD.partNN pieces
 * (its 50 GB cap) is one output made of its parts, each written straight into
 * its place (offset = the sizes of the parts before it), so no part file and
 * no second copy ever exist. Every piece carries the hash it must have (its
 * LFS sha256 or its git blob sha1); a split shard also carries the sha256
 * sha256-manifest.txt gives the whole. Pure: tested on listings. */
#ifndef DSV41_DLPLAN_H
#define DSV41_DLPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "hub.h"

struct dl_piece {
    const struct hub_file *f; /* the hub file (path, size, hashes) */
    int64_t off;              /* where its bytes go in the output */
};

struct dl_output {
    char *path; /* in the directory */
    int64_t size;
    struct dl_piece *p;
    int np;
    bool split;             /* made of .partNN pieces */
    char whole_sha256[65];  /* the manifest's sum for the whole output; "" none */
};

struct dl_plan {
    struct dl_output *o;
    int n, cap;
    int64_t bytes;
    char note[512]; /* what the plan chose to say (a shard listed whole and in parts) */
};

/* The outputs of a listing (sorted, as hub_tree_check leaves it), those whose
 * path matches one of include (all when ninclude is 0). manifest:
 * sha256-manifest.txt's text, or NULL. */
int dl_plan_build(const struct hub_tree *t, const char *manifest, char *const *include,
                  int ninclude, struct dl_plan *p, struct buf *err);
const struct dl_output *dl_plan_find(const struct dl_plan *p, const char *path);
/* What the hub says the whole output must be: the manifest's sha256 of a
 * split shard or an LFS file's sha256 ("" none), and a small file's git blob
 * sha1 (an LFS file's oid is its pointer's, never its content's: ""). */
const char *dl_output_sha256(const struct dl_output *o);
const char *dl_output_git_sha1(const struct dl_output *o);
void dl_plan_free(struct dl_plan *p);

/* Whether a running transfer with `left` bytes still to come is worth
 * splitting for an idle connection: the split saves half of them at the
 * connection's rate (conn_rate, bytes/s) and costs a new request's opening
 * (open_s: connect, TLS, first byte, as measured; a CDN's ~100 ms, loopback's
 * 1 ms), so only where the saving is twice the cost, and never under 1 MiB
 * left; with nothing measured yet (0), 4 MiB. */
bool dl_split_pays(int64_t left, double open_s, double conn_rate);

#endif
