/* dlstate: what a download has done, kept in DIR/.dsv41-download.json so that
 * a killed, cut or rebooted download continues where it stopped: the commit
 * it pinned, and per output the byte ranges that landed and those known to
 * be on disk (fdatasync'ed). After a kill the page cache still holds what
 * landed; after a reboot (another boot id) only the durable ranges count.
 * Written as a temporary file and renamed, so a crash leaves the old state
 * or the new one. */
#ifndef DSV41_DLSTATE_H
#define DSV41_DLSTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "ranges.h"

#define DL_STATE_NAME ".dsv41-download.json"
#define DL_LOCK_NAME ".dsv41-download.lock"

struct dl_state_file {
    char *path;
    int64_t size;
    bool verified;
    int parts; /* the .partNN pieces a split shard is written from; 0 a plain file */
    struct ranges landed, durable;
    /* once verified: what the hub said it must be (its LFS sha256 or the
     * manifest's, else its git blob sha1; "" not known) and the file's time
     * when put in place; copy-to-peer checks the worker's copy against them
     * while the file is unchanged */
    char sha256[65], sha1[41];
    int64_t mtime_ns;
};

struct dl_state {
    char repo[256], commit[41], boot_id[64];
    struct dl_state_file *f;
    int n;
};

/* 1 when there is no state (a new download), 0 loaded, -1 damaged (err). */
int dl_state_load(const char *dir, struct dl_state *s, struct buf *err);
/* durable: fsync the file too (after the data itself was synced). */
int dl_state_save(const char *dir, const struct dl_state *s, bool durable, struct buf *err);
/* The two halves of a save, so the text can be made under a lock and written
 * without it: the JSON (malloc'ed; NULL out of memory), then the file. */
char *dl_state_json(const struct dl_state *s);
int dl_state_write(const char *dir, const char *text, bool durable, struct buf *err);
/* The entry for path, made when missing; a size that changed starts it over. */
struct dl_state_file *dl_state_get(struct dl_state *s, const char *path, int64_t size);
/* One download per directory: a second would write the same files. Held
 * (flock on DIR/.dsv41-download.lock, the PID written in it) until the
 * process ends, however it ends; -1 when another holds it (err names it). */
int dl_state_lock(const char *dir, struct buf *err);
/* The PID holding dir's lock, read from /proc/locks without touching the
 * lock itself (a probe that took it could make a starting download fail);
 * 0 when none does. */
long dl_state_lock_holder(const char *dir);
/* This boot's id (/proc/sys/kernel/random/boot_id), "" when unknown. */
void dl_boot_id(char out[64]);
void dl_state_free(struct dl_state *s);

#endif
