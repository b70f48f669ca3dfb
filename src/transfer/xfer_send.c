/* xfer_send: see xfer_send.h. One thread per stream; one lock guards the
 * queue and the files; nothing is sent while it is held. */
#include "xfer_send.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mono.h"
#include "ranges.h"
#include "xfer_net.h"

#define MIB ((int64_t)1 << 20)

#define READ_STEP (1 << 20) /* a file hashed as it is read: read and sent at a time */
#define MAX_OUTSTANDING 2   /* items sent and not yet acknowledged, per stream */
#define CONNECT_TRIES 10
#define IO_TIMEOUT_S 60 /* a stream that moves nothing this long is cut */

enum sf_status { SF_WANT, SF_OK, SF_FAILED };

struct sfile {
    struct ranges need; /* what the worker wants of it */
    uint32_t gen;
    enum sf_status st;
    int senders; /* streams sending a range of it now */
};

struct item {
    int id;
    uint32_t gen;
    int64_t a, b;
    bool whole; /* read in order, hashed, the sum last */
    int frames; /* sent, not yet acknowledged */
};

struct stream {
    struct xfer_send *s;
    int idx;
    pthread_t th;
    struct item out[MAX_OUTSTANDING + 1];
    int nout;
};

struct xfer_send {
    const char *src;
    const struct xfer_plan *plan;
    const _Atomic int *ready;
    struct sfile *f;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct item *q;
    int nq, qcap;
    int64_t chunk;
    char addr[64], token[XFER_TOKEN_HEX + 1];
    int port, nstreams, started, up, gave_up;
    struct stream st[XFER_MAX_STREAMS];
    _Atomic int64_t sent, stream_sent[XFER_MAX_STREAMS];
    atomic_bool stop;
    char err[512];
    /* a test hook (DSV41_XFER_TEST_FLIP=PATH@OFFSET): that byte goes out
     * flipped, once, as a link that corrupts would send it */
    char flip_path[512];
    int64_t flip_off;
    atomic_bool flipped;
};

struct xfer_send *xfer_send_new(const char *src, const struct xfer_plan *plan,
                                const _Atomic int *ready)
{
    struct xfer_send *s = calloc(1, sizeof *s);
    if (!s || !(s->f = calloc((size_t)(plan->n ? plan->n : 1), sizeof *s->f))) {
        free(s);
        return NULL;
    }
    s->src = src;
    s->plan = plan;
    s->ready = ready;
    for (int i = 0; i < plan->n; i++)
        s->f[i].st = SF_OK; /* until the worker says what it needs */
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    const char *flip = getenv("DSV41_XFER_TEST_FLIP");
    const char *at = flip ? strrchr(flip, '@') : NULL;
    if (at) {
        snprintf(s->flip_path, sizeof s->flip_path, "%.*s", (int)(at - flip), flip);
        s->flip_off = atoll(at + 1);
    }
    return s;
}

/* Ranges the worker may name per file; beyond it the rest of the file is
 * wanted whole (the worker writes only what it lacks): a worker's report
 * never costs the head more than this. */
#define MAX_NEED_RANGES 1024

void xfer_send_need(struct xfer_send *s, int id, int64_t a, int64_t b)
{
    if (id < 0 || id >= s->plan->n || a < 0 || b <= a || b > s->plan->f[id].size)
        return;
    pthread_mutex_lock(&s->mu);
    struct sfile *f = &s->f[id];
    f->st = SF_WANT;
    if (f->need.n < MAX_NEED_RANGES)
        ranges_add(&f->need, a, b);
    else
        ranges_add(&f->need, f->need.r[f->need.n - 1].a, s->plan->f[id].size);
    pthread_mutex_unlock(&s->mu);
}

static void push(struct xfer_send *s, struct item it)
{
    if (s->nq == s->qcap) {
        int cap = s->qcap ? 2 * s->qcap : 256;
        struct item *q = realloc(s->q, (size_t)cap * sizeof *q);
        if (!q)
            return; /* the file stays unsent and the copy does not end: said by its caller */
        s->q = q;
        s->qcap = cap;
    }
    s->q[s->nq++] = it;
}

