/* sshio_calls: the callers' side of a node's I/O thread - commands,
 * uploads, streams and unix exchanges queued, waited for (with a deadline
 * and a cancel) and their results taken; the thread itself is sshio.c. */
#include "sshio_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mono.h"

static int wait_work(struct sshio *io, struct work *w, const atomic_int *cancel);

int sshio_run(struct sshio *io, const char *cmd, size_t max, int timeout_ms, bool force,
              const atomic_int *cancel, struct ssh_result *res, struct buf *err)
{
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    struct work w = {0};
    w.kind = W_RUN;
    w.cmd = (char *)cmd;
    w.res = res;
    w.err = err;
    w.max = max;
    w.deadline = mono_ms() + timeout_ms;
    w.force = force;
    /* A node known to be down answers at once until its backoff ends. */
    int rc = wait_work(io, &w, cancel);
    if (rc < 0)
        ssh_result_free(res);
    return rc;
}

static int wait_work(struct sshio *io, struct work *w, const atomic_int *cancel)
{
    pthread_mutex_lock(&io->mu);
    if (!w->force && io->down_since && mono_ms() < io->next_try_ms) {
        buf_printf(w->err, "%s (retrying in %lld ms)", io->last_error,
                   io->next_try_ms - mono_ms());
        pthread_mutex_unlock(&io->mu);
        return -1;
    }
    w->next = io->works;
    io->works = w;
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    pthread_mutex_lock(&io->mu);
    while (!w->done) {
        if (!cancel) {
            pthread_cond_wait(&io->cv, &io->mu);
            continue;
        }
        if (atomic_load(cancel) && !w->ch && !w->put) {
            /* not started on a session (none may be up for a while): the
             * thread holds mu for a whole pass, so it is not in a step now */
            if (io->opener == w)
                io->opener = NULL;
            buf_puts(w->err, "interrupted");
            w->rc = -1;
            w->done = true;
            break;
        }
        if (atomic_load(cancel) && !w->abandoned) {
            w->abandoned = true; /* the thread finishes it: it owns the channel */
            sshio_wake(io);
        }
        struct timespec ts;
        mono_deadline(&ts, 200);
        mono_cond_wait(&io->cv, &io->mu, &ts);
    }
    for (struct work **pw = &io->works; *pw; pw = &(*pw)->next)
        if (*pw == w) {
            *pw = w->next;
            break;
        }
    pthread_mutex_unlock(&io->mu);
    return w->rc;
}

int sshio_put(struct sshio *io, const char *path, const char *data, size_t len, int mode,
              int timeout_ms, bool force, struct buf *err)
{
    struct ssh_result dummy;
    memset(&dummy, 0, sizeof dummy);
    struct work w = {0};
    w.kind = W_PUT;
    w.cmd = (char *)path;
    w.put_data = data;
    w.put_len = len;
    w.put_mode = mode;
    w.res = &dummy;
    w.err = err;
    w.deadline = mono_ms() + timeout_ms;
    w.force = force;
    return wait_work(io, &w, NULL);
}

/* A stream's work, handed to the I/O thread. */
static struct sshio_stream *stream_queue(struct sshio *io, struct work *w)
{
    pthread_mutex_lock(&io->mu);
    w->next = io->works;
    io->works = w;
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    return (struct sshio_stream *)w;
}

struct sshio_stream *sshio_stream_open(struct sshio *io, const char *cmd, bool restart,
                                       sshio_line_fn on_line, sshio_event_fn on_event, void *ctx)
{
    struct work *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->kind = W_STREAM;
    w->cmd = strdup(cmd);
    if (!w->cmd) {
        free(w);
        return NULL;
    }
    w->on_line = on_line;
    w->on_event = on_event;
    w->restart = restart;
    w->ctx = ctx;
    return stream_queue(io, w);
}

struct sshio_stream *sshio_stream_open_unix(struct sshio *io, const char *sock, const char *req,
                                            size_t len, sshio_bytes_fn on_bytes,
                                            sshio_event_fn on_event, void *ctx)
{
    struct work *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->kind = W_STREAM;
    w->raw = true;
    w->cmd = strdup(sock);
    if (!w->cmd || buf_append(&w->ux_req, req, len) < 0) {
        free(w->cmd);
        buf_free(&w->ux_req);
        free(w);
        return NULL;
    }
    w->on_bytes = on_bytes;
    w->on_event = on_event;
    w->ctx = ctx;
    return stream_queue(io, w);
}

