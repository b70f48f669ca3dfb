/* A rank's log through the engine's socket or the runtime CLI. The local
 * socket is pinged first (one short question), a remote one (through the
 * node's session) asked for the container (its Config.Tty, needed to read
 * the log): a log that fails half-way through ends the stream as a dying
 * CLI would, and the caller's follow logic (the console re-attaches on the
 * next sample) takes it from there. */
#include "logstream.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine_at.h"
#include "interrupt.h"
#include "runtime.h"

/* the ping that chooses the socket; a hung engine costs this once */
#define LOGSTREAM_PING_MS 1000
/* a remote socket's first question: the sampler's deadline for its own */
#define LOGSTREAM_REMOTE_ASK_MS 3000

struct logstream {
    struct node_stream *cli; /* or the engine's, below */
    /* remote: the socket's stream through the session and its reader */
    struct node *n;
    struct sshio_stream *ux;
    struct engine_logs_reader *rd;
    bool tty, rd_ended; /* a new reader for the answer after a broken session */
    pthread_t th;
    int stop[2];
    char sock[256], name[64];
    struct engine_logs_opt o;
    sshio_line_fn on_line;
    sshio_event_fn on_event;
    void *ctx;
};

static int one_line(void *ctx, int stream, const char *line, size_t len)
{
    (void)stream; /* one stream, as 2>&1 gives the CLI's */
    struct logstream *ls = ctx;
    ls->on_line(ls->ctx, line, len);
    return 0;
}

static void *engine_main(void *arg)
{
    struct logstream *ls = arg;
    struct buf err = BUF_INIT;
    if (ls->on_event)
        ls->on_event(ls->ctx, true);
    int r = engine_logs(ls->sock, ls->name, &ls->o, one_line, ls, &err);
    /* said in the log's place, as the CLI's stderr is; not when closed */
    if (r != 0 && err.len && !cancel_fd_set(ls->stop[0]))
        ls->on_line(ls->ctx, buf_str(&err), err.len);
    if (ls->on_event)
        ls->on_event(ls->ctx, false);
    buf_free(&err);
    return NULL;
}

static struct logstream *engine_open(struct logstream *ls, const char *sock, const char *name,
                                     bool follow, int tail)
{
    struct buf err = BUF_INIT;
    bool up = engine_name_ok(name, &err) == 0 && engine_ping(sock, LOGSTREAM_PING_MS, &err) == 0;
    buf_free(&err);
    if (!up || pipe2(ls->stop, O_CLOEXEC) < 0)
        return NULL;
    snprintf(ls->sock, sizeof ls->sock, "%s", sock);
    snprintf(ls->name, sizeof ls->name, "%s", name);
    ls->o = (struct engine_logs_opt){
        .follow = follow, .tail = tail, .timeout_ms = follow ? -1 : 30000, .cancel_fd = ls->stop[0]};
    if (pthread_create(&ls->th, NULL, engine_main, ls) != 0) {
        close(ls->stop[0]);
        close(ls->stop[1]);
        return NULL;
    }
    return ls;
}

/* The callbacks run on the node's I/O thread, one at a time. */
static int remote_bytes(void *ctx, const char *d, size_t n)
{
    struct logstream *ls = ctx;
    /* whole, stopped or malformed: the stream ends, and end says which */
    return ls->rd ? engine_logs_reader_feed(ls->rd, d, n) : 1;
}