/* Items for what file id still needs. Lock held. */
static void queue_file(struct xfer_send *s, int id)
{
    struct sfile *f = &s->f[id];
    const struct xfer_file *pf = &s->plan->f[id];
    if (!pf->has_sha || pf->size == 0) {
        push(s, (struct item){.id = id, .gen = f->gen, .a = 0, .b = pf->size, .whole = true});
        return;
    }
    for (int k = 0; k < f->need.n; k++)
        for (int64_t a = f->need.r[k].a, b; a < f->need.r[k].b; a = b) {
            /* ends on the MiB grid: the next range starts where the worker
             * can write whole blocks direct to its disk (xfer_disk.c) */
            b = a / MIB * MIB + s->chunk;
            b = b < f->need.r[k].b ? b : f->need.r[k].b;
            push(s, (struct item){.id = id, .gen = f->gen, .a = a, .b = b});
        }
}

void xfer_send_report(struct xfer_send *s, const struct xfer_report *r)
{
    if (r->id < 0 || r->id >= s->plan->n)
        return;
    pthread_mutex_lock(&s->mu);
    struct sfile *f = &s->f[r->id];
    if (r->kind == XR_OK) {
        f->st = SF_OK;
    } else if (r->kind == XR_FAIL) {
        f->st = SF_FAILED;
    } else if (r->kind == XR_BAD && f->st == SF_WANT && r->a == (int64_t)f->gen + 1 &&
               r->a < XFER_MAX_GENERATIONS) { /* the next generation, and a bounded number */
        f->gen = (uint32_t)r->a;
        ranges_clear(&f->need);
        ranges_add(&f->need, 0, s->plan->f[r->id].size);
        if (s->started)
            queue_file(s, (int)r->id);
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static bool all_settled(const struct xfer_send *s)
{
    for (int i = 0; i < s->plan->n; i++)
        if (s->f[i].st == SF_WANT)
            return false;
    return true;
}

/* ---- one stream ----------------------------------------------------------------- */

static int send_hdr(int fd, uint32_t type, const struct item *it, int64_t off, int64_t len)
{
    struct xfer_hdr h = {
        .type = type, .id = (uint32_t)it->id, .gen = it->gen, .off = off, .len = len};
    unsigned char raw[XFER_HDR_LEN];
    xfer_hdr_pack(&h, raw);
    return xfer_net_send(fd, raw, sizeof raw, MSG_MORE);
}

static void count(struct stream *st, int64_t n)
{
    atomic_fetch_add(&st->s->sent, n);
    atomic_fetch_add(&st->s->stream_sent[st->idx], n);
}

static int connect_hello(struct xfer_send *s, char *why, size_t whysz)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (xfer_net_addr(s->addr, s->port, &ss, &sl) < 0) {
        snprintf(why, whysz, "%s is not an IP address", s->addr);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, whysz, "socket: %s", strerror(errno));
        return -1;
    }
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    /* unacknowledged data this long: the link is gone (a 20 s cut survives) */
    unsigned int uto = IO_TIMEOUT_S * 1000;
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof uto);
    char hello[XFER_HELLO_LEN + 1], ok[3];
    snprintf(hello, sizeof hello, "DSV41XFER1 %s\n", s->token);
    if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
        snprintf(why, whysz, "cannot connect to %s port %d: %s", s->addr, s->port, strerror(errno));
        close(fd);
        return -1;
    }
    ssize_t got = 0;
    if (xfer_net_send(fd, hello, XFER_HELLO_LEN, 0) < 0 ||
        (got = recv(fd, ok, 3, MSG_WAITALL)) != 3 || memcmp(ok, "OK\n", 3) != 0) {
        snprintf(why, whysz, "the worker's helper did not take the stream (%s)",
                 got < 0 ? strerror(errno) : "closed");
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads acknowledgements until at most keep items are outstanding. */
static int acks(struct stream *st, int fd, int keep)
{
    while (st->nout > keep) {
        char a[256];
        int want = 0;
        for (int i = 0; i < st->nout; i++)
            want += st->out[i].frames;
        ssize_t n = recv(fd, a, (size_t)(want < (int)sizeof a ? want : (int)sizeof a), 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        for (ssize_t k = 0; k < n && st->nout; k++)
            if (--st->out[0].frames == 0)
                memmove(st->out, st->out + 1, (size_t)--st->nout * sizeof *st->out);
    }
    return 0;
}

/* Bytes [a, b) of the file read and sent as one DATA frame (the hook's
 * byte flipped). */
static int send_read(struct stream *st, int sock, int fd, struct item *it, int64_t a, int64_t b,
                     char *buf)
{
    struct xfer_send *s = st->s;
    if (send_hdr(sock, XF_DATA, it, a, b - a) < 0)
        return -1;
    for (int64_t at = a; at < b;) {
        size_t n = (size_t)(b - at < READ_STEP ? b - at : READ_STEP);
        ssize_t got = pread(fd, buf, n, at);
        if (got <= 0)
            return -2;
        if (s->flip_path[0] && s->flip_off >= at && s->flip_off < at + got &&
            strcmp(s->plan->f[it->id].path, s->flip_path) == 0 &&
            !atomic_exchange(&s->flipped, true))
            buf[s->flip_off - at] ^= 0x01;
        if (xfer_net_send(sock, buf, (size_t)got, 0) < 0)
            return -1;
        count(st, got);
        at += got;
    }
    return 0;
}

static int send_chunk(struct stream *st, int sock, int fd, struct item *it, char *buf)
{
    struct xfer_send *s = st->s;
    it->frames = 1;
    if (s->flip_path[0] && !atomic_load(&s->flipped))
        return send_read(st, sock, fd, it, it->a, it->b, buf);
    if (send_hdr(sock, XF_DATA, it, it->a, it->b - it->a) < 0)
        return -1;
    off_t off = it->a;
    while (off < it->b) { /* from the page cache to the socket, never through us */
        ssize_t n = sendfile(sock, fd, &off, (size_t)(it->b - off));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EINVAL || errno == ENOSYS) && off == it->a) /* no sendfile here */
            return send_read(st, sock, fd, it, off, it->b, buf) < 0 ? -1 : 0;
        if (n < 0)
            return -1;
        if (n == 0)
            return -2; /* the file shrank under us */
        count(st, n);
    }
    return 0;
}

