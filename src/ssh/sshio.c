#include "sshio_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mono.h"

void sshio_wake(struct sshio *io)
{
    char c = 1;
    if (write(io->wake[1], &c, 1) < 0 && errno != EAGAIN) {
        /* the pipe is full: the thread is awake anyway */
    }
}

/* A W_UNIX exchange's end: its answer or why not. The channel goes, unless
 * an open is in flight (libssh2 would give its answer to the next open). */
static void finish_unix(struct sshio *io, struct work *w, int rc, const char *why)
{
    if (w->ux && !ssh_unix_open_pending(w->ux)) {
        ssh_unix_free(io->conn, w->ux);
        w->ux = NULL;
    }
    if (rc < 0 && why)
        buf_puts(&w->ux_err, why);
    w->rc = rc;
    w->done = true;
    pthread_cond_broadcast(&io->cv);
}

static void finish_run(struct sshio *io, struct work *w, int rc, const char *why)
{
    if (w->kind == W_UNIX) {
        finish_unix(io, w, rc, why);
        return;
    }
    if (w->put) {
        ssh_put_free(io->conn, w->put);
        w->put = NULL;
    }
    if (w->ch) {
        w->res->exit_status = ssh_chan_exit_status(w->ch);
        ssh_chan_free(io->conn, w->ch);
        w->ch = NULL;
    }
    if (rc < 0 && why)
        buf_puts(w->err, why);
    w->rc = rc;
    w->done = true;
    pthread_cond_broadcast(&io->cv);
}

/* Drops the session: runs in flight fail, streams wait for the next one.
 * A session that broke after a healthy while is retried at once (the node
 * is probably still there); a failed connect, or a session that breaks right
 * after connecting, backs off and marks the node down. */
static void session_down(struct sshio *io, const char *why, bool connect_failed)
{
    pthread_mutex_lock(&io->mu);
    for (struct work *w = io->works; w; w = w->next) {
        if ((w->kind == W_RUN && w->ch) || (w->kind == W_PUT && w->put))
            if (!w->done)
                finish_run(io, w, -1, why);
        if (w->kind == W_UNIX && w->ux && (w->ux_started || w->done)) {
            /* the session takes the channel (and an open in flight) with it */
            ssh_unix_free(io->conn, w->ux);
            w->ux = NULL;
            if (!w->done)
                finish_unix(io, w, -1, why);
        }
        if (w->kind == W_STREAM && w->ch) {
            ssh_chan_free(io->conn, w->ch);
            w->ch = NULL;
            if (w->running)
                w->pend_down = true;
            w->pend_drop = true; /* the unfinished line went with the session */
            w->running = false;
        }
        if (w->kind == W_STREAM && w->ux) {
            /* the request goes again on the next session, as a CLI
             * stream's command does (its owner reads a new answer) */
            ssh_unix_free(io->conn, w->ux);
            w->ux = NULL;
            if (w->running)
                w->pend_down = true;
            w->pend_drop = true;
            w->running = false;
            w->had_enough = false;
        }
    }
    bool flapping = !connect_failed && mono_ms() - io->connected_at < 2000;
    if (connect_failed || flapping) {
        if (connect_failed && !io->down_since)
            io->down_since = time(NULL);
        io->backoff_ms = io->backoff_ms ? io->backoff_ms * 2 : BACKOFF_MIN_MS;
        if (io->backoff_ms > BACKOFF_MAX_MS)
            io->backoff_ms = BACKOFF_MAX_MS;
        io->next_try_ms = mono_ms() + io->backoff_ms;
    } else {
        io->next_try_ms = 0;
    }
    snprintf(io->last_error, sizeof io->last_error, "%s", why);
    io->connected = false;
    pthread_mutex_unlock(&io->mu);
    if (io->conn)
        ssh_close(io->conn);
    io->conn = NULL;
    io->opener = NULL;
    io->pinging = false;
    io->active_since = 0;
}

static bool has_pending(struct sshio *io)
{
    for (struct work *w = io->works; w; w = w->next)
        if ((w->kind != W_STREAM && !w->done && !w->abandoned && !w->orphan) ||
            (w->kind == W_STREAM && !w->closing && !w->ended))
            return true;
    return false;
}

