#include "sampler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mono.h"

#define FRAME_MAX (8u << 20)

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

static int request(struct sampler *s, int timeout_ms, bool lite, bool late_ok,
                   struct snapshot *out)
{
    if (s->n->local)
        return snapshot_collect_opt(s->n, s->runtime, s->nranks, s->ov, timeout_ms, lite, out);
    const char *trigger = lite ? "lite\n" : "\n";
    struct sshio *io = node_io(s->n);
    long long deadline = mono_ms() + timeout_ms;
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
            mono_deadline(&dl, CLOCK_REALTIME, 50);
            pthread_cond_timedwait(&s->cv, &s->mu, &dl);
        }
        got = s->seq >= want;
        if (got)
            *out = s->latest;
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
            pthread_mutex_lock(&s->mu);
            bool have = up && s->seq > 0 && s->latest.reachable;
            if (have) {
                *out = s->latest;
                out->late_s = (int)((mono_ms() - s->latest_at) / 1000);
                if (out->late_s < 1)
                    out->late_s = 1;
            }
            pthread_mutex_unlock(&s->mu);
            if (have)
                return 0;
            return fail_unreachable(s, out, "timed out waiting for a snapshot");
        }
    }
    return out->reachable ? 0 : -1;
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
    if (s->stream)
        sshio_stream_close(node_io(s->n), s->stream);
    buf_free(&s->frame);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