/* A file read in order and hashed; only what the worker needs is sent, then
 * the sum. */
static int send_whole(struct stream *st, int sock, int fd, struct item *it, char *buf)
{
    struct xfer_send *s = st->s;
    struct ranges need = {0};
    pthread_mutex_lock(&s->mu);
    int rc = ranges_copy(&need, &s->f[it->id].need);
    pthread_mutex_unlock(&s->mu);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (rc < 0 || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        ranges_free(&need);
        EVP_MD_CTX_free(ctx);
        return -1;
    }
    it->frames = 0;
    int64_t size = s->plan->f[it->id].size;
    for (int64_t at = 0; at < size && rc == 0;) {
        size_t n = (size_t)(size - at < READ_STEP ? size - at : READ_STEP);
        ssize_t got = pread(fd, buf, n, at);
        if (got <= 0) {
            rc = -2;
            break;
        }
        EVP_DigestUpdate(ctx, buf, (size_t)got);
        int64_t end = at + got;
        for (int64_t p = at; rc == 0 && p < end;) {
            int64_t gl = 0, g = ranges_gap(&need, p, end, &gl);
            int64_t wend = gl ? g : end; /* [p, wend) is wanted: before the next gap */
            if (wend > p) {
                if (s->flip_path[0] && s->flip_off >= p && s->flip_off < wend &&
                    strcmp(s->plan->f[it->id].path, s->flip_path) == 0 &&
                    !atomic_exchange(&s->flipped, true))
                    buf[s->flip_off - at] ^= 0x01; /* hashed already: the sum stays right */
                rc = send_hdr(sock, XF_DATA, it, p, wend - p) < 0 ||
                             xfer_net_send(sock, buf + (p - at), (size_t)(wend - p), 0) < 0
                         ? -1
                         : 0;
                it->frames++;
                count(st, wend - p);
            }
            p = gl ? g + gl : end;
        }
        at += got;
    }
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    EVP_DigestFinal_ex(ctx, d, &dl);
    EVP_MD_CTX_free(ctx);
    ranges_free(&need);
    if (rc == 0) {
        rc = send_hdr(sock, XF_SUM, it, 0, 32) < 0 || xfer_net_send(sock, d, 32, 0) < 0 ? -1 : 0;
        it->frames++;
    }
    return rc;
}

/* Items of a stream that will not be acknowledged now go back to the queue
 * (unless their file settled or started over meanwhile). */
