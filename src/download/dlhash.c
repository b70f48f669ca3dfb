/* dlhash: the download's hasher thread (see dlrun.h). Each piece is hashed
 * over the contiguous prefix of its bytes that has landed, read back from
 * the file while it is still in the page cache; nothing is read twice. A
 * split shard's parts are not hashed alone unless its whole differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlrun.h"
#include "mono.h"

#define HASH_STEP (4 << 20)
#define MAX_REFETCHES 2

int dlhash_init(struct hasher *h, int64_t start, int64_t len, bool sha1)
{
    if (!h->ctx)
        h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || !EVP_DigestInit_ex(h->ctx, sha1 ? EVP_sha1() : EVP_sha256(), NULL))
        return -1;
    h->start = start;
    h->len = len;
    h->done = 0;
    h->sha1 = sha1;
    h->finished = h->ok = false;
    if (sha1) { /* git's blob id: "blob SIZE\0" then the content */
        char head[40];
        int n = snprintf(head, sizeof head, "blob %lld", (long long)len);
        EVP_DigestUpdate(h->ctx, head, (size_t)n + 1);
    }
    return 0;
}

void dlhash_free(struct hasher *h)
{
    EVP_MD_CTX_free(h->ctx);
    h->ctx = NULL;
}

static bool finish(struct hasher *h, const char *want)
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    EVP_DigestFinal_ex(h->ctx, d, &dl);
    for (unsigned i = 0; i < dl; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    h->finished = true;
    h->ok = strcmp(hex, want) == 0;
    return h->ok;
}

/* One step of h over what has landed; true when it hashed something. Called
 * with the lock held; drops it around the read. */
static bool step(struct dl_run *d, struct out_rt *r, struct hasher *h, char *buf)
{
    if (h->finished)
        return false;
    int64_t from = h->start + h->done, end = h->start + h->len;
    int64_t reach = ranges_reach(&r->st->landed, from);
    if (reach > end)
        reach = end;
    if (reach <= from)
        return false;
    size_t n = (size_t)(reach - from < HASH_STEP ? reach - from : HASH_STEP);
    int fd = r->fd;
    pthread_mutex_unlock(&d->mu);
    ssize_t got = pread(fd, buf, n, from);
    if (got > 0)
        EVP_DigestUpdate(h->ctx, buf, (size_t)got);
    pthread_mutex_lock(&d->mu);
    if (r->status != OUT_ACTIVE) /* failed meanwhile (a transfer gave up): its word stands */
        return false;
    if (got <= 0) {
        snprintf(r->err, sizeof r->err, "cannot read back %s.incomplete", r->o->path);
        r->status = OUT_FAILED;
        return false;
    }
    h->done += got;
    return true;
}

/* A piece whose hash differed: its bytes count as not landed, and it is
 * fetched again (a bad copy, or bytes changed on the way). */
static void start_over(struct out_rt *r, int i)
{
    struct piece_rt *p = &r->pc[i];
    const struct dl_piece *dp = &r->o->p[i];
    ranges_sub(&r->st->landed, dp->off, dp->off + dp->f->size);
    ranges_sub(&r->st->durable, dp->off, dp->off + dp->f->size);
    dlhash_init(&p->h, dp->off, dp->f->size, !dp->f->lfs);
    if (r->has_whole) /* the whole was hashed over the bad bytes too */
        dlhash_init(&r->whole, 0, r->o->size, false);
    p->refetches++;
}

/* A complete file (an earlier run's, or another tool's) that does not match:
 * back to NAME.incomplete, fetched again where it is wrong. */
static int repair(struct dl_run *d, struct out_rt *r)
{
    char from[4096], to[4200];
    snprintf(from, sizeof from, "%s/%s", d->o->dir, r->o->path);
    snprintf(to, sizeof to, "%s.incomplete", from);
    if (rename(from, to) < 0) {
        snprintf(r->err, sizeof r->err, "%s differs from the hub's and cannot be renamed to fetch "
                                        "it again",
                 r->o->path);
        r->status = OUT_FAILED;
        return -1;
    }
    r->final_name = false;
    r->st->verified = false;
    return 0;
}

/* Piece i's hash differed: fetched again, up to MAX_REFETCHES times; false
 * when the output failed instead. */