/* Connects when there is work and the backoff allows; fails waiting runs
 * while the node is unreachable. */
static void ensure_session(struct sshio *io)
{
    pthread_mutex_lock(&io->mu);
    bool want = has_pending(io), forced = false;
    for (struct work *w = io->works; w; w = w->next)
        forced |= w->kind != W_STREAM && !w->done && w->force && !w->orphan;
    pthread_mutex_unlock(&io->mu);
    if (io->conn || !want || (!forced && mono_ms() < io->next_try_ms))
        return;
    struct buf e = BUF_INIT;
    io->conn = ssh_connect(io->name, &io->t, io->known_hosts, io->timeout_ms, &e);
    if (io->conn) {
        pthread_mutex_lock(&io->mu);
        io->down_since = 0;
        io->last_error[0] = '\0';
        io->backoff_ms = 0;
        io->next_try_ms = 0;
        io->connected = true;
        io->connected_at = mono_ms();
        pthread_mutex_unlock(&io->mu);
    } else {
        session_down(io, buf_str(&e), true);
        pthread_mutex_lock(&io->mu);
        for (struct work *w = io->works; w; w = w->next)
            if (w->kind != W_STREAM && !w->done)
                finish_run(io, w, -1, buf_str(&e));
        pthread_mutex_unlock(&io->mu);
    }
    buf_free(&e);
}

static bool work_opening(const struct work *w)
{
    return (w->ch && ssh_chan_opening(w->ch)) || (w->put && ssh_put_opening(w->put)) ||
           (w->ux && ssh_unix_opening(w->ux));
}

/* Advances one work item; the result of its step function. */
static int step_one(struct sshio *io, struct work *w, bool may_open, struct buf *why)
{
    if (w->kind == W_PUT)
        return ssh_put_step(io->conn, w->put, may_open, why);
    if (w->kind == W_RUN)
        return ssh_chan_step(io->conn, w->ch, may_open, &w->res->out, &w->res->err, w->max, why);
    if (w->kind == W_UNIX) {
        int r = ssh_unix_step(io->conn, w->ux, may_open, &w->ux_out, w->max, why);
        w->ux_started |= may_open;
        w->ux_opened |= !ssh_unix_opening(w->ux);
        return r;
    }
    if (w->raw) /* at most a pass's worth: the other channels get their turn */
        return ssh_unix_step(io->conn, w->ux, may_open, &w->out, RAW_PASS_MAX, why);
    if (w->pending_in.len) {
        ssh_chan_write(w->ch, w->pending_in.data, w->pending_in.len);
        buf_reset(&w->pending_in);
    }
    return ssh_chan_step(io->conn, w->ch, may_open, &w->out, &w->errbuf, LINE_MAX_BYTES * 2, why);
}

/* After a stream's step: what its callbacks will be told, and a restart
 * when its command ended. */
static void stream_after(struct sshio *io, struct work *w, int r)
{
    if (!w->running && !(w->raw ? ssh_unix_opening(w->ux) : ssh_chan_opening(w->ch))) {
        w->running = true;
        w->pend_up = true;
    }
    buf_reset(&w->errbuf);
    /* a socket's stream also ends when sshd would not open it (-2) */
    if (r == 1 || (w->raw && r < -1)) {
        /* the remote command ended: a last unfinished line is flushed, and
         * it starts again on the next pass if its owner asked for that */
        ssh_chan_free(io->conn, w->ch);
        ssh_unix_free(io->conn, w->ux);
        w->ch = NULL;
        w->ux = NULL;
        w->running = false;
        if (!w->restart || w->raw)
            w->ended = true;
        w->pend_end = true;
        w->pend_down = true;
    }
}

static bool has_news(const struct work *w)
{
    return w->pend_up || w->pend_end || w->pend_drop || w->pend_down || w->out.len;
}

/* Runs the streams' callbacks with the lock let go: a callback may take its
 * time (a snapshot of megabytes is parsed in one), or write to a stream,
 * while other threads queue work for the node. A stream's owner that closes it
 * meanwhile waits in sshio_stream_close until reap_closed frees it, after
 * its last callback returned. A callback must still not wait on this
 * node's sshio (sshio_run, sshio_stream_close): its thread is the one
 * running the callback. */