static void requeue(struct stream *st, struct item *cur)
{
    struct xfer_send *s = st->s;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < st->nout; i++)
        if (s->f[st->out[i].id].st == SF_WANT && st->out[i].gen == s->f[st->out[i].id].gen)
            push(s, st->out[i]);
    if (cur && s->f[cur->id].st == SF_WANT && cur->gen == s->f[cur->id].gen)
        push(s, *cur);
    st->nout = 0;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The queued item to send next, -1 none: the first whose file may be read
 * and that no other stream is sending, else the first that may be read -
 * streams writing one file on the worker contend for its inode's lock there.
 * Files that will never be ready are given up here. Lock held. */
static int pick(struct xfer_send *s)
{
    int any = -1;
    for (int k = 0; k < s->nq; k++) {
        int id = s->q[k].id;
        int r = s->ready ? atomic_load(&s->ready[id]) : XFER_READY;
        if (r == XFER_NEVER && s->f[id].st == SF_WANT) {
            s->f[id].st = SF_FAILED;
            snprintf(s->err, sizeof s->err, "%s was not downloaded, so not copied",
                     s->plan->f[id].path);
            pthread_cond_broadcast(&s->cv);
        }
        if (s->f[id].st != SF_WANT)
            return k; /* a settled file's item: dropped by the caller */
        if (r != XFER_READY)
            continue;
        if (!s->f[id].senders)
            return k;
        if (any < 0)
            any = k;
    }
    return any;
}

/* The file of it has changed on the head while it was read: given up. */
static void file_changed(struct stream *st, const struct item *it)
{
    struct xfer_send *s = st->s;
    pthread_mutex_lock(&s->mu);
    s->f[it->id].st = SF_FAILED;
    snprintf(s->err, sizeof s->err,
             "%s changed on the head while it was copied: run the copy "
             "again",
             s->plan->f[it->id].path);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static int send_item(struct stream *st, int sock, struct item *it, char *buf);

/* Work on one connection: 0 when the copy is over (BYE sent), -1 when the
 * connection failed. */
static int serve(struct stream *st, int sock, char *buf)
{
    struct xfer_send *s = st->s;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        int k;
        while ((k = pick(s)) < 0 && !all_settled(s) && !atomic_load(&s->stop)) {
            if (st->nout) { /* nothing new: what is out may complete */
                pthread_mutex_unlock(&s->mu);
                if (acks(st, sock, 0) < 0)
                    return -1;
                pthread_mutex_lock(&s->mu);
                continue;
            }
            struct timespec ts; /* also how a file that became ready is seen */
            mono_deadline(&ts, 200);
            mono_cond_wait(&s->cv, &s->mu, &ts);
        }
        if (atomic_load(&s->stop)) {
            pthread_mutex_unlock(&s->mu);
            return -1;
        }
        if (k < 0) { /* every file settled */
            pthread_mutex_unlock(&s->mu);
            struct xfer_hdr h = {.type = XF_BYE};
            unsigned char raw[XFER_HDR_LEN];
            xfer_hdr_pack(&h, raw);
            xfer_net_send(sock, raw, sizeof raw, 0);
            return 0;
        }
        struct item it = s->q[k];
        memmove(s->q + k, s->q + k + 1, (size_t)(--s->nq - k) * sizeof *s->q);
        bool stale = s->f[it.id].st != SF_WANT || it.gen != s->f[it.id].gen;
        s->f[it.id].senders += !stale;
        pthread_mutex_unlock(&s->mu);
        if (stale)
            continue;
        int rc = send_item(st, sock, &it, buf);
        pthread_mutex_lock(&s->mu);
        s->f[it.id].senders--;
        pthread_mutex_unlock(&s->mu);
        if (rc == -2) {
            file_changed(st, &it);
            continue;
        }
        if (rc < 0) {
            requeue(st, &it);
            return -1;
        }
        st->out[st->nout++] = it;
        if (acks(st, sock, MAX_OUTSTANDING - 1) < 0) {
            requeue(st, NULL);
            return -1;
        }
    }
}

/* One item from its file: 0 sent, -1 the stream failed, -2 the file changed. */
static int send_item(struct stream *st, int sock, struct item *it, char *buf)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", st->s->src, st->s->plan->f[it->id].path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -2;
    int rc = it->whole ? send_whole(st, sock, fd, it, buf) : send_chunk(st, sock, fd, it, buf);
    close(fd);
    return rc;
}