static bool refetch(struct dl_run *d, struct out_rt *r, int i)
{
    const struct hub_file *f = r->o->p[i].f;
    if (r->pc[i].refetches >= MAX_REFETCHES) {
        snprintf(r->err, sizeof r->err,
                 "%s: %s differs from the hub's %s %s three times: the hub's copy or the "
                 "way here corrupts it",
                 r->o->path, f->path, f->lfs ? "sha256" : "git sha1", f->lfs ? f->sha256 : f->sha1);
        r->status = OUT_FAILED;
        return false;
    }
    if (r->final_name && repair(d, r) < 0)
        return false;
    start_over(r, i);
    return true;
}

/* Piece i of a whole that did not match, read back and hashed alone: 1
 * when it matches the hub's, 0 when it does not, -1 when nothing can be
 * said (the run stops, the output failed, no memory). Lock held; dropped
 * around the reads. */
static int check_piece(struct dl_run *d, struct out_rt *r, int i, char *buf)
{
    const struct dl_piece *dp = &r->o->p[i];
    struct hasher h = {0};
    int rc = -1;
    if (dlhash_init(&h, dp->off, dp->f->size, !dp->f->lfs) == 0) {
        /* a stop (Ctrl-C) is looked at between steps: a shard is GBs */
        while (!d->stop && r->status == OUT_ACTIVE && h.done < h.len && step(d, r, &h, buf))
            ;
        if (!d->stop && r->status == OUT_ACTIVE && h.done == h.len)
            rc = finish(&h, dp->f->lfs ? dp->f->sha256 : dp->f->sha1) ? 1 : 0;
    }
    dlhash_free(&h);
    return rc;
}

/* A split shard: the whole against the manifest, its bytes hashed once
 * (#32: hashing each part as well read and hashed every byte twice). A
 * whole that differs is where the parts are checked, each against the
 * hub's sha256, and only the bad ones fetched again. */
static bool advance_whole(struct dl_run *d, struct out_rt *r, char *buf)
{
    bool worked = step(d, r, &r->whole, buf);
    if (r->status != OUT_ACTIVE || r->whole.finished || r->whole.done < r->whole.len)
        return worked;
    if (finish(&r->whole, r->o->whole_sha256)) {
        for (int i = 0; i < r->o->np; i++)
            r->pc[i].h.finished = r->pc[i].h.ok = true;
        return true;
    }
    int bad = 0;
    for (int i = 0; i < r->o->np && r->status == OUT_ACTIVE; i++) {
        int ok = check_piece(d, r, i, buf);
        if (ok < 0) /* a next run hashes the shard again */
            return true;
        if (!ok) {
            bad++;
            if (!refetch(d, r, i))
                return true;
        }
    }
    if (r->status == OUT_ACTIVE && bad == 0) {
        snprintf(r->err, sizeof r->err,
                 "%s: each part matches its own sha256, but the whole does not match "
                 "sha256-manifest.txt (%s): the repository disagrees with itself",
                 r->o->path, r->o->whole_sha256);
        r->status = OUT_FAILED;
    }
    return true;
}

static bool advance(struct dl_run *d, struct out_rt *r, char *buf)
{
    bool worked = false;
    if (r->has_whole) {
        worked = advance_whole(d, r, buf);
    } else {
        for (int i = 0; i < r->o->np && r->status == OUT_ACTIVE; i++) {
            struct piece_rt *p = &r->pc[i];
            const struct hub_file *f = r->o->p[i].f;
            worked |= step(d, r, &p->h, buf);
            if (p->h.finished || p->h.done < p->h.len ||
                finish(&p->h, f->lfs ? f->sha256 : f->sha1))
                continue;
            if (!refetch(d, r, i))
                return true;
            worked = true;
        }
    }
    if (r->status != OUT_ACTIVE)
        return worked;
    bool all = !r->has_whole || r->whole.ok;
    for (int i = 0; i < r->o->np; i++)
        all &= r->pc[i].h.ok;
    if (all && r->status == OUT_ACTIVE) {
        r->status = OUT_READY;
        pthread_cond_signal(&d->sync_cv); /* the syncer puts it in place */
    }
    return worked || all;
}

void *dlhash_main(void *arg)
{
    struct dl_run *d = arg;
    char *buf = malloc(HASH_STEP);
    pthread_mutex_lock(&d->mu);
    while (!d->stop && buf) {
        bool worked = false;
        for (int i = 0; i < d->nout && !d->stop; i++)
            if (d->out[i].status == OUT_ACTIVE)
                worked |= advance(d, &d->out[i], buf);
        if (worked) {
            pthread_cond_broadcast(&d->cv);
            continue;
        }
        struct timespec ts;
        mono_deadline(&ts, 200);
        mono_cond_wait(&d->cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    free(buf);
    return NULL;
}
