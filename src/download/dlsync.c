/* dlsync: the download's third thread, which owns the disk's slow calls so
 * the transfers never wait on them: an fdatasync of gigabytes of dirty page
 * cache takes seconds, and a transfer loop stalled that long lets every
 * connection idle. It puts verified outputs in place (fdatasync, rename, the
 * parts KEEP_PARTS keeps) and closes the files of failed ones, writes the
 * state file (the landed ranges when the transfers ask, the durable ones
 * every DURABLE_S after syncing the data), and starts the kernel's
 * writeback of what landed each second, so the syncs find little to do; an
 * output whose bytes have all landed is synced while the hasher finishes. It
 * closes an output's file only once it is in place (no transfer and no hash
 * uses it then); the rest are closed when the run ends. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dlrun.h"
#include "mono.h"

#define SAVE_MIN_S 0.02 /* the landed state at most 50 times a second */
#define DURABLE_S 5.0   /* data fdatasync'ed, and the state with it */
#define KICK_S 1.0      /* writeback started for what landed */

/* Verified: on disk, then renamed into place. Without the lock. */
static int put_in_place(struct dl_run *d, struct out_rt *r, int fd, struct buf *err)
{
    struct buf from = BUF_INIT, to = BUF_INIT;
    dlrun_output_path(d, r, !r->final_name, &from);
    dlrun_output_path(d, r, false, &to);
    int rc = 0;
    if (fdatasync(fd) < 0 || (!r->final_name && rename(buf_str(&from), buf_str(&to)) < 0)) {
        buf_printf(err, "cannot put %s in place: %s", buf_str(&to), strerror(errno));
        rc = -1;
    }
    if (rc == 0 && d->o->keep_parts && r->o->split) {
        /* as the script era left them: each part beside its shard */
        for (int i = 0; i < r->o->np && rc == 0; i++) {
            const struct dl_piece *p = &r->o->p[i];
            struct buf pp = BUF_INIT;
            buf_printf(&pp, "%s/%s", d->o->dir, p->f->path);
            int pfd = open(buf_str(&pp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                           0644);
            loff_t in = p->off;
            int64_t left = p->f->size;
            while (pfd >= 0 && left > 0) {
                ssize_t n = copy_file_range(fd, &in, pfd, NULL, (size_t)left, 0);
                if (n <= 0)
                    break;
                left -= n;
            }
            if (pfd < 0 || left > 0 || fsync(pfd) < 0) {
                buf_printf(err, "cannot write %s (KEEP_PARTS): %s", buf_str(&pp),
                           strerror(errno));
                rc = -1;
            }
            if (pfd >= 0)
                close(pfd);
            buf_free(&pp);
        }
    }
    buf_free(&from);
    buf_free(&to);
    return rc;
}

/* What the hub said the output must be, kept with its state for the copy
 * to the workers: the manifest's sha256 of a split shard, else its one
 * piece's LFS sha256 or git blob sha1. */
static void note_sums(struct out_rt *r, int64_t mtime_ns)
{
    const char *sha256 = dl_output_sha256(r->o);
    snprintf(r->st->sha256, sizeof r->st->sha256, "%s", sha256);
    snprintf(r->st->sha1, sizeof r->st->sha1, "%s", sha256[0] ? "" : dl_output_git_sha1(r->o));
    r->st->mtime_ns = mtime_ns;
}

/* r is whole (the hasher said so) and no transfer writes it: the syncer
 * puts it in place (finish_ready), at once (sync_due). Lock held. */
static bool finish_wanted(const struct out_rt *r)
{
    return r->status == OUT_READY && r->active == 0;
}

/* Outputs the hasher found whole, once no transfer writes them: in place
 * (OUT_DONE) or failed with why. A failed output's file stays open until the
 * run ends: the hasher may be reading it. Lock held (dropped around the disk
 * work). True when an output was finished. */
static bool finish_ready(struct dl_run *d)
{
    bool any = false;
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        if (!finish_wanted(r))
            continue;
        r->status = OUT_FINISHING;
        int fd = r->fd;
        pthread_mutex_unlock(&d->mu);
        struct buf err = BUF_INIT;
        int rc = put_in_place(d, r, fd, &err);
        struct stat sb;
        int64_t mt = rc == 0 && fstat(fd, &sb) == 0
                         ? (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec
                         : -1;
        pthread_mutex_lock(&d->mu);
        close(fd);
        r->fd = -1;
        if (rc == 0) {
            r->st->verified = true;
            note_sums(r, mt);
            ranges_clear(&r->st->landed);
            ranges_clear(&r->st->durable);
            r->status = OUT_DONE;
        } else {
            snprintf(r->err, sizeof r->err, "%s", buf_str(&err));
            r->status = OUT_FAILED;
        }
        buf_free(&err);
        any = true;
    }
    return any;
}

/* The state file: what landed, or (durable) what is on disk - the data
 * synced first, so the file never claims bytes a power cut would lose.
 * Lock held (dropped around the syncs and the write). */
static void save(struct dl_run *d, bool durable)
{
    if (durable) {
        struct ranges *snap = calloc((size_t)d->nout + 1, sizeof *snap);
        int *fds = calloc((size_t)d->nout + 1, sizeof *fds);
        for (int i = 0; snap && fds && i < d->nout; i++) {
            ranges_copy(&snap[i], &d->out[i].st->landed);
            fds[i] = d->out[i].status == OUT_ACTIVE || d->out[i].status == OUT_READY
                         ? d->out[i].fd
                         : -1;
        }
        pthread_mutex_unlock(&d->mu);
        for (int i = 0; snap && fds && i < d->nout; i++)
            if (fds[i] >= 0 && fdatasync(fds[i]) < 0)
                fds[i] = -1; /* not known to be on disk: its durable ranges stay */
        pthread_mutex_lock(&d->mu);
        /* what was synced and still counts: a piece the hasher started over
         * meanwhile is not durable, whatever the snapshot says */
        for (int i = 0; snap && fds && i < d->nout; i++)
            if (fds[i] >= 0 && !d->out[i].st->verified)
                ranges_intersect(&d->out[i].st->durable, &snap[i], &d->out[i].st->landed);
        for (int i = 0; snap && i < d->nout; i++)
            ranges_free(&snap[i]);
        free(snap);
        free(fds);
    }
    char *text = dl_state_json(d->st);
    pthread_mutex_unlock(&d->mu);
    struct buf err = BUF_INIT;
    if (dl_state_write(d->o->dir, text, durable, &err) < 0) {
        pthread_mutex_lock(&d->mu);
        snprintf(d->save_err, sizeof d->save_err, "%s", buf_str(&err));
        pthread_mutex_unlock(&d->mu);
    }
    buf_free(&err);
    free(text);
    pthread_mutex_lock(&d->mu);
}

/* The kernel starts writing what landed (without waiting for it), so an
 * fdatasync later finds little still dirty. Lock held (dropped). */
static void kick_writeback(struct dl_run *d)
{
    int *fds = calloc((size_t)d->nout + 1, sizeof *fds);
    for (int i = 0; fds && i < d->nout; i++)
        fds[i] = d->out[i].status == OUT_ACTIVE ? d->out[i].fd : -1;
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; fds && i < d->nout; i++)
        if (fds[i] >= 0)
            sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE);
    free(fds);
    pthread_mutex_lock(&d->mu);
}