static void remote_event(void *ctx, bool up)
{
    struct logstream *ls = ctx;
    if (up) {
        if (ls->rd_ended) { /* the request again, after a broken session */
            engine_logs_reader_free(ls->rd);
            ls->rd = engine_logs_reader_new(ls->tty, one_line, ls);
            ls->rd_ended = false;
        }
        if (ls->on_event)
            ls->on_event(ls->ctx, true);
        return;
    }
    struct buf err = BUF_INIT;
    /* said in the log's place, as the CLI's stderr is (a close runs no
     * callback); a broken session cut the answer, whatever it looks like */
    if (ls->rd && !ls->rd_ended &&
        engine_logs_reader_end(ls->rd, ls->sock, ls->name, true, &err) != 0 && err.len) {
        if (!sshio_connected(node_io(ls->n))) {
            buf_reset(&err);
            buf_printf(&err, "%s: logs %s: cut short: the ssh session ended", ls->n->name,
                       ls->name);
        }
        ls->on_line(ls->ctx, buf_str(&err), err.len);
    }
    ls->rd_ended = true;
    buf_free(&err);
    if (ls->on_event)
        ls->on_event(ls->ctx, false);
}

/* The worker's socket, when it is there and answers for the container.
 * Found on the node if no one has yet (the console's sampler usually has:
 * then this asks nothing). */
static struct logstream *remote_open(struct logstream *ls, struct node *n, const char *runtime,
                                     const char *name, bool follow, int tail)
{
    struct sshio *io = node_io(n);
    if (!io || node_engine_sock(n, runtime, interrupt_token(), ls->sock, sizeof ls->sock) != 1)
        return NULL;
    struct engine_at at = {ls->sock, node_engine_exchange, n};
    struct container_info c;
    bool tty = false;
    struct buf err = BUF_INIT, req = BUF_INIT;
    int rc = engine_inspect_tty_at(&at, name, LOGSTREAM_REMOTE_ASK_MS, &c, &tty, &err);
    buf_free(&err);
    if (rc != 0 || engine_logs_request(&req, name, follow, tail) < 0 ||
        !(ls->rd = engine_logs_reader_new(tty, one_line, ls))) {
        buf_free(&req);
        return NULL;
    }
    snprintf(ls->name, sizeof ls->name, "%s", name);
    ls->n = n;
    ls->tty = tty;
    ls->ux = sshio_stream_open_unix(io, ls->sock, req.data, req.len, remote_bytes, remote_event,
                                    ls);
    buf_free(&req);
    if (!ls->ux) {
        engine_logs_reader_free(ls->rd);
        ls->rd = NULL;
        return NULL;
    }
    return ls;
}

struct logstream *logstream_open(struct node *n, const char *runtime, const char *name,
                                 bool follow, int tail, sshio_line_fn on_line,
                                 sshio_event_fn on_event, void *ctx)
{
    struct logstream *ls = calloc(1, sizeof *ls);
    if (!ls)
        return NULL;
    ls->on_line = on_line;
    ls->on_event = on_event;
    ls->ctx = ctx;
    ls->stop[0] = ls->stop[1] = -1;
    if (n->local && n->engine_sock[0] && engine_open(ls, n->engine_sock, name, follow, tail))
        return ls;
    if (!n->local && remote_open(ls, n, runtime, name, follow, tail))
        return ls;
    struct shcmd cmd = SHCMD_INIT;
    runtime_cmd_logs(&cmd, runtime, name, follow, tail);
    ls->cli = node_stream_open(n, &cmd, on_line, on_event, ctx);
    shcmd_free(&cmd);
    if (!ls->cli) {
        free(ls);
        return NULL;
    }
    return ls;
}

void logstream_close(struct node *n, struct logstream *ls)
{
    if (!ls)
        return;
    if (ls->cli) {
        node_stream_close(n, ls->cli);
    } else if (ls->ux) {
        sshio_stream_close(node_io(n), ls->ux);
        engine_logs_reader_free(ls->rd);
    } else {
        if (write(ls->stop[1], "x", 1) < 0) {
            /* a full pipe already says stop */
        }
        pthread_join(ls->th, NULL);
        close(ls->stop[0]);
        close(ls->stop[1]);
    }
    free(ls);
}

const char *logstream_source(const struct logstream *ls)
{
    return ls->cli ? "the runtime CLI" : "the engine's socket";
}
