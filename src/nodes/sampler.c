#include "sampler.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_at.h"
#include "mono.h"
#include "runtime.h"

#define FRAME_MAX (8u << 20)
/* A remote node's engine socket: one exchange waits no longer than this
 * (the engine answers in milliseconds; a slower one leaves time for the
 * CLI in the same request), an answer is at most this large, and a socket
 * that failed is left alone this long. */
#define SOCK_EXCHANGE_MS 3000
#define SOCK_ANSWER_MAX (ENGINE_BODY_MAX + 65536)
#define SOCK_SKIP_MS 60000
/* A discovery that could not run (the node down) is tried again after. */
#define SOCK_FIND_AGAIN_MS 30000
/* How long a request that must be fresh (status) waits for the discovery. */
#define SOCK_FIND_WAIT_MS 3000

enum sock_state { SOCK_NONE, SOCK_FIND, SOCK_KNOWN };
enum helper_task { TASK_FIND, TASK_CHECK };

struct sampler {
    struct node *n;
    char runtime[64];
    int nranks;
    const struct rdma_override *ov;
    char marker[40];
    struct sshio_stream *stream; /* remote only */

    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct buf frame; /* the I/O thread's: lines of the snapshot in flight */
    uint64_t seq;     /* snapshots completed; guarded by mu */
    uint64_t ups;     /* times the stream (re)started; guarded by mu */
    struct snapshot latest;
    long long latest_at; /* mono ms; guarded by mu */
    uint64_t asked;      /* the seq the last trigger waits for; guarded by mu */
    uint64_t asked_ups;  /* the stream's run it was written to; guarded by mu */

    /* remote: the engine's socket on the node, guarded by mu */
    enum sock_state sock_state;
    char sock[256];
    long long skip_until; /* the socket failed: the CLI until then */
    long long find_after; /* a discovery that could not run: again after */
    char note[400];       /* a refusal, said in every snapshot (status warns) */
    /* the helper thread: the discovery and the refusal's check, off the
     * requests' path (a node_run each); mu guards these */
    pthread_t helper;
    bool helper_on;   /* a thread to join */
    bool helper_busy; /* it has not finished */
    enum helper_task task;
    atomic_int cancel; /* sampler_stop: the helper's command gives up */
};

static void on_line(void *ctx, const char *line, size_t len)
{
    struct sampler *s = ctx;
    size_t ml = strlen(s->marker);
    if (s->frame.len + len + 1 > FRAME_MAX)
        buf_reset(&s->frame); /* runaway output: drop it, keep framing */
    buf_append(&s->frame, line, len);
    buf_append(&s->frame, "\n", 1);
    if (len == ml + 4 && memcmp(line, s->marker, ml) == 0 && memcmp(line + ml, " end", 4) == 0) {
        struct snapshot *snap = malloc(sizeof *snap);
        if (snap) {
            /* NUL bytes from a hostile file must not cut the frame short */
            for (size_t i = 0; i < s->frame.len; i++)
                if (s->frame.data[i] == '\0')
                    s->frame.data[i] = '?';
            snapshot_parse(buf_str(&s->frame), s->marker, s->ov, snap);
            pthread_mutex_lock(&s->mu);
            s->latest = *snap;
            s->latest_at = mono_ms();
            s->seq++;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            free(snap);
        }
        buf_reset(&s->frame);
    }
}

