/* xfer_sync: the landed bytes made durable - every SYNC_MS the syncer
 * fdatasyncs the files written since, fsyncs the directories of new names,
 * then writes the durable state (only ranges the disk holds); the live
 * state each second. Part of the receiving end (xfer_recv_int.h). */
#include "xfer_recv_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mono.h"
#include "verify.h"

/* A state file written; a failure said once. Lock not held. */
static int write_state(struct recv *r, const char *name, struct buf *text, bool durable)
{
    struct buf err = BUF_INIT;
    int rc = xfer_state_write(r->o->dir, name, text, durable, &err);
    if (rc < 0 && !atomic_exchange(&r->save_said, true))
        xfer_recv_say(r, "cannot save the copy's state: %s", buf_str(&err));
    buf_free(&err);
    buf_free(text);
    return rc;
}

/* What reached the page cache, every second: enough to go on after a killed
 * helper or a cut link while the node stays up. */
void xfer_sync_save_live(struct recv *r)
{
    pthread_mutex_lock(&r->mu);
    if (!r->dirty) {
        pthread_mutex_unlock(&r->mu);
        return;
    }
    r->dirty = false;
    struct buf text = BUF_INIT;
    xfer_state_format(&r->state, false, &text);
    pthread_mutex_unlock(&r->mu);
    write_state(r, XFER_STATE_LIVE, &text, false);
}

struct pending_sync {
    int fd, i;
    uint32_t gen;
    bool data, dir; /* what to sync: its bytes, its directory's entry */
    int err;
    struct ranges snap; /* landed when the sync began: what it vouches for */
};

/* f's parent directory synced (its NAME.incomplete's entry); 0 or errno. */
static int sync_parent(struct recv *r, const struct rfile *f)
{
    const char *base;
    int dfd = xfer_recv_open_parent(r->o->dir, f->f->path, false, &base);
    int e = dfd < 0 || fsync(dfd) < 0 ? errno : 0;
    if (dfd >= 0)
        close(dfd);
    return e;
}

/* The landed ranges made durable: every file written since the last round
 * fdatasync'ed through a dup of its fd (a file put in place meanwhile closes
 * its own) and the directory of each file made since, then the ranges that
 * had landed before the sync began count as synced, and the durable state is
 * written. A failed sync fails the file and forgets its ranges: after a
 * writeback error the kernel may mark the lost pages clean, so a later sync
 * that succeeds proves nothing of them. 0 when the state was written. */
int xfer_sync_round(struct recv *r)
{
    struct pending_sync *p = calloc((size_t)(r->n ? r->n : 1), sizeof *p);
    int np = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; p && i < r->n; i++) {
        struct rfile *f = &r->f[i];
        if ((!f->unsynced && !f->dir_unsynced) || f->status != RF_WANT || f->fd < 0)
            continue;
        int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            continue;
        p[np] = (struct pending_sync){
            .fd = fd, .i = i, .gen = f->gen, .data = f->unsynced, .dir = f->dir_unsynced};
        if (ranges_copy(&p[np].snap, &f->st->landed) < 0) {
            close(fd);
            continue;
        }
        f->unsynced = f->dir_unsynced = false;
        np++;
    }
    pthread_mutex_unlock(&r->mu);
    for (int k = 0; k < np; k++) {
        if (p[k].data && fdatasync(p[k].fd) < 0)
            p[k].err = errno;
        if (!p[k].err && p[k].dir)
            p[k].err = sync_parent(r, &r->f[p[k].i]);
        close(p[k].fd);
    }
    pthread_mutex_lock(&r->mu);
    for (int k = 0; k < np; k++) {
        struct rfile *f = &r->f[p[k].i];
        bool current = f->gen == p[k].gen && f->status == RF_WANT;
        if (p[k].err && current) {
            xfer_recv_say(r, "cannot sync %s to the disk: %s", f->f->path, strerror(p[k].err));
            xfer_state_forget(f->st);
            r->dirty = r->durable_dirty = true;
            xfer_recv_fail_file(r, f, p[k].err);
        } else if (current && ranges_copy(&f->st->synced, &p[k].snap) == 0) {
            r->durable_dirty = true;
        }
        ranges_free(&p[k].snap);
    }
    free(p);
    if (!r->durable_dirty) {
        pthread_mutex_unlock(&r->mu);
        return 0;
    }
    r->durable_dirty = false;
    struct buf text = BUF_INIT;
    xfer_state_format(&r->state, true, &text);
    pthread_mutex_unlock(&r->mu);
    if (write_state(r, XFER_STATE_NAME, &text, true) == 0)
        return 0;
    pthread_mutex_lock(&r->mu);
    r->durable_dirty = true;
    pthread_mutex_unlock(&r->mu);
    return -1;
}

/* Every SYNC_MS while the streams run. */
void *xfer_sync_main(void *arg)
{
    struct recv *r = arg;
    while (!atomic_load(&r->stop)) {
        struct timespec until;
        mono_deadline(&until, SYNC_MS);
        pthread_mutex_lock(&r->mu);
        while (!atomic_load(&r->stop) &&
               mono_cond_wait(&r->sync_cv, &r->mu, &until) != ETIMEDOUT)
            ;
        pthread_mutex_unlock(&r->mu);
        if (!atomic_load(&r->stop))
            xfer_sync_round(r);
    }
    return NULL;
}