static void deliver(struct sshio *io)
{
    pthread_mutex_lock(&io->mu);
    int n = 0, cap = 0;
    for (struct work *w = io->works; w; w = w->next)
        cap += w->kind == W_STREAM;
    struct work **ws = cap ? malloc((size_t)cap * sizeof *ws) : NULL;
    for (struct work *w = io->works; ws && w; w = w->next)
        if (w->kind == W_STREAM && !w->closing && has_news(w))
            ws[n++] = w;
    pthread_mutex_unlock(&io->mu);
    for (int i = 0; i < n; i++) {
        struct work *w = ws[i];
        if (w->pend_up && w->on_event)
            w->on_event(w->ctx, true);
        if (w->raw && w->out.len && !w->had_enough)
            w->had_enough = w->on_bytes(w->ctx, w->out.data, w->out.len) != 0;
        if (w->raw)
            buf_reset(&w->out);
        buf_drain_lines(&w->out, LINE_MAX_BYTES, w->on_line, w->ctx);
        if (w->pend_end && w->out.len)
            w->on_line(w->ctx, w->out.data, w->out.len);
        if (w->pend_end || w->pend_drop)
            buf_reset(&w->out);
        if (w->pend_down && w->on_event)
            w->on_event(w->ctx, false);
        w->pend_up = w->pend_end = w->pend_drop = w->pend_down = false;
    }
    free(ws); /* out of memory: delivered on a later pass */
}

/* A channel no one waits for whose open libssh2 was asked (a W_UNIX
 * zombie, a closed socket stream): stepped until the open is answered, then
 * freed. 0 meanwhile or once freed, -1 when the session broke (why). */
static int see_open_through(struct sshio *io, struct work *w, struct buf *why)
{
    if (io->opener && io->opener != w) {
        io->slot_wanted = true;
        return 0;
    }
    struct buf zo = BUF_INIT, zwhy = BUF_INIT;
    int r = ssh_unix_step(io->conn, w->ux, true, &zo, 0, &zwhy);
    buf_free(&zo);
    if (r == 0 && ssh_unix_open_pending(w->ux)) {
        io->opener = w;
        buf_free(&zwhy);
        return 0;
    }
    if (io->opener == w)
        io->opener = NULL;
    ssh_unix_free(io->conn, w->ux);
    w->ux = NULL;
    if (r == -1)
        buf_puts(why, buf_str(&zwhy));
    buf_free(&zwhy);
    return r == -1 ? -1 : 0;
}

/* One pass over every channel. libssh2 opens one channel of a session at a
 * time, so one work item at most (io->opener) is in its opening step.
 * Returns -1 when the session broke. */