static void *stream_main(void *arg)
{
    struct stream *st = arg;
    struct xfer_send *s = st->s;
    /* sendfile has no MSG_NOSIGNAL: a stream the worker reset would kill the
     * process; blocked here, the call fails with EPIPE instead */
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    char *buf = malloc(READ_STEP);
    char why[300] = "out of memory";
    for (int fails = 0; buf && !atomic_load(&s->stop);) {
        int sock = connect_hello(s, why, sizeof why);
        if (sock < 0) {
            if (++fails >= CONNECT_TRIES)
                break;
            for (int w = 0; w < fails * 5 && !atomic_load(&s->stop); w++)
                usleep(100000); /* 0.5 s, 1 s, ... */
            continue;
        }
        fails = 0;
        pthread_mutex_lock(&s->mu);
        s->up++;
        pthread_mutex_unlock(&s->mu);
        int rc = serve(st, sock, buf);
        if (rc < 0)
            requeue(st, NULL);
        close(sock);
        pthread_mutex_lock(&s->mu);
        s->up--;
        pthread_mutex_unlock(&s->mu);
        if (rc == 0) {
            why[0] = '\0';
            break;
        }
    }
    pthread_mutex_lock(&s->mu);
    if (why[0] && !atomic_load(&s->stop)) {
        s->gave_up++;
        snprintf(s->err, sizeof s->err, "%s", why);
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    free(buf);
    return NULL;
}

int xfer_send_start(struct xfer_send *s, const char *addr, int port, const char *token, int streams,
                    struct buf *err)
{
    snprintf(s->addr, sizeof s->addr, "%s", addr);
    snprintf(s->token, sizeof s->token, "%s", token);
    s->port = port;
    streams = streams < 1 ? 1 : streams > XFER_MAX_STREAMS ? XFER_MAX_STREAMS : streams;
    pthread_mutex_lock(&s->mu);
    int64_t need = 0;
    for (int i = 0; i < s->plan->n; i++)
        need += ranges_count(&s->f[i].need, 0, s->plan->f[i].size);
    /* ranges small enough that every stream has several, never over a frame */
    s->chunk = need / (streams * 4);
    s->chunk = s->chunk < MIB              ? MIB
               : s->chunk > XFER_MAX_FRAME ? XFER_MAX_FRAME
                                           : s->chunk / MIB * MIB;
    /* the files read in order first, largest first: a range-split shard fills the end */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->plan->n; i++) {
            const struct xfer_file *pf = &s->plan->f[i];
            bool whole = !pf->has_sha || pf->size == 0;
            if (s->f[i].st == SF_WANT && whole == (pass == 0))
                queue_file(s, i);
        }
    s->started = 1;
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < streams; i++) {
        s->st[i].s = s;
        s->st[i].idx = i;
        if (pthread_create(&s->st[i].th, NULL, stream_main, &s->st[i]) != 0)
            break;
        s->nstreams++;
    }
    if (!s->nstreams) {
        buf_puts(err, "cannot start the streams' threads");
        return -1;
    }
    return 0;
}

void xfer_send_stats(struct xfer_send *s, struct xfer_send_stats *out)
{
    memset(out, 0, sizeof *out);
    out->sent = atomic_load(&s->sent);
    out->streams = s->nstreams;
    for (int i = 0; i < s->nstreams; i++)
        out->stream_sent[i] = atomic_load(&s->stream_sent[i]);
    pthread_mutex_lock(&s->mu);
    out->streams_up = s->up;
    out->n = s->plan->n;
    for (int i = 0; i < s->plan->n; i++) {
        out->ok += s->f[i].st == SF_OK;
        out->failed += s->f[i].st == SF_FAILED;
    }
    out->finished = all_settled(s) && s->up == 0;
    if (s->gave_up == s->nstreams && s->nstreams && !all_settled(s))
        snprintf(out->err, sizeof out->err, "%s", s->err[0] ? s->err : "every stream failed");
    else if (s->err[0] && all_settled(s))
        snprintf(out->err, sizeof out->err, "%s", s->err);
    pthread_mutex_unlock(&s->mu);
}

void xfer_send_free(struct xfer_send *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    pthread_mutex_lock(&s->mu);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nstreams; i++)
        pthread_join(s->st[i].th, NULL);
    for (int i = 0; i < s->plan->n; i++)
        ranges_free(&s->f[i].need);
    free(s->f);
    free(s->q);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
