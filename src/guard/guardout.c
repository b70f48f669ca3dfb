/* guardout: see guardout.h. */
#include "guardout.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "mono.h"

#define OUT_RING (64u << 10) /* log bytes waiting: ~500 lines */

struct guard_out {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv, done_cv;
    bool stop;
    char ring[OUT_RING];
    size_t len;                 /* bytes waiting, from ring[0] */
    unsigned long lost;         /* lines dropped since the last write */
    char hb[256];
    size_t hb_len;              /* 0: no new heartbeat */
    unsigned long long queued;  /* items handed over */
    unsigned long long written; /* items the writer has finished */
};

/* Every write in full, or given up on an error: the log is best effort. */
static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void *writer(void *arg)
{
    struct guard *g = arg;
    struct guard_out *o = g->out;
    char *buf = malloc(OUT_RING);
    pthread_mutex_lock(&o->mu);
    for (;;) {
        while (o->queued == o->written && !o->stop)
            pthread_cond_wait(&o->cv, &o->mu);
        if (o->queued == o->written && o->stop)
            break;
        /* take what waits, then write with the lock let go: the sampling
         * thread queues meanwhile however long the writes take */
        unsigned long long upto = o->queued;
        size_t n = buf ? o->len : 0;
        if (buf)
            memcpy(buf, o->ring, n);
        o->len = 0;
        unsigned long lost = o->lost;
        o->lost = 0;
        char hb[sizeof o->hb];
        size_t hbn = o->hb_len;
        memcpy(hb, o->hb, hbn);
        o->hb_len = 0;
        pthread_mutex_unlock(&o->mu);
        if (lost) {
            char note[160];
            int k = snprintf(note, sizeof note,
                             "(%lu log line(s) lost: STATE_DIR took no writes for a while)\n",
                             lost);
            write_all(g->log_fd, note, (size_t)k);
        }
        if (n)
            write_all(g->log_fd, buf, n);
        if (hbn && pwrite(g->hb_fd, hb, hbn, 0) == (ssize_t)hbn && ftruncate(g->hb_fd, (off_t)hbn) == 0) {
            /* a reader sees one whole line */
        }
        pthread_mutex_lock(&o->mu);
        o->written = upto;
        pthread_cond_broadcast(&o->done_cv);
    }
    pthread_mutex_unlock(&o->mu);
    free(buf);
    return NULL;
}

int guardout_start(struct guard *g)
{
    struct guard_out *o = calloc(1, sizeof *o);
    if (!o)
        return -1;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    pthread_cond_init(&o->done_cv, NULL);
    g->out = o;
    if (pthread_create(&o->th, NULL, writer, g) != 0) {
        g->out = NULL;
        pthread_mutex_destroy(&o->mu);
        pthread_cond_destroy(&o->cv);
        pthread_cond_destroy(&o->done_cv);
        free(o);
        return -1;
    }
    return 0;
}

void guardout_log(struct guard *g, const char *line, size_t n)
{
    struct guard_out *o = g->out;
    if (!o) { /* no writer: as before, inline */
        if (g->log_fd >= 0)
            write_all(g->log_fd, line, n);
        return;
    }
    pthread_mutex_lock(&o->mu);
    if (n > OUT_RING)
        n = OUT_RING;
    /* full: the oldest whole lines go, and are counted */
    while (o->len + n > OUT_RING) {
        char *nl = memchr(o->ring, '\n', o->len);
        size_t cut = nl ? (size_t)(nl - o->ring) + 1 : o->len;
        memmove(o->ring, o->ring + cut, o->len - cut);
        o->len -= cut;
        o->lost++;
    }
    memcpy(o->ring + o->len, line, n);
    o->len += n;
    o->queued++;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

void guardout_heartbeat(struct guard *g, const char *hb, size_t n)
{
    struct guard_out *o = g->out;
    if (!o) {
        if (g->hb_fd >= 0 && pwrite(g->hb_fd, hb, n, 0) == (ssize_t)n &&
            ftruncate(g->hb_fd, (off_t)n) == 0) {
            /* a reader sees one whole line */
        }
        return;
    }
    pthread_mutex_lock(&o->mu);
    if (n > sizeof o->hb)
        n = sizeof o->hb;
    memcpy(o->hb, hb, n);
    o->hb_len = n;
    o->queued++;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

bool guardout_flush(struct guard *g, int timeout_ms)
{
    struct guard_out *o = g->out;
    if (!o)
        return true;
    struct timespec until;
    mono_deadline(&until, timeout_ms);
    pthread_mutex_lock(&o->mu);
    unsigned long long want = o->queued;
    int rc = 0;
    while (o->written < want && rc == 0)
        rc = mono_cond_wait(&o->done_cv, &o->mu, &until);
    bool done = o->written >= want;
    pthread_mutex_unlock(&o->mu);
    return done;
}

void guardout_stop(struct guard *g)
{
    struct guard_out *o = g->out;
    if (!o)
        return;
    bool done = guardout_flush(g, 2000);
    pthread_mutex_lock(&o->mu);
    o->stop = true;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
    g->out = NULL;
    if (!done) {
        /* stuck in a write that may never return: left to the process's end */
        pthread_detach(o->th);
        return;
    }
    pthread_join(o->th, NULL);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    pthread_cond_destroy(&o->done_cv);
    free(o);
}