static void on_event(void *ctx, bool up)
{
    struct sampler *s = ctx;
    buf_reset(&s->frame);
    pthread_mutex_lock(&s->mu);
    if (up)
        s->ups++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The socket, once found on the node (node_engine_sock keeps it there for
 * the rank verbs too); a node that could not be asked: again later; none
 * there: again after NODE_SOCK_AGAIN_MS (a podman.socket started later). */
static void helper_find(struct sampler *s)
{
    char path[256];
    int rc = node_engine_sock(s->n, s->runtime, &s->cancel, path, sizeof path);
    pthread_mutex_lock(&s->mu);
    if (rc > 0) {
        s->sock_state = SOCK_KNOWN;
        snprintf(s->sock, sizeof s->sock, "%s", path);
    } else {
        s->find_after = mono_ms() + (rc == 0 ? NODE_SOCK_AGAIN_MS : SOCK_FIND_AGAIN_MS);
    }
    pthread_mutex_unlock(&s->mu);
}

/* After sshd would not open the socket: a socket there that we may write
 * means sshd refused the forwarding, which the operator should hear of; a
 * missing one is only the CLI's case. The answer is a word the command
 * prints as well as its exit status: two CI runs warned of a refusal for a
 * socket that was not there, the status read before the node had sent it
 * (ssh.c's CH_WAIT has the cause, and fixes it); a channel closed with no
 * status still reads 0, which libssh2 cannot tell from a success. */
static void helper_check(struct sampler *s)
{
    char sock[256];
    pthread_mutex_lock(&s->mu);
    snprintf(sock, sizeof sock, "%s", s->sock);
    pthread_mutex_unlock(&s->mu);
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "test -S \"$1\" && test -w \"$1\" && echo dsv41-socket-writable");
    shcmd_arg(&cmd, sock);
    struct ssh_result res;
    struct buf err = BUF_INIT;
    int rc = cmd.failed ? -1
                        : node_run_cancel(s->n, &cmd, s->n->timeout_ms + 5000, &s->cancel, &res,
                                          &err);
    if (rc == 0) {
        pthread_mutex_lock(&s->mu);
        if (res.exit_status == 0 && strstr(buf_str(&res.out), "dsv41-socket-writable"))
            snprintf(s->note, sizeof s->note,
                     "the engine's socket %.120s is there, and the node's sshd will not forward "
                     "to it (AllowStreamLocalForwarding no, or DisableForwarding): the runtime's "
                     "CLI is used",
                     sock);
        else
            s->note[0] = '\0';
        pthread_mutex_unlock(&s->mu);
        ssh_result_free(&res);
    }
    shcmd_free(&cmd);
    buf_free(&err);
}