static int step_all(struct sshio *io, struct buf *why)
{
    pthread_mutex_lock(&io->mu);
    int rc = 0;
    for (struct work *w = io->works; w; w = w->next) {
        if ((w->kind == W_UNIX && w->done && w->ux) ||
            (w->kind == W_STREAM && w->closing && w->ux && ssh_unix_open_pending(w->ux))) {
            if (see_open_through(io, w, why) < 0) {
                rc = -1;
                break;
            }
            continue;
        }
        if (w->raw && w->had_enough && !w->closing && !w->ended && w->ux &&
            !ssh_unix_open_pending(w->ux)) {
            stream_after(io, w, 1); /* its owner has the whole answer */
            continue;
        }
        if (w->kind == W_STREAM ? (w->closing || w->ended) : w->done)
            continue;
        if (w->kind == W_UNIX && (w->orphan || mono_ms() > w->deadline)) {
            bool pending = w->ux && ssh_unix_open_pending(w->ux);
            if (io->opener == w && !pending)
                io->opener = NULL;
            finish_unix(io, w, w->ux_opened ? SSHIO_UNIX_SILENT : -1,
                        w->ux_opened ? "the engine did not answer in time"
                        : pending    ? "timed out: the node's sshd did not answer the channel's open"
                                     : "timed out waiting for the ssh session");
            continue;
        }
        if (w->kind != W_STREAM && (w->abandoned || mono_ms() > w->deadline)) {
            if (io->opener == w)
                io->opener = NULL;
            finish_run(io, w, -1,
                       w->abandoned            ? "interrupted"
                       : w->kind == W_PUT      ? "file transfer timed out"
                                               : "command timed out");
            continue;
        }
        if (w->kind == W_PUT && !w->put)
            w->put = ssh_put_new(w->cmd, w->put_data, w->put_len, w->put_mode);
        else if (w->raw && !w->ux)
            w->ux = ssh_unix_new_stream(w->cmd, w->ux_req.data, w->ux_req.len);
        else if (w->kind != W_PUT && w->kind != W_UNIX && !w->raw && !w->ch &&
                 (w->ch = ssh_chan_new(w->cmd)) && w->kind == W_STREAM)
            ssh_chan_hold(w->ch); /* a flood waits in the channel, never dropped */
        if (!w->put && !w->ch && !w->ux) {
            if (w->kind != W_STREAM)
                finish_run(io, w, -1, "out of memory");
            continue;
        }
        bool may_open = !io->opener || io->opener == w;
        struct buf wwhy = BUF_INIT;
        int r = step_one(io, w, may_open, &wwhy);
        if (!may_open && work_opening(w))
            io->slot_wanted = true;
        if (may_open && work_opening(w) && r == 0)
            io->opener = w;
        else if (io->opener == w)
            io->opener = NULL;
        if (r == -1) {
            buf_puts(why, buf_str(&wwhy));
            buf_free(&wwhy);
            rc = -1;
            break;
        }
        if (w->kind == W_STREAM) {
            stream_after(io, w, r);
            io->again |= (w->ch && ssh_chan_full(w->ch)) || (w->ux && ssh_unix_full(w->ux));
        }
        else if (w->kind == W_UNIX && r != 0)
            finish_unix(io, w, r == 1 ? 0 : r == -2 ? SSHIO_UNIX_REFUSED : SSHIO_UNIX_SILENT,
                        buf_str(&wwhy));
        else if (r == 1)
            finish_run(io, w, 0, NULL);
        else if (r == -2)
            finish_run(io, w, -1, buf_str(&wwhy));
        buf_free(&wwhy);
    }
    pthread_mutex_unlock(&io->mu);
    return rc;
}

void sshio_free_unix(struct work *w)
{
    buf_free(&w->ux_out);
    buf_free(&w->ux_err);
    free(w->cmd);
    free(w);
}

static void free_stream(struct sshio *io, struct work *w)
{
    ssh_chan_free(io->conn, w->ch);
    ssh_unix_free(io->conn, w->ux);
    buf_free(&w->ux_req);
    buf_free(&w->out);
    buf_free(&w->errbuf);
    buf_free(&w->pending_in);
    free(w->cmd);
    free(w);
}

/* Frees the streams their owners closed, on this thread, with or without a
 * session, and tells the owners waiting in sshio_stream_close. */