/* Every byte of r landed and no transfer writes it: its data can go to the
 * disk while the hasher is still on its tail, so that putting it in place
 * finds nothing dirty (#32: the last output's fdatasync was 20-30 ms of the
 * bench's download, after its last hash). Lock held. */
static bool presync_wanted(const struct out_rt *r)
{
    return r->status == OUT_ACTIVE && r->active == 0 && !r->presynced && r->fd >= 0 &&
           ranges_count(&r->st->landed, 0, r->o->size) == r->o->size;
}

/* Such outputs synced; put_in_place syncs again (then cheap) and says what
 * fails. Lock held (dropped around each sync); only this thread closes the
 * files it syncs. */
static void presync(struct dl_run *d)
{
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        if (!presync_wanted(r))
            continue;
        r->presynced = true;
        int fd = r->fd;
        pthread_mutex_unlock(&d->mu);
        (void)fdatasync(fd);
        pthread_mutex_lock(&d->mu);
    }
}

/* Work that must not wait for the next tick: an output whole and no longer
 * written, or the stop. Checked under the lock before each wait - a signal
 * sent while this thread synced or saved (lock dropped) found no waiter, and
 * the last output sat READY for the whole tick (#32: 100 ms of the
 * download's end). Lock held. */
static bool sync_due(const struct dl_run *d)
{
    if (d->sync_stop)
        return true;
    for (int i = 0; i < d->nout; i++)
        if (finish_wanted(&d->out[i]) || presync_wanted(&d->out[i]))
            return true;
    return false;
}

void *dlsync_main(void *arg)
{
    struct dl_run *d = arg;
    double last_save = mono_s(), last_durable = last_save, last_kick = last_save;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        bool stop = d->sync_stop;
        bool finished = finish_ready(d);
        double now = mono_s();
        bool durable = finished || stop || now - last_durable >= DURABLE_S;
        if (durable || (d->save_wanted && now - last_save >= SAVE_MIN_S)) {
            d->save_wanted = false;
            save(d, durable);
            last_save = now;
            last_durable = durable ? now : last_durable;
        }
        if (stop)
            break;
        if (finished && d->wake) /* the run's loop sees it at once, not at its next poll */
            curl_multi_wakeup(d->wake);
        presync(d);
        if (now - last_kick >= KICK_S) {
            kick_writeback(d);
            last_kick = now;
        }
        if (sync_due(d))
            continue;
        struct timespec ts;
        mono_deadline(&ts, 100);
        mono_cond_wait(&d->sync_cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}