static void *helper_main(void *arg)
{
    struct sampler *s = arg;
    pthread_mutex_lock(&s->mu);
    enum helper_task t = s->task;
    pthread_mutex_unlock(&s->mu);
    if (t == TASK_FIND)
        helper_find(s);
    else
        helper_check(s);
    pthread_mutex_lock(&s->mu);
    s->helper_busy = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Starts the helper on t unless it is busy. With s->mu held: a finished
 * helper has let mu go for the last time, so joining it here is quick. */
static void helper_kick(struct sampler *s, enum helper_task t)
{
    if (s->helper_busy)
        return;
    if (s->helper_on)
        pthread_join(s->helper, NULL);
    s->task = t;
    s->helper_busy = true;
    s->helper_on = pthread_create(&s->helper, NULL, helper_main, s) == 0;
    if (!s->helper_on)
        s->helper_busy = false;
}

struct sampler *sampler_start(struct node *n, const char *runtime, int nranks,
                              const struct rdma_override *ov)
{
    struct sampler *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->n = n;
    snprintf(s->runtime, sizeof s->runtime, "%s", runtime);
    s->nranks = nranks;
    s->ov = ov;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (n->local)
        return s;
    pthread_mutex_lock(&n->mu); /* a rank verb may have found it meanwhile */
    if (n->worker_sock_find) {
        s->sock_state = SOCK_FIND;
    } else if (n->worker_sock[0]) {
        s->sock_state = SOCK_KNOWN;
        snprintf(s->sock, sizeof s->sock, "%s", n->worker_sock);
    }
    pthread_mutex_unlock(&n->mu);
    struct shcmd cmd = SHCMD_INIT;
    struct buf line = BUF_INIT;
    struct sshio *io = node_io(n);
    if (!io || snapshot_marker(s->marker, sizeof s->marker) < 0 ||
        snapshot_cmd(&cmd, s->marker, n->proc_root, n->sys_root, runtime, nranks,
                     SNAPSHOT_LOOP) < 0 ||
        shcmd_line(&cmd, &line) < 0)
        goto fail;
    s->stream = sshio_stream_open(io, buf_str(&line), true, on_line, on_event, s);
    if (!s->stream)
        goto fail;
    if (s->sock_state == SOCK_FIND) {
        pthread_mutex_lock(&s->mu);
        helper_kick(s, TASK_FIND);
        pthread_mutex_unlock(&s->mu);
    }
    shcmd_free(&cmd);
    buf_free(&line);
    return s;
fail:
    shcmd_free(&cmd);
    buf_free(&line);
    sampler_stop(s);
    return NULL;
}

static int fail_unreachable(struct sampler *s, struct snapshot *out, const char *fallback)
{
    memset(out, 0, sizeof *out);
    char why[sizeof out->error];
    bool up = node_reachable(s->n, NULL, why, sizeof why);
    snprintf(out->error, sizeof out->error, "%s", !up && why[0] ? why : fallback);
    return -1;
}

int sampler_request(struct sampler *s, int timeout_ms, struct snapshot *out)
{
    return sampler_request_opt(s, timeout_ms, false, out);
}

/* Writes trigger and waits for the frame it asks, until deadline: the
 * stream's part of a request. *seq: the frame's number (0 when none came).
 * need_ct: only a frame with the containers will do (the CLI's fallback:
 * a lite trigger sent twice, once more when the stream came up, brings a
 * second lite frame first). */
static int wait_frame(struct sampler *s, const char *trigger, bool lite, bool late_ok,
                      bool need_ct, long long deadline, struct snapshot *out, uint64_t *seq)
{
    struct sshio *io = node_io(s->n);
    *seq = 0;
    pthread_mutex_lock(&s->mu);
    uint64_t want = s->seq + 1, ups = s->ups;
    /* a request still on its way is waited for, not asked again: triggers
     * would pile up in a session that hangs */
    /* a full request is always sent: the pending one may be a lite one,
     * without the containers the caller wants fresh */
    bool send = !late_ok || !lite || s->asked < want || s->asked_ups != s->ups;
    if (send) {
        s->asked = want;
        s->asked_ups = s->ups;
    } else {
        want = s->asked;
    }
    pthread_mutex_unlock(&s->mu);
    /* The trigger is sent again whenever the stream restarts: a trigger
     * written into a session that then broke is lost with it. */
    if (send)
        sshio_stream_write(io, s->stream, trigger, strlen(trigger));
    bool got = false;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        if (s->seq < want && s->ups == ups) {
            struct timespec dl;
            mono_deadline(&dl, 50);
            mono_cond_wait(&s->cv, &s->mu, &dl);
        }
        if (need_ct && s->seq >= want && !s->latest.ct_sampled)
            want = s->seq + 1; /* an earlier trigger's lite frame */
        got = s->seq >= want;
        if (got) {
            *out = s->latest;
            *seq = s->seq;
        }
        bool restarted = s->ups != ups;
        ups = s->ups;
        if (restarted)
            s->asked_ups = ups;
        pthread_mutex_unlock(&s->mu);
        if (got)
            break;
        if (restarted)
            sshio_stream_write(io, s->stream, trigger, strlen(trigger));
        /* a failed connect marks the node down: say so now */
        if (!node_reachable(s->n, NULL, NULL, 0) && !sshio_connected(io))
            return fail_unreachable(s, out, "unreachable");
        if (mono_ms() >= deadline) {
            bool up = late_ok && sshio_connected(io); /* not under s->mu: lock order */
            /* a session not (yet) failed: its connect and sshio's liveness
             * bound how long a first snapshot can stay pending */
            bool alive = late_ok && node_reachable(s->n, NULL, NULL, 0);
            pthread_mutex_lock(&s->mu);
            bool have = up && s->seq > 0 && s->latest.reachable;
            bool first = alive && s->seq == 0;
            if (have) {
                *out = s->latest;
                out->late_s = (int)((mono_ms() - s->latest_at) / 1000);
                if (out->late_s < 1)
                    out->late_s = 1;
            }
            pthread_mutex_unlock(&s->mu);
            if (have)
                return 0;
            int rc = fail_unreachable(s, out, first ? "waiting for its first snapshot"
                                                    : "timed out waiting for a snapshot");
            out->pending = first;
            return rc;
        }
    }
    return out->reachable ? 0 : -1;
}

