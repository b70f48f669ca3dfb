/* assemble: a shard rebuilt from the SHARD.partNN pieces a directory already
 * holds (from `hf download` or the script era), with at most one chunk of
 * extra disk whatever the shard's size: a chunk of a part is copied to the
 * shard's end, made durable, then released from the part (punched out; the
 * part deleted once empty). A journal beside the shard records what is
 * durable, so a crash at any point loses nothing and a rerun continues. The
 * shard is hashed as it is written and checked against sha256-manifest.txt
 * before it takes its name. keep_parts: the parts are copied and kept (the
 * script era's cat, needing the shard's size again). */
#ifndef DSV41_ASSEMBLE_H
#define DSV41_ASSEMBLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"

#define ASSEMBLE_JOURNAL_SUFFIX ".dsv41-assemble.json"

struct assemble_opts {
    int64_t chunk;     /* bytes copied before a part is released (1 GiB) */
    bool keep_parts;
    const atomic_int *cancel;
    /* after each chunk: bytes of the shard written, of its size */
    void (*on_progress)(const char *shard, int64_t done, int64_t total, void *arg);
    void *arg;
};

/* The shards under dir that have parts (or an unfinished journal), sorted. */
int assemble_find(const char *dir, char ***shards, int *n, struct buf *err);
/* How far a rebuild got, from its journal: 0 with the bytes written and the
 * shard's size; 1 when there is no journal (not started); -1 damaged. */
int assemble_progress(const char *dir, const char *shard, int64_t *written, int64_t *total);
/* Rebuilds dir/shard; want_sha256 "" when the manifest has no entry. 0 done
 * and matching; 1 cancelled (a rerun continues); 2 it was already in place
 * (its stale journal removed); -1 err says what failed and what to do. */
int assemble_shard(const char *dir, const char *shard, const char *want_sha256,
                   const struct assemble_opts *o, struct buf *err);

#endif
