/* xfer_recv: see xfer_recv.h. One thread per stream (blocking reads and
 * writes, direct to the disk where it lets them: xfer_disk.c; a piece that
 * continues its file's hashed prefix is hashed there, from the buffer:
 * hash_hot), one hashing thread (the rest, read back), one syncing thread (landed bytes made durable every
 * SYNC_MS, then the durable state), and the caller's thread accepting
 * streams, watching the ssh channel and saving the live state each second.
 * One lock guards the files; no system call but the rare open (and its
 * directory's fsync) is made under it. */
#include "xfer_recv_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "verify.h"
#include "xfer_net.h"
#include "xfer_state.h"
#include "mono.h"


/* ---- the report ------------------------------------------------------------------ */

void xfer_recv_say(struct recv *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xfer_recv_say(struct recv *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&r->out_mu);
    int bad = vfprintf(r->o->out, fmt, ap) < 0;
    bad |= fputc('\n', r->o->out) == EOF || fflush(r->o->out) != 0;
    pthread_mutex_unlock(&r->out_mu);
    va_end(ap);
    if (bad) /* the channel closed: the head went away */
        atomic_store(&r->stop, true);
}

void xfer_recv_fail_file(struct recv *r, struct rfile *f, int e)
{
    if (f->status == RF_FAILED)
        return;
    f->status = RF_FAILED;
    xfer_recv_say(r, "%s: %s (in %s on this node)", f->f->path, strerror(e), r->o->dir);
    xfer_recv_say(r, "fail %td %d", f - r->f, e);
    pthread_cond_broadcast(&r->cv);
}

/* ---- a stream --------------------------------------------------------------------- */

/* f's digests become the calling thread's (lock held) until digests_release:
 * no other thread adds to them, and writers keeps the file's fd open and
 * start_over (a new generation, new digests) waiting meanwhile. */
static void digests_claim(struct rfile *f)
{
    f->hashing = true;
    f->writers++;
}

static void digests_release(struct rfile *f)
{
    f->writers--;
    f->hashing = false;
}

/* The next n bytes of f's hashed prefix into its digests (claimed, lock
 * dropped). */
static void digests_add(struct rfile *f, const char *p, size_t n)
{
    EVP_DigestUpdate(f->ctx, p, n);
    if (f->gctx)
        EVP_DigestUpdate(f->gctx, p, n);
}

/* The bytes just written at s, when they continue f's hashed prefix and no
 * one else is hashing it: hashed from the stream's buffer while it is in the
 * cache, not read back from the page cache later by the hasher (#32: the
 * worker's CPU per GB). Lock held; dropped around the digests. */
static void hash_hot(struct recv *r, struct rfile *f, uint32_t gen, const char *p, int64_t s,
                     int64_t n)
{
    if (f->hashing || f->hashed != s)
        return;
    digests_claim(f);
    pthread_mutex_unlock(&r->mu);
    digests_add(f, p, (size_t)n);
    pthread_mutex_lock(&r->mu);
    digests_release(f);
    if (gen == f->gen && f->status == RF_WANT)
        f->hashed += n;
}

/* n bytes for f at off, generation gen: only what has neither landed nor is
 * being written by another stream (a range sent again after a cut stream),
 * so bytes once hashed stay the bytes that were hashed. */
static void land(struct recv *r, struct rfile *f, uint32_t gen, const char *p, int64_t off,
                 int64_t n)
{
    int64_t end = off + n;
    pthread_mutex_lock(&r->mu);
    if (f->status == RF_WANT && gen == f->gen && f->fd < 0) {
        int e = xfer_recv_open_incomplete(r, f);
        if (e)
            xfer_recv_fail_file(r, f, e);
    }
    for (int64_t at = off; at < end && f->status == RF_WANT && gen == f->gen;) {
        int64_t gl = 0, g = ranges_gap(&f->st->landed, at, end, &gl);
        if (!gl)
            break;
        int64_t sl = 0, s = ranges_gap(&f->inflight, g, g + gl, &sl);
        if (!sl) {
            at = g + gl;
            continue;
        }
        ranges_add(&f->inflight, s, s + sl);
        f->writers++;
        int fd = f->fd, dio_fd = f->dio_off ? -1 : f->dio_fd;
        pthread_mutex_unlock(&r->mu);
        bool refused = false;
        int e = xfer_recv_write(fd, dio_fd, p + (s - off), s, sl, &refused);
        pthread_mutex_lock(&r->mu);
        f->dio_off |= refused;
        f->writers--;
        ranges_sub(&f->inflight, s, s + sl);
        if (e) {
            xfer_recv_fail_file(r, f, e);
        } else if (gen == f->gen && f->status == RF_WANT) {
            ranges_add(&f->st->landed, s, s + sl);
            r->landed_run += sl;
            r->dirty = f->unsynced = true;
            hash_hot(r, f, gen, p + (s - off), s, sl);
        }
        pthread_cond_broadcast(&r->cv);
        at = s + sl;
    }
    pthread_mutex_unlock(&r->mu);
}