/* The socket a full request asks, or "" for the CLI: known, not skipped
 * after a failure. A discovery still running is waited for by a request
 * that must be fresh (status), a little; a display's is not. */
static void sock_for(struct sampler *s, bool late_ok, long long deadline, char *out, size_t sz)
{
    out[0] = '\0';
    pthread_mutex_lock(&s->mu);
    if (s->sock_state == SOCK_FIND && !s->helper_busy && mono_ms() >= s->find_after)
        helper_kick(s, TASK_FIND);
    long long until = mono_ms() + SOCK_FIND_WAIT_MS;
    if (until > deadline)
        until = deadline;
    while (!late_ok && s->sock_state == SOCK_FIND && s->helper_busy && mono_ms() < until) {
        struct timespec dl;
        mono_deadline(&dl, 50);
        mono_cond_wait(&s->cv, &s->mu, &dl);
    }
    if (s->sock_state == SOCK_KNOWN && mono_ms() >= s->skip_until)
        snprintf(out, sz, "%s", s->sock);
    pthread_mutex_unlock(&s->mu);
}

/* The ranks asked of the socket, one exchange each, all at once. */
struct asks {
    int n;
    struct strv names;
    struct sshio_unix *u[SNAP_MAX_CONTAINERS];
};

static int asks_start(struct sampler *s, const char *sock, long long deadline, struct asks *a)
{
    struct sshio *io = node_io(s->n);
    runtime_rank_names(&a->names, s->nranks);
    long left = (long)(deadline - mono_ms());
    int ms = left < SOCK_EXCHANGE_MS ? (int)(left > 1 ? left : 1) : SOCK_EXCHANGE_MS;
    for (int i = 0; i < a->names.n && i < SNAP_MAX_CONTAINERS; i++) {
        struct buf req = BUF_INIT, err = BUF_INIT;
        if (engine_inspect_request(&req, a->names.v[i], &err) == 0)
            a->u[i] = sshio_unix_start(io, sock, req.data, req.len, SOCK_ANSWER_MAX, ms, &err);
        buf_free(&req);
        buf_free(&err);
        if (!a->u[i])
            return -1; /* the node is down, or out of memory: the CLI's frame says which */
        a->n = i + 1;
    }
    return 0;
}

/* What the exchanges came to: 0 with the ct section's lines and exit status
 * (as engine_into writes them), or the worst failure: SSHIO_UNIX_REFUSED,
 * SSHIO_UNIX_SILENT (also for an answer that is not the engine's), -1 (the
 * session: no fault of the socket's). Waits until deadline at most. */
static int asks_end(struct sampler *s, const char *sock, long long deadline, struct asks *a,
                    struct buf *lines, int *code)
{
    struct sshio *io = node_io(s->n);
    int worst = 0;
    *code = 0;
    for (int i = 0; i < a->n; i++) {
        struct buf ans = BUF_INIT, err = BUF_INIT;
        sshio_unix_wait(io, a->u[i], deadline);
        int r = sshio_unix_end(io, a->u[i], &ans, &err);
        a->u[i] = NULL;
        if (r == 0) {
            struct container_info c;
            buf_reset(&err);
            r = engine_inspect_answer(sock, a->names.v[i], ans.data ? ans.data : "", ans.len, &c,
                                      &err);
            if (r == ENGINE_NO_ANSWER)
                r = SSHIO_UNIX_SILENT;
            else if (engine_ct_line(lines, a->names.v[i], r, &c, &err))
                *code = 1, r = 0;
            else
                r = 0;
        }
        if (r == SSHIO_UNIX_REFUSED || (r == SSHIO_UNIX_SILENT && worst != SSHIO_UNIX_REFUSED) ||
            (r == -1 && worst == 0))
            worst = r;
        buf_free(&ans);
        buf_free(&err);
    }
    for (int i = a->n; i < SNAP_MAX_CONTAINERS; i++)
        if (a->u[i])
            sshio_unix_end(io, a->u[i], NULL, NULL);
    strv_free(&a->names);
    return worst;
}