int sshio_stream_write(struct sshio *io, struct sshio_stream *s, const char *data, size_t len)
{
    struct work *w = (struct work *)s;
    pthread_mutex_lock(&io->mu);
    int rc = buf_append(&w->pending_in, data, len);
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    return rc;
}

void sshio_stream_close(struct sshio *io, struct sshio_stream *s)
{
    struct work *target = (struct work *)s;
    pthread_mutex_lock(&io->mu);
    target->closing = true;
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    /* wait until the thread has freed it, so no callback follows */
    pthread_mutex_lock(&io->mu);
    for (;;) {
        bool found = false;
        for (struct work *w = io->works; w; w = w->next)
            found |= w == target;
        if (!found)
            break;
        pthread_cond_wait(&io->cv, &io->mu);
    }
    pthread_mutex_unlock(&io->mu);
}

bool sshio_state(struct sshio *io, time_t *down_since, char *why, size_t whysz)
{
    pthread_mutex_lock(&io->mu);
    bool up = io->down_since == 0;
    if (down_since)
        *down_since = io->down_since;
    if (why && whysz)
        snprintf(why, whysz, "%s", io->last_error);
    pthread_mutex_unlock(&io->mu);
    return up;
}

bool sshio_connected(struct sshio *io)
{
    pthread_mutex_lock(&io->mu);
    bool c = io->connected;
    pthread_mutex_unlock(&io->mu);
    return c;
}

struct sshio_unix *sshio_unix_start(struct sshio *io, const char *sock, const char *req,
                                    size_t len, size_t max, int timeout_ms, struct buf *err)
{
    struct work *w = calloc(1, sizeof *w);
    if (w) {
        w->kind = W_UNIX;
        w->cmd = strdup(sock);
        w->ux = ssh_unix_new(sock, req, len);
    }
    if (!w || !w->cmd || !w->ux) {
        if (w) {
            ssh_unix_free(NULL, w->ux);
            sshio_free_unix(w);
        }
        buf_puts(err, "out of memory");
        return NULL;
    }
    w->max = max;
    w->deadline = mono_ms() + timeout_ms;
    pthread_mutex_lock(&io->mu);
    /* never a reconnect for it: a node known to be down answers at once */
    if (io->down_since && (!io->connected || mono_ms() < io->next_try_ms)) {
        buf_printf(err, "%s", io->last_error[0] ? io->last_error : "the node is down");
        pthread_mutex_unlock(&io->mu);
        ssh_unix_free(NULL, w->ux);
        sshio_free_unix(w);
        return NULL;
    }
    w->next = io->works;
    io->works = w;
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    return (struct sshio_unix *)w;
}

int sshio_unix_wait(struct sshio *io, struct sshio_unix *u, long long until_ms)
{
    struct work *w = (struct work *)u;
    if (until_ms > w->deadline)
        until_ms = w->deadline;
    pthread_mutex_lock(&io->mu);
    while (!w->done && mono_ms() < until_ms) {
        long long left = until_ms - mono_ms();
        struct timespec ts;
        mono_deadline(&ts, left > 200 ? 200 : left < 1 ? 1 : left);
        mono_cond_wait(&io->cv, &io->mu, &ts);
    }
    int rc = w->done ? w->rc : 1;
    pthread_mutex_unlock(&io->mu);
    return rc;
}

int sshio_unix_end(struct sshio *io, struct sshio_unix *u, struct buf *out, struct buf *err)
{
    struct work *w = (struct work *)u;
    if (!w)
        return -1;
    pthread_mutex_lock(&io->mu);
    int rc;
    if (w->done) {
        rc = w->rc;
        if (rc == 0 && out)
            buf_append(out, w->ux_out.data ? w->ux_out.data : "", w->ux_out.len);
        else if (rc < 0)
            buf_puts(err, buf_str(&w->ux_err));
    } else {
        /* given up before the thread saw the deadline (it may be in a
         * connect): the thread finishes and frees it */
        rc = w->ux_opened ? SSHIO_UNIX_SILENT : -1;
        buf_puts(err, w->ux_opened ? "the engine did not answer in time"
                                   : "timed out: no answer from the node's sshd");
    }
    w->orphan = true;
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    return rc;
}

int sshio_unix(struct sshio *io, const char *sock, const char *req, size_t len, size_t max,
               int timeout_ms, struct buf *out, struct buf *err)
{
    struct sshio_unix *u = sshio_unix_start(io, sock, req, len, max, timeout_ms, err);
    if (!u)
        return -1;
    sshio_unix_wait(io, u, mono_ms() + timeout_ms);
    return sshio_unix_end(io, u, out, err);
}
