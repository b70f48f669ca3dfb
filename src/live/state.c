#include "state.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int state_init(struct state *s)
{
    memset(s, 0, sizeof *s);
    s->wake[0] = s->wake[1] = -1;
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        return -1;
    /* non-blocking both ways: a full pipe already means "wake up" */
    if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0 || logbuf_init(&s->messages, 500, 1 << 20) < 0) {
        state_free(s);
        return -1;
    }
    for (int i = 0; i < CLUSTER_MAX_NODES; i++)
        if (logbuf_init(&s->ranks[i].log, STATE_LOG_LINES, STATE_LOG_BYTES) < 0) {
            state_free(s);
            return -1;
        }
    s->next_job_id = 1;
    return 0;
}

void state_free(struct state *s)
{
    for (int i = 0; i < CLUSTER_MAX_NODES; i++)
        logbuf_free(&s->ranks[i].log);
    for (int i = 0; i < STATE_JOBS; i++)
        logbuf_free(&s->jobs[i].out);
    logbuf_free(&s->messages);
    for (int k = 0; k < 2; k++)
        if (s->wake[k] >= 0)
            close(s->wake[k]);
    s->wake[0] = s->wake[1] = -1;
    pthread_mutex_destroy(&s->mu);
}

void state_lock(struct state *s)
{
    pthread_mutex_lock(&s->mu);
}

void state_unlock(struct state *s)
{
    pthread_mutex_unlock(&s->mu);
}

void state_changed(struct state *s)
{
    __atomic_add_fetch(&s->version, 1, __ATOMIC_RELEASE);
    /* one byte per wake-up, not per change: a log flood costs no syscalls */
    if (__atomic_exchange_n(&s->wake_pending, 1, __ATOMIC_ACQ_REL))
        return;
    char b = 1;
    ssize_t n = write(s->wake[1], &b, 1);
    (void)n; /* EAGAIN: the pipe is full, the UI is woken anyway */
}

void state_drain_wake(struct state *s)
{
    char b[256];
    __atomic_store_n(&s->wake_pending, 0, __ATOMIC_RELEASE);
    while (read(s->wake[0], b, sizeof b) > 0) {
    }
}

void state_say(struct state *s, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamped[300];
    int n = snprintf(stamped, sizeof stamped, "%02d:%02d:%02d %s", tm.tm_hour, tm.tm_min,
                     tm.tm_sec, line);
    state_lock(s);
    logbuf_push(&s->messages, stamped, (size_t)n);
    text_clean(s->status_line, sizeof s->status_line, line, strlen(line));
    s->status_at = now;
    state_unlock(s);
    state_changed(s);
}

float state_hist(const float *ring, unsigned nhist, unsigned back)
{
    if (back >= nhist || back >= STATE_HIST)
        return NAN;
    return ring[(nhist - 1 - back) % STATE_HIST];
}

void state_hist_push(float *ring, unsigned *nhist, float v)
{
    ring[*nhist % STATE_HIST] = v;
    (*nhist)++;
}

struct state_rank *state_rank_find(struct state *s, int rank)
{
    for (int i = 0; i < s->nranks; i++)
        if (s->ranks[i].rank == rank)
            return &s->ranks[i];
    return NULL;
}