static int request(struct sampler *s, int timeout_ms, bool lite, bool late_ok,
                   struct snapshot *out)
{
    if (s->n->local)
        return snapshot_collect_opt(s->n, s->runtime, s->nranks, s->ov, timeout_ms, lite, out);
    long long deadline = mono_ms() + timeout_ms;
    char sock[256] = "";
    if (!lite)
        sock_for(s, late_ok, deadline, sock, sizeof sock);
    struct asks a = {0};
    if (sock[0] && asks_start(s, sock, deadline, &a) < 0) {
        struct buf none = BUF_INIT;
        int code;
        asks_end(s, sock, mono_ms(), &a, &none, &code);
        buf_free(&none);
        sock[0] = '\0';
    }
    /* with the socket asked, the frame needs no containers: the script's
     * lite sample, produced while the engine answers */
    uint64_t seq;
    int rc = wait_frame(s, sock[0] || lite ? "lite\n" : "\n", lite, late_ok, false, deadline,
                        out, &seq);
    if (sock[0]) {
        struct buf lines = BUF_INIT;
        int code;
        int worst = asks_end(s, sock, deadline, &a, &lines, &code);
        bool fresh = rc == 0 && seq && !out->late_s;
        if (worst == 0 && out->reachable) {
            snapshot_apply_ct(out, buf_str(&lines), code);
            pthread_mutex_lock(&s->mu);
            if (seq && s->seq == seq)
                snapshot_apply_ct(&s->latest, buf_str(&lines), code); /* a late one has them */
            pthread_mutex_unlock(&s->mu);
        } else if (worst == SSHIO_UNIX_REFUSED || (worst == SSHIO_UNIX_SILENT && fresh)) {
            /* the socket's fault (the session brought the frame): the CLI
             * for a while, and now if the request's time allows */
            pthread_mutex_lock(&s->mu);
            s->skip_until = mono_ms() + SOCK_SKIP_MS;
            if (worst == SSHIO_UNIX_REFUSED)
                helper_kick(s, TASK_CHECK);
            pthread_mutex_unlock(&s->mu);
            struct snapshot *full = malloc(sizeof *full);
            if (full && rc == 0 && wait_frame(s, "\n", false, false, true, deadline, full, &seq) == 0)
                *out = *full;
            free(full);
            /* a fresh request waits for the check's word (one command) */
            pthread_mutex_lock(&s->mu);
            while (!late_ok && worst == SSHIO_UNIX_REFUSED && s->helper_busy &&
                   mono_ms() < deadline) {
                struct timespec dl;
                mono_deadline(&dl, 50);
                mono_cond_wait(&s->cv, &s->mu, &dl);
            }
            pthread_mutex_unlock(&s->mu);
        }
        /* else the session was slow or down: the frame says so, the socket
         * is not blamed, and the request is no longer for it */
        buf_free(&lines);
    }
    pthread_mutex_lock(&s->mu);
    if (out->reachable)
        snprintf(out->engine_note, sizeof out->engine_note, "%s", s->note);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int sampler_request_opt(struct sampler *s, int timeout_ms, bool lite, struct snapshot *out)
{
    return request(s, timeout_ms, lite, false, out);
}

int sampler_sample(struct sampler *s, int wait_ms, bool lite, struct snapshot *out)
{
    return request(s, wait_ms, lite, true, out);
}

void sampler_stop(struct sampler *s)
{
    if (!s)
        return;
    atomic_store(&s->cancel, 1);
    pthread_mutex_lock(&s->mu);
    bool join = s->helper_on;
    s->helper_on = false;
    pthread_mutex_unlock(&s->mu);
    if (join)
        pthread_join(s->helper, NULL); /* its command gives up within ~200 ms */
    if (s->stream)
        sshio_stream_close(node_io(s->n), s->stream);
    buf_free(&s->frame);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