static bool hello_ok(const char *hello, const char *token)
{
    if (memcmp(hello, "DSV41XFER1 ", 11) != 0 || hello[XFER_HELLO_LEN - 1] != '\n')
        return false;
    return CRYPTO_memcmp(hello + 11, token, XFER_TOKEN_HEX) == 0; /* in constant time */
}

static void refuse(struct recv *r, const char *addr)
{
    if (atomic_fetch_add(&r->refused, 1) < MAX_REFUSED_SAID)
        xfer_recv_say(r, "refused %s", addr);
}

/* The hello within HELLO_MS in all: a peer that trickles a byte at a time
 * holds its slot no longer than one that sends nothing. */
static int read_hello(int fd, char *hello)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t got = 0; got < XFER_HELLO_LEN;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = HELLO_MS -
                    (long)((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        ssize_t k = read(fd, hello + got, XFER_HELLO_LEN - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct recv *r = c->r;
    char hello[XFER_HELLO_LEN];
    if (read_hello(c->fd, hello) < 0 || !hello_ok(hello, r->o->token)) {
        refuse(r, c->addr);
        c->done = true;
        return NULL;
    }
    c->authed = true;
    /* a stream the head stopped sending on, or a link gone for good, ends in
     * time (a cut of 20 s does not): its slot is not held forever */
    int on = 1, idle = 30, intvl = 10, cnt = 6;
    unsigned int uto = 120000;
    setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(c->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof uto);
    /* whole blocks in memory too: a direct write's buffer lines up (xfer_disk.c) */
    char *buf = aligned_alloc(xfer_dio_align(), PIECE);
    if (!buf || xfer_net_send(c->fd, "OK\n", 3, 0) < 0) {
        free(buf);
        c->done = true;
        return NULL;
    }
    unsigned char raw[XFER_HDR_LEN];
    struct xfer_hdr h;
    while (!atomic_load(&r->stop) && xfer_net_read(c->fd, raw, sizeof raw) == 0) {
        if (!xfer_hdr_unpack(raw, &h) || h.type == XF_BYE)
            break;
        if (h.id >= (uint32_t)r->n) {
            xfer_recv_say(r, "a stream from %s named no file of the plan: closed", c->addr);
            break;
        }
        struct rfile *f = &r->f[h.id];
        if (h.type == XF_SUM) {
            unsigned char sum[32];
            if (h.len != 32 || xfer_net_read(c->fd, sum, 32) < 0)
                break;
            pthread_mutex_lock(&r->mu);
            if (h.gen == f->gen && f->status == RF_WANT && !f->f->has_sha) {
                memcpy(f->sum, sum, 32);
                f->sum_known = true;
                pthread_cond_broadcast(&r->cv);
            }
            pthread_mutex_unlock(&r->mu);
        } else {
            if (h.len > XFER_MAX_FRAME || h.off > f->f->size || h.len > f->f->size - h.off) {
                xfer_recv_say(r, "a stream from %s sent a frame outside %s: closed", c->addr, f->f->path);
                break;
            }
            bool cut = false;
            for (int64_t at = 0; at < h.len && !cut;) {
                int64_t n = h.len - at < PIECE ? h.len - at : PIECE;
                if (xfer_net_read(c->fd, buf, (size_t)n) < 0)
                    cut = true;
                else
                    land(r, f, h.gen, buf, h.off + at, n);
                at += n;
            }
            if (cut)
                break;
        }
        if (xfer_net_send(c->fd, "A", 1, 0) < 0) /* done with this frame: the head may forget it */
            break;
    }
    free(buf);
    c->done = true;
    return NULL;
}

/* ---- the hasher ------------------------------------------------------------------- */

/* f matched: in place (synced, the head's time, renamed). Lock held; dropped
 * around the system calls. */
static void put_in_place(struct recv *r, struct rfile *f)
{
    f->status = RF_CLOSING; /* no writer starts now */
    while (f->writers)
        pthread_cond_wait(&r->cv, &r->mu);
    int e = f->fd < 0 ? xfer_recv_open_incomplete(r, f) : 0; /* an empty file got no bytes */
    int fd = f->fd;
    pthread_mutex_unlock(&r->mu);
    const char *base;
    int dfd = -1;
    if (!e) {
        struct timespec ts[2] = {
            {.tv_sec = f->f->mtime_ns / 1000000000, .tv_nsec = f->f->mtime_ns % 1000000000}};
        ts[1] = ts[0];
        /* the head's time, as rsync -a keeps it (-1: not known, when the file
         * was sent as the download verified it) */
        if (fdatasync(fd) < 0 || (f->f->mtime_ns >= 0 && futimens(fd, ts) < 0))
            e = errno;
    }
    if (!e && (dfd = xfer_recv_open_parent(r->o->dir, f->f->path, false, &base)) < 0)
        e = errno;
    if (!e) {
        char from[300];
        snprintf(from, sizeof from, "%s.incomplete", base);
        /* the name on the disk before the durable state says verified */
        if (renameat(dfd, from, dfd, base) < 0 || fsync(dfd) < 0)
            e = errno;
    }
    if (dfd >= 0)
        close(dfd);
    pthread_mutex_lock(&r->mu);
    if (e) {
        f->status = RF_WANT;
        xfer_recv_fail_file(r, f, e);
        return;
    }
    xfer_recv_close_file(f);
    f->status = RF_OK;
    f->st->verified = true;
    f->st->has_sha = true;
    memcpy(f->st->sha, f->f->has_sha ? f->f->sha : f->sum, 32);
    xfer_state_forget(f->st); /* synced, renamed and its directory synced above */
    r->dirty = r->durable_dirty = true;
    xfer_recv_say(r, "ok %td", f - r->f);
    pthread_cond_broadcast(&r->cv);
}

/* f's digests from its first byte: sha256, and the git blob sha1 (of
 * "blob SIZE\0" and the bytes) when the plan has the hub's. 0 or -1. */
int xfer_recv_digests_start(struct rfile *f)
{
    if ((!f->ctx && !(f->ctx = EVP_MD_CTX_new())) || !EVP_DigestInit_ex(f->ctx, EVP_sha256(), NULL))
        return -1;
    if (!f->f->has_git)
        return 0;
    char hdr[40];
    int n = snprintf(hdr, sizeof hdr, "blob %lld", (long long)f->f->size);
    if ((!f->gctx && !(f->gctx = EVP_MD_CTX_new())) || !EVP_DigestInit_ex(f->gctx, EVP_sha1(), NULL) ||
        !EVP_DigestUpdate(f->gctx, hdr, (size_t)n + 1)) /* the NUL too */
        return -1;
    return 0;
}

/* What f's bytes must hash to said for an operator. */
static const char *authority(const struct rfile *f)
{
    return f->f->has_sha ? "its manifest or the hub"
           : f->f->has_git ? "the hub's git sha1, or what the head read"
                           : "what the head read";
}

/* f's hash differed: its bytes count as not landed, and the head is asked
 * for it again under a new generation (frames of the old one are dropped).
 * Lock held. */
static void start_over(struct recv *r, struct rfile *f)
{
    if (f->gen + 1 >= XFER_MAX_GENERATIONS) { /* the same wrong bytes again: not the link's doing */
        xfer_recv_say(r, "%s: its hash differed %d times: the head's copy does not match %s", f->f->path,
            XFER_MAX_GENERATIONS, authority(f));
        xfer_recv_fail_file(r, f, EBADMSG);
        return;
    }
    f->gen++;
    while (f->writers) /* a write of the old generation finishes first */
        pthread_cond_wait(&r->cv, &r->mu);
    xfer_state_forget(f->st);
    f->hashed = 0;
    f->sum_known = false;
    if (xfer_recv_digests_start(f) < 0) {
        xfer_recv_fail_file(r, f, ENOMEM);
        return;
    }
    r->dirty = r->durable_dirty = true;
    xfer_recv_say(r, "%s: its hash differed on this node: asked for again", f->f->path);
    xfer_recv_say(r, "bad %td %" PRIu32, f - r->f, f->gen);
}

/* One step over f; true when it did something. Lock held. */
static bool hash_step(struct recv *r, struct rfile *f, char *buf)
{
    if (f->status != RF_WANT || f->hashing) /* a stream hashes it now: hash_hot */
        return false;
    if (f->hashed < f->f->size) {
        int64_t reach = ranges_reach(&f->st->landed, f->hashed);
        if (reach > f->f->size)
            reach = f->f->size;
        if (reach <= f->hashed || f->fd < 0)
            return false;
        size_t n = (size_t)(reach - f->hashed < HASH_STEP ? reach - f->hashed : HASH_STEP);
        uint32_t gen = f->gen;
        int fd = f->fd, dio_fd = f->dio_off ? -1 : f->dio_fd;
        int64_t from = f->hashed, blk = (int64_t)xfer_dio_align();
        if (dio_fd >= 0 && from % blk && (int64_t)n > blk - from % blk)
            n = (size_t)(blk - from % blk); /* back onto the blocks: the next read is direct */
        digests_claim(f); /* the fd stays open too */
        pthread_mutex_unlock(&r->mu);
        /* read back, direct where the disk lets it (xfer_disk.c; a map would
         * save the copy, but a file cut short or a failing disk would kill
         * the helper with SIGBUS where a read fails one file); the digest
         * is only this thread's */
        bool refused = false;
        ssize_t got = xfer_recv_read(fd, dio_fd, buf, n, from, &refused);
        if (got > 0)
            digests_add(f, buf, (size_t)got);
        pthread_mutex_lock(&r->mu);
        f->dio_off |= refused;
        digests_release(f);
        pthread_cond_broadcast(&r->cv);
        if (gen != f->gen || f->status != RF_WANT) /* started over meanwhile */
            return true;
        if (got <= 0) {
            xfer_recv_fail_file(r, f, got < 0 ? errno : EIO);
            return true;
        }
        f->hashed += got;
        return true;
    }
    if (!f->f->has_sha && !f->sum_known)
        return false; /* the head's sum is on its way */
    unsigned char d[EVP_MAX_MD_SIZE], g[EVP_MAX_MD_SIZE];
    unsigned int dl = 0, gl = 0;
    EVP_DigestFinal_ex(f->ctx, d, &dl);
    /* a small file the hub listed: its git sha1 too, so what lands is what
     * the hub holds, not only what the head read (the sum the head sent
     * came over the same unauthenticated stream as the bytes) */
    bool git_ok = !f->gctx || (EVP_DigestFinal_ex(f->gctx, g, &gl) && gl == 20 &&
                               memcmp(g, f->f->git, 20) == 0);
    if (dl == 32 && git_ok && memcmp(d, f->f->has_sha ? f->f->sha : f->sum, 32) == 0)
        put_in_place(r, f);
    else
        start_over(r, f);
    return true;
}

static void *hasher_main(void *arg)
{
    struct recv *r = arg;
    char *buf = aligned_alloc(xfer_dio_align(), HASH_STEP); /* direct reads: whole blocks */
    pthread_mutex_lock(&r->mu);
    while (buf && !atomic_load(&r->stop)) {
        bool worked = false;
        for (int i = 0; i < r->n && !atomic_load(&r->stop); i++)
            worked |= hash_step(r, &r->f[i], buf);
        if (worked)
            continue;
        struct timespec ts;
        mono_deadline(&ts, 200);
        mono_cond_wait(&r->cv, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
    free(buf);
    return NULL;
}

static int listen_on(struct recv *r, const char *addr, int *port)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (xfer_net_addr(addr, 0, &ss, &sl) < 0) {
        xfer_recv_say(r, "cannot listen on %s: not an IP address", addr);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&ss, sl) < 0) {
        int e = errno;
        close(fd);
        const char *fb = r->o->fallback;
        if (e == EADDRNOTAVAIL && fb && strcmp(fb, addr) != 0) {
            /* a fabric address this node does not have (any more): the one ssh reached */
            xfer_recv_say(r, "cannot listen on %s (%s): on %s instead, the address ssh reached", addr,
                strerror(e), fb);
            r->listen = fb;
            return listen_on(r, fb, port);
        }
        xfer_recv_say(r, "cannot listen on %s: %s", addr, strerror(e));
        return -1;
    }
    if (fd < 0 || listen(fd, 64) < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        xfer_recv_say(r, "cannot listen on %s: %s", addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = xfer_net_port(&ss);
    return fd;
}

static void accept_one(struct recv *r, int lfd)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    char addr[64] = "?";
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof addr);
    else if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof addr);
    /* ended streams make room */
    for (int i = 0; i < r->nconn;) {
        if (r->conns[i]->done) {
            pthread_join(r->conns[i]->th, NULL);
            close(r->conns[i]->fd);
            free(r->conns[i]);
            r->conns[i] = r->conns[--r->nconn];
        } else {
            i++;
        }
    }
    /* slots for streams that presented the token are never taken by ones
     * that have not: those are few, and few from any one address */
    int hellos = 0, from = 0, streams = 0;
    for (int i = 0; i < r->nconn; i++) {
        bool waiting = !r->conns[i]->authed && !r->conns[i]->done;
        hellos += waiting;
        from += waiting && strcmp(r->conns[i]->addr, addr) == 0;
        streams += r->conns[i]->authed && !r->conns[i]->done;
    }
    struct conn *c = r->nconn < MAX_CONNS && hellos < MAX_HELLOS && from < MAX_HELLOS_FROM &&
                             streams < XFER_MAX_STREAMS
                         ? calloc(1, sizeof *c)
                         : NULL;
    if (!c) {
        refuse(r, addr);
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->r = r;
    c->fd = fd;
    snprintf(c->addr, sizeof c->addr, "%s", addr);
    if (pthread_create(&c->th, NULL, conn_main, c) != 0) {
        close(fd);
        free(c);
        return;
    }
    r->conns[r->nconn++] = c;
}

/* OK and failed files; true when every file is settled. */
static bool settled(struct recv *r, int *ok, int *bad)
{
    *ok = *bad = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++) {
        *ok += r->f[i].status == RF_OK;
        *bad += r->f[i].status == RF_FAILED;
    }
    pthread_mutex_unlock(&r->mu);
    return *ok + *bad == r->n;
}

int xfer_recv_run(const struct xfer_recv_opts *o)
{
    struct recv r = {.o = o, .listen = o->listen};
    pthread_mutex_init(&r.mu, NULL);
    pthread_mutex_init(&r.out_mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    pthread_cond_init(&r.sync_cv, NULL);
    atomic_init(&r.stop, false);
    atomic_init(&r.save_said, false);
    int rc = 2, port = 0, lfd = -1, ok = 0, bad = 0;
    pthread_t hasher, syncer;
    bool hashing = false, syncing = false;
    /* one copy into a directory at a time: two would write the same files */
    char lpath[4200];
    snprintf(lpath, sizeof lpath, "%s/.dsv41-copy.lock", o->dir);
    int lock = open(lpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
        xfer_recv_say(&r, "%s: %s", o->dir,
            lock >= 0 && errno == EWOULDBLOCK
                ? "another copy is writing it now: wait for it to end, or stop it"
                : strerror(errno));
        if (lock >= 0)
            close(lock);
        goto out_unlocked;
    }
    if (xfer_place_setup(&r) < 0) {
        xfer_recv_say(&r, "out of memory");
        goto out;
    }
    for (int i = 0; i < r.n; i++)
        if (r.f[i].status == RF_OK)
            xfer_recv_say(&r, "ok %d", i);
    for (int i = 0; i < r.n; i++) { /* what the head is to send */
        struct rfile *f = &r.f[i];
        for (int64_t at = 0, gl = 0; f->status == RF_WANT && at < f->f->size; at += gl) {
            int64_t g = ranges_gap(&f->st->landed, at, f->f->size, &gl);
            if (!gl)
                break;
            xfer_recv_say(&r, "need %d %" PRId64 " %" PRId64, i, g, g + gl);
            gl += g - at;
        }
    }
    if (o->dry_run) {
        rc = xfer_place_check_space(&r) < 0 ? 1 : 0;
        xfer_recv_say(&r, "end 0 0");
        goto out;
    }
    if (xfer_place_check_space(&r) < 0 || (lfd = listen_on(&r, o->listen, &port)) < 0)
        goto out;
    xfer_recv_say(&r, "cores %ld", sysconf(_SC_NPROCESSORS_ONLN));
    xfer_recv_say(&r, "listen %s %d", r.listen, port);
    hashing = pthread_create(&hasher, NULL, hasher_main, &r) == 0;
    syncing = hashing && pthread_create(&syncer, NULL, xfer_sync_main, &r) == 0;
    rc = 1;
    double last = 0;
    while (hashing && !atomic_load(&r.stop) && !(o->cancel && atomic_load(o->cancel))) {
        if (settled(&r, &ok, &bad))
            break;
        struct pollfd p[2] = {{.fd = lfd, .events = POLLIN}, {.fd = o->in_fd, .events = POLLIN}};
        int np = poll(p, o->in_fd >= 0 ? 2 : 1, 250);
        if (np > 0 && (p[0].revents & POLLIN))
            accept_one(&r, lfd);
        if (np > 0 && o->in_fd >= 0 && p[1].revents) {
            char c[64];
            if (read(o->in_fd, c, sizeof c) <= 0) /* the ssh channel closed */
                break;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
        if (t - last >= 1) {
            last = t;
            pthread_mutex_lock(&r.mu);
            int64_t landed = r.landed_run;
            pthread_mutex_unlock(&r.mu);
            xfer_recv_say(&r, "progress %" PRId64, landed);
            xfer_sync_save_live(&r);
        }
    }
    atomic_store(&r.stop, true);
    pthread_mutex_lock(&r.mu);
    pthread_cond_broadcast(&r.cv);
    pthread_cond_broadcast(&r.sync_cv);
    pthread_mutex_unlock(&r.mu);
    for (int i = 0; i < r.nconn; i++) /* a blocked read ends */
        shutdown(r.conns[i]->fd, SHUT_RDWR);
    for (int i = 0; i < r.nconn; i++) {
        pthread_join(r.conns[i]->th, NULL);
        close(r.conns[i]->fd);
        free(r.conns[i]);
    }
    if (hashing)
        pthread_join(hasher, NULL);
    if (syncing)
        pthread_join(syncer, NULL);
    /* the end: everything landed made durable; the live file then says
     * nothing the durable one does not */
    xfer_sync_save_live(&r);
    if (xfer_sync_round(&r) == 0) {
        char live[4200];
        snprintf(live, sizeof live, "%s/%s", o->dir, XFER_STATE_LIVE);
        unlink(live);
    }
    if (settled(&r, &ok, &bad)) {
        pthread_mutex_lock(&r.mu);
        int64_t landed = r.landed_run;
        pthread_mutex_unlock(&r.mu);
        xfer_recv_say(&r, "progress %" PRId64, landed);
        if (atomic_load(&r.refused) > MAX_REFUSED_SAID)
            xfer_recv_say(&r, "refused %d connection(s) in all that had no token", atomic_load(&r.refused));
        xfer_recv_say(&r, "end %d %d", ok, bad);
        rc = bad ? 1 : 0;
    }
out:
    if (lfd >= 0)
        close(lfd);
    for (int i = 0; r.f && i < r.n; i++) {
        xfer_recv_close_file(&r.f[i]);
        EVP_MD_CTX_free(r.f[i].ctx);
        EVP_MD_CTX_free(r.f[i].gctx);
        ranges_free(&r.f[i].inflight);
    }
    free(r.f);
    xfer_state_free(&r.state);
    close(lock);
out_unlocked:
    pthread_cond_destroy(&r.cv);
    pthread_cond_destroy(&r.sync_cv);
    pthread_mutex_destroy(&r.mu);
    pthread_mutex_destroy(&r.out_mu);
    return rc;
}