static void reap_closed(struct sshio *io)
{
    pthread_mutex_lock(&io->mu);
    bool any = false;
    for (struct work **pw = &io->works; *pw;) {
        struct work *w = *pw;
        if (w->kind == W_STREAM && w->closing && w->ux && io->conn &&
            ssh_unix_open_pending(w->ux)) {
            pw = &w->next; /* its open is seen through first (step_all) */
        } else if (w->kind == W_STREAM && w->closing) {
            *pw = w->next;
            if (io->opener == w)
                io->opener = NULL;
            free_stream(io, w);
            any = true;
        } else if (w->kind == W_UNIX && w->orphan && w->done && !w->ux) {
            *pw = w->next;
            if (io->opener == w)
                io->opener = NULL;
            sshio_free_unix(w);
        } else {
            pw = &w->next;
        }
    }
    if (any)
        pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

/* The opener while a ping holds the session's channel-opening slot. */
static struct work ping_opener;

/* A session with work must hear from the node: after ServerAliveInterval
 * (default 5 s) of silence it is pinged, and after ServerAliveCountMax
 * (default 3) intervals of silence it is dropped and the node marked down
 * since it was last heard, so a hung sshd or a cut link shows within
 * seconds instead of as commands that time out one by one. An idle session
 * is left alone: the next command finds a dead one. -1 when it was dropped. */
static int check_alive(struct sshio *io, bool active)
{
    long long now = mono_ms();
    if (!active) {
        io->active_since = 0;
        return 0;
    }
    if (!io->active_since)
        io->active_since = now;
    long long heard = ssh_last_rx(io->conn);
    if (heard < io->active_since)
        heard = io->active_since;
    long long every = (io->t.alive_interval_s > 0 ? io->t.alive_interval_s : 5) * 1000LL;
    int count = io->t.alive_count_max > 0 ? io->t.alive_count_max : 3;
    long long quiet = now - heard;
    /* silence alone does not drop: this process may have been stopped
     * (Ctrl-Z, a debugger, a starved machine) while the node talked. A
     * ping that went unanswered for the rest of the intervals does. */
    if (quiet >= every * count && io->pinging && now - io->ping_since >= every * (count - 1)) {
        char why[160];
        snprintf(why, sizeof why,
                 "no answer from the node's sshd for %lld s (hung, or the link is cut)",
                 quiet / 1000);
        if (io->opener == &ping_opener)
            io->opener = NULL;
        io->pinging = false;
        session_down(io, why, true);
        pthread_mutex_lock(&io->mu);
        io->down_since = time(NULL) - (time_t)(quiet / 1000);
        pthread_mutex_unlock(&io->mu);
        return -1;
    }
    if (quiet >= every && !io->pinging) {
        io->pinging = true;
        io->ping_since = now;
    }
    if (io->pinging && (!io->opener || io->opener == &ping_opener)) {
        int r = ssh_ping_step(io->conn);
        io->opener = r == 0 ? &ping_opener : NULL;
        if (r != 0)
            io->pinging = false; /* an answer: the next silence starts a new ping */
        if (r < 0) {
            session_down(io, "ssh session lost (a ping failed)", false);
            return -1;
        }
    }
    return 0;
}

/* How long the poll may sleep before check_alive has something to do. */
static int alive_timeout(const struct sshio *io, int timeout)
{
    if (!io->active_since || io->pinging)
        return io->pinging && timeout > 200 ? 200 : timeout;
    long long every = (io->t.alive_interval_s > 0 ? io->t.alive_interval_s : 5) * 1000LL;
    long long heard = ssh_last_rx(io->conn);
    if (heard < io->active_since)
        heard = io->active_since;
    long long due = heard + every - mono_ms();
    return due < 0 ? 0 : due < timeout ? (int)due : timeout;
}

/* Exchanges that never got onto a session end at their deadline too (the
 * started ones end in step_all or with their session). */
static void expire_unix(struct sshio *io)
{
    pthread_mutex_lock(&io->mu);
    for (struct work *w = io->works; w; w = w->next)
        if (w->kind == W_UNIX && !w->done && !w->ux_started &&
            (w->orphan || mono_ms() > w->deadline))
            finish_unix(io, w, -1, "timed out waiting for the ssh session");
    pthread_mutex_unlock(&io->mu);
}

static void *io_main(void *arg)
{
    struct sshio *io = arg;
    for (;;) {
        pthread_mutex_lock(&io->mu);
        bool stop = io->stop;
        pthread_mutex_unlock(&io->mu);
        if (stop)
            break;
        expire_unix(io);
        deliver(io); /* what a session that went down left */
        reap_closed(io);
        ensure_session(io);
        struct pollfd p[2] = {{io->wake[0], POLLIN, 0}, {-1, 0, 0}};
        int timeout = 1000;
        io->again = false;
        io->slot_wanted = false;
        unsigned long long rx0 = io->conn ? ssh_rx_bytes(io->conn) : 0;
        if (io->conn) {
            struct buf why = BUF_INIT;
            int stepped = step_all(io, &why);
            deliver(io);
            if (stepped < 0 || ssh_keepalive(io->conn) < 0) {
                session_down(io, why.len ? buf_str(&why) : "ssh session lost", false);
                buf_free(&why);
                continue;
            }
            buf_free(&why);
            /* An idle session is not polled: nothing would read what
             * arrives, and a dead one is found by the next command. */
            pthread_mutex_lock(&io->mu);
            bool active = false;
            for (struct work *w = io->works; w; w = w->next)
                active |= w->ch != NULL || w->put != NULL || w->ux != NULL ||
                          (w->kind == W_UNIX && !w->done);
            /* a ping that holds the opening slot must be seen through */
            active |= io->pinging;
            pthread_mutex_unlock(&io->mu);
            if (check_alive(io, active) < 0)
                continue;
            if (active) {
                p[1].fd = ssh_fd(io->conn);
                p[1].events = ssh_poll_events(io->conn);
                timeout = alive_timeout(io, timeout);
            } else {
                timeout = 10000; /* keepalive */
            }
        } else {
            pthread_mutex_lock(&io->mu);
            bool want = has_pending(io);
            pthread_mutex_unlock(&io->mu);
            long long left = io->next_try_ms - mono_ms();
            if (want && left < timeout)
                timeout = left < 0 ? 0 : (int)left;
        }
        if (io->again) /* a stream stopped at its buffer's end: more is waiting */
            timeout = 0;
        /* Anything read in this pass may be a packet for a work stepped
         * before it was read (libssh2 reads what the socket has into the
         * channel it belongs to, whichever call reads): it waits in libssh2,
         * where poll does not see it, and would wait for the next packet or
         * the timeout. Not every case: bytes libssh2 read in one piece
         * with an earlier packet are parsed without a read; a pass that
         * finds those for an earlier work still waits for the poll. */
        if (io->conn && ssh_rx_bytes(io->conn) != rx0)
            timeout = 0;
        /* an exchange's deadline is kept to the pass: its channel closed,
         * the opening slot let go */
        pthread_mutex_lock(&io->mu);
        /* A work that waited for the one channel-opening slot while another
         * held it has its turn once the slot is free: now, not after the
         * next packet or the timeout (a put behind a command's open waited
         * out 1 s polls, under strace and on a loaded machine alike). */
        if (io->conn && io->slot_wanted && !io->opener)
            timeout = 0;
        for (struct work *w = io->works; w; w = w->next)
            if (w->kind == W_UNIX && !w->done) {
                long long left = w->deadline - mono_ms() + 1;
                if (left < timeout)
                    timeout = left < 0 ? 0 : (int)left;
            }
        pthread_mutex_unlock(&io->mu);
        if (poll(p, p[1].fd >= 0 ? 2 : 1, timeout) > 0 && (p[0].revents & POLLIN)) {
            char drain[64];
            while (read(io->wake[0], drain, sizeof drain) > 0)
                ;
        }
        if (io->conn && (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)) &&
            !(p[1].revents & POLLIN))
            session_down(io, "connection closed by the node", false);
    }
    return NULL;
}

