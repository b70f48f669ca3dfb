/* xfer_place: before the streams, what is already on the worker - each file
 * of the plan in place and matching, landed before (the state files, trusted
 * as xfer_state says), or to come from nothing - and whether the rest fits
 * on the disk. Part of the receiving end (xfer_recv_int.h). */
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

static bool same_file(const struct xfer_file *f, const struct xfer_state_file *s)
{
    if (s->size != f->size)
        return false;
    if (f->has_sha) /* the manifest is the authority */
        return s->has_sha && memcmp(s->sha, f->sha, 32) == 0;
    /* the head's file as it was when it sent it; a time not known (-1: the
     * download's own copy) vouches for nothing: sent again (small files) */
    return f->mtime_ns >= 0 && s->mtime_ns == f->mtime_ns;
}

/* A regular file of size at dir/path (never through a symlink), ours alone:
 * another user's (planted in a shared directory) or a hard link into
 * somewhere else is taken for nothing, as in open_incomplete. */
static bool file_is(const char *dir, const char *path, const char *suffix, int64_t size)
{
    const char *base;
    int dfd = xfer_recv_open_parent(dir, path, false, &base);
    if (dfd < 0)
        return false;
    char name[300];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    struct stat sb;
    bool ok = fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
              sb.st_size == size && sb.st_uid == geteuid() && sb.st_nlink == 1;
    close(dfd);
    return ok;
}

struct check_tick {
    struct recv *r;
    struct verify_progress p;
    time_t last;
};

/* Every few seconds while files in place are hashed: the operator sees it
 * move, and the head knows the helper is alive. */
static void check_said(void *arg)
{
    struct check_tick *t = arg;
    time_t now = time(NULL);
    if (now - t->last < 5)
        return;
    t->last = now;
    xfer_recv_say(t->r, "checking: %" PRId64 " of %" PRId64 " bytes hashed", atomic_load(&t->p.done_bytes),
        atomic_load(&t->p.total_bytes));
}

/* dir/path's bytes on the disk (never through a symlink); 0 or errno. */
static int sync_file(const char *dir, const char *path)
{
    const char *base;
    int dfd = xfer_recv_open_parent(dir, path, false, &base);
    int fd = dfd < 0 ? -1 : openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int e = fd < 0 || fdatasync(fd) < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    return e;
}

/* Files in place that the state does not vouch for (an rsync copy, another
 * tool's) and whose sha256 the plan knows: hashed here, so a right one is
 * not sent again. */
static void check_in_place(struct recv *r)
{
    struct verify_manifest m = {0};
    int64_t bytes = 0;
    m.e = calloc((size_t)(r->n ? r->n : 1), sizeof *m.e);
    int *which = calloc((size_t)(r->n ? r->n : 1), sizeof *which);
    for (int i = 0; m.e && which && i < r->n; i++) {
        struct rfile *f = &r->f[i];
        if (f->status != RF_WANT || !f->f->has_sha || f->st->landed.n ||
            !file_is(r->o->dir, f->f->path, "", f->f->size))
            continue;
        m.e[m.n].path = f->f->path;
        memcpy(m.e[m.n].want, f->f->sha, 32);
        which[m.n++] = i;
        bytes += f->f->size;
    }
    if (m.n) {
        xfer_recv_say(r, "checking %d file(s) already on this node (%" PRId64 " bytes)", m.n, bytes);
        struct check_tick t = {.r = r};
        verify_run(&m, r->o->dir, r->o->jobs, r->o->cancel, &t.p, NULL, &t, check_said);
        for (int k = 0; k < m.n; k++) {
            struct rfile *f = &r->f[which[k]];
            /* hashed from the page cache: on the disk too before the durable
             * state says verified (else sent again) */
            if (m.e[k].res != VERIFY_OK || sync_file(r->o->dir, f->f->path) != 0)
                continue;
            f->status = RF_OK;
            f->st->verified = true;
            f->st->has_sha = true;
            memcpy(f->st->sha, f->f->sha, 32);
            r->dirty = r->durable_dirty = true;
        }
    }
    free(m.e); /* the paths are the plan's */
    free(which);
}

int xfer_place_setup(struct recv *r)
{
    struct buf note = BUF_INIT;
    xfer_state_resume(r->o->dir, &r->state, &note);
    if (note.len)
        xfer_recv_say(r, "the state of an earlier copy: %s", buf_str(&note));
    buf_free(&note);
    r->n = r->o->plan->n;
    r->f = calloc((size_t)(r->n ? r->n : 1), sizeof *r->f);
    if (!r->f)
        return -1;
    /* every file's entry first: the array grows (and moves) as entries are
     * added, and each file keeps a pointer into it */
    for (int i = 0; i < r->n; i++)
        if (!xfer_state_get(&r->state, r->o->plan->f[i].path))
            return -1;
    for (int i = 0; i < r->n; i++) {
        struct rfile *f = &r->f[i];
        f->f = &r->o->plan->f[i];
        f->fd = f->dio_fd = -1;
        if (xfer_recv_digests_start(f) < 0)
            return -1;
        struct xfer_state_file *s = xfer_state_find(&r->state, f->f->path);
        if (!same_file(f->f, s)) {
            s->verified = false;
            xfer_state_forget(s);
            r->durable_dirty = true;
        }
        f->st = s;
        if (s->verified && file_is(r->o->dir, f->f->path, "", f->f->size)) {
            f->status = RF_OK; /* verified by an earlier run: not read again */
            continue;
        }
        s->verified = false;
        s->size = f->f->size;
        s->mtime_ns = f->f->mtime_ns;
        s->has_sha = f->f->has_sha;
        memcpy(s->sha, f->f->sha, 32);
        if (f->f->size == 0 && !f->f->has_sha) { /* nothing to send: its sum is known */
            EVP_Digest("", 0, f->sum, NULL, EVP_sha256(), NULL);
            f->sum_known = true;
        }
        /* what landed earlier counts only while NAME.incomplete is there */
        if (s->landed.n && (!file_is(r->o->dir, f->f->path, ".incomplete", f->f->size) ||
                            xfer_recv_open_incomplete(r, f) != 0)) {
            xfer_state_forget(s);
            r->durable_dirty = true;
        }
        f->unsynced = s->landed.n > 0; /* the first sync says what is on the disk */
    }
    check_in_place(r);
    return 0;
}

/* What the files still need beside what is free, said before any byte. */
int xfer_place_check_space(struct recv *r)
{
    int64_t need = 0;
    for (int i = 0; i < r->n; i++) {
        struct rfile *f = &r->f[i];
        if (f->status != RF_WANT)
            continue;
        struct stat sb;
        int64_t held = f->fd >= 0 && fstat(f->fd, &sb) == 0 ? (int64_t)sb.st_blocks * 512 : 0;
        need += f->f->size > held ? f->f->size - held : 0;
    }
    struct statvfs v;
    if (statvfs(r->o->dir, &v) < 0) {
        xfer_recv_say(r, "%s: %s", r->o->dir, strerror(errno));
        return -1;
    }
    int64_t avail = (int64_t)v.f_bavail * (int64_t)v.f_frsize;
    if (need > avail) {
        xfer_recv_say(r,
            "not enough space in %s on this node: the copy needs %" PRId64 " bytes more, %" PRId64
            " are free",
            r->o->dir, need, avail);
        return -1;
    }
    return 0;
}