struct sshio *sshio_start(const char *name, const struct ssh_target *t, const char *known_hosts,
                          int timeout_ms)
{
    struct sshio *io = calloc(1, sizeof *io);
    if (!io)
        return NULL;
    snprintf(io->name, sizeof io->name, "%s", name);
    io->t = *t;
    snprintf(io->known_hosts, sizeof io->known_hosts, "%s", known_hosts);
    io->timeout_ms = timeout_ms;
    if (pipe2(io->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(io);
        return NULL;
    }
    pthread_mutex_init(&io->mu, NULL);
    pthread_cond_init(&io->cv, NULL);
    if (pthread_create(&io->th, NULL, io_main, io) != 0) {
        close(io->wake[0]);
        close(io->wake[1]);
        pthread_mutex_destroy(&io->mu);
        pthread_cond_destroy(&io->cv);
        free(io);
        return NULL;
    }
    return io;
}

void sshio_stop(struct sshio *io)
{
    if (!io)
        return;
    pthread_mutex_lock(&io->mu);
    io->stop = true;
    pthread_mutex_unlock(&io->mu);
    sshio_wake(io);
    pthread_join(io->th, NULL);
    for (struct work *w = io->works, *next; w; w = next) {
        next = w->next;
        if (w->kind == W_STREAM) {
            free_stream(io, w);
        } else if (w->kind == W_UNIX) {
            ssh_unix_free(io->conn, w->ux);
            sshio_free_unix(w);
        } else {
            ssh_chan_free(io->conn, w->ch);
        }
    }
    if (io->conn)
        ssh_close(io->conn);
    close(io->wake[0]);
    close(io->wake[1]);
    pthread_mutex_destroy(&io->mu);
    pthread_cond_destroy(&io->cv);
    free(io);
}
