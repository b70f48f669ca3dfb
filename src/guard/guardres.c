/* The guard's resolver: the runtime CLI runs in a thread of its own - the
 * inspect that finds the ranks' PIDs, and the kill that cleans up after a
 * firing - so the loop that samples and kills never waits on it. Under
 * memory pressure the CLI is slowest exactly when the guard must act; a
 * resolve used to stop the sampling for as long as the CLI took (up to its
 * 10 s timeout). The thread touches nothing of the guard but its own
 * request and result, under its mutex; the loop applies a result (opens
 * the pidfds) and logs what the thread said. */
#include "guard.h"
#include "mono.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum res_job { RES_NONE, RES_INSPECT, RES_KILL };

struct guard_res {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    enum res_job want, busy;
    /* a finished inspect, for the loop */
    bool have;
    struct guard_rank ranks[GUARD_MAX_RANKS];
    int n;
    bool ok; /* the CLI answered */
    char said[200]; /* a line for the log, from the thread ("" none) */
    /* a kill's wait: copies of the killed ranks' pidfds, the thread's to close */
    int dying[GUARD_MAX_RANKS];
    int ndying;
};

static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* Until every one of the n pidfds is readable (its rank has exited) or
 * GUARD_KILL_WAIT_MS passed; closes them. The runtime's CLI is a cleanup
 * for the ranks the guard killed itself, and it is a CPU-hungry start
 * (podman, docker: ~20 ms of CPU) that competes with the dying ranks for a
 * core: the ranks' nice -20 counts only within their own cgroup, and the
 * CLI runs in the guard's. Traced on the 2-core test VM under load
 * (2026-12-07): a rank's last thread, woken from its exit's RCU wait, sat
 * 15 ms behind the CLI started at the kill. The number still alive at the
 * end. */
static int wait_dying(int *fds, int n)
{
    long long until = mono_ms() + GUARD_KILL_WAIT_MS;
    struct pollfd p[GUARD_MAX_RANKS];
    int alive = n;
    for (int i = 0; i < n; i++)
        p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    for (long long left; alive > 0 && (left = until - mono_ms()) > 0;) {
        int r = poll(p, (nfds_t)n, (int)left);
        if (r < 0 && errno == EINTR) /* a signal to the guard: wait on */
            continue;
        if (r < 0)
            break;
        alive = 0;
        for (int i = 0; i < n; i++) {
            if (p[i].revents)
                p[i].fd = -1; /* exited: poll skips it from now on */
            alive += p[i].fd >= 0;
        }
    }
    close_all(fds, n);
    return alive;
}

static void *res_thread(void *arg)
{
    struct guard *g = arg;
    struct guard_res *r = g->res;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (r->want == RES_NONE && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->stop)
            break;
        enum res_job job = r->busy = r->want;
        r->want = RES_NONE;
        int dying[GUARD_MAX_RANKS], ndying = job == RES_KILL ? r->ndying : 0;
        memcpy(dying, r->dying, sizeof dying[0] * (size_t)ndying);
        r->ndying -= ndying;
        pthread_mutex_unlock(&r->mu);
        char out[1024] = "";
        struct guard_rank ranks[GUARD_MAX_RANKS];
        int n = -1, rc;
        if (job == RES_INSPECT) {
            n = guard_inspect(g, ranks, out, sizeof out);
        } else {
            static const char *const verb[] = {"kill", NULL};
            long long t0 = mono_ms();
            int alive = ndying ? wait_dying(dying, ndying) : 0;
            long long waited = mono_ms() - t0;
            rc = guard_runtime_run(g, verb, out, sizeof out, 30000);
            if (!ndying)
                snprintf(out, sizeof out, "runtime kill of the ranks: exit %d", rc);
            else if (!alive)
                snprintf(out, sizeof out,
                         "runtime kill of the ranks: exit %d (after the killed ranks had exited, "
                         "%lld ms%s)",
                         rc, waited, rc > 0 ? ": a container already stopped answers non-zero" : "");
            else
                snprintf(out, sizeof out,
                         "runtime kill of the ranks: exit %d (%d killed rank(s) still there "
                         "after %lld ms)",
                         rc, alive, waited);
        }
        pthread_mutex_lock(&r->mu);
        r->busy = RES_NONE;
        if (job == RES_INSPECT) {
            r->have = true;
            r->ok = n >= 0;
            r->n = n < 0 ? 0 : n;
            memcpy(r->ranks, ranks, sizeof ranks[0] * (size_t)r->n);
        } else {
            snprintf(r->said, sizeof r->said, "%.*s", (int)sizeof r->said - 1, out);
        }
    }
    close_all(r->dying, r->ndying);
    r->ndying = 0;
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int guard_resolver_start(struct guard *g)
{
    if (!g->o.runtime[0] || g->res)
        return 0;
    struct guard_res *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    g->res = r;
    if (pthread_create(&r->th, NULL, res_thread, g) != 0) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        free(r);
        g->res = NULL;
        return -1;
    }
    return 0;
}

/* dying, n: a kill's pidfds, copied for the thread (a kill asked again
 * before the thread took the last one replaces its copies) */
static bool ask(struct guard *g, enum res_job job, const int *dying, int n)
{
    struct guard_res *r = g->res;
    if (!r)
        return false;
    pthread_mutex_lock(&r->mu);
    /* a kill waits for no inspect: it replaces one not yet begun */
    bool taken = r->want == RES_NONE || job == RES_KILL;
    if (taken) {
        r->want = job;
        if (job == RES_KILL) {
            close_all(r->dying, r->ndying);
            r->ndying = 0;
            for (int i = 0; i < n && i < GUARD_MAX_RANKS; i++) {
                int fd = fcntl(dying[i], F_DUPFD_CLOEXEC, 0);
                if (fd < 0) { /* none to wait on: the cleanup goes at once */
                    close_all(r->dying, r->ndying);
                    r->ndying = 0;
                    break;
                }
                r->dying[r->ndying++] = fd;
            }
        }
        pthread_cond_signal(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    return taken;
}

bool guard_resolver_inspect(struct guard *g)
{
    struct guard_res *r = g->res;
    if (!r)
        return false;
    pthread_mutex_lock(&r->mu);
    bool idle = r->busy == RES_NONE && r->want == RES_NONE;
    pthread_mutex_unlock(&r->mu);
    return idle && ask(g, RES_INSPECT, NULL, 0);
}

bool guard_resolver_kill(struct guard *g, const int *dying, int n)
{
    return ask(g, RES_KILL, dying, n);
}

void guard_resolver_take(struct guard *g)
{
    struct guard_res *r = g->res;
    if (!r)
        return;
    struct guard_rank ranks[GUARD_MAX_RANKS];
    int n = 0;
    bool have = false, ok = false;
    char said[200];
    pthread_mutex_lock(&r->mu);
    if (r->have) {
        have = true;
        ok = r->ok;
        n = r->n;
        memcpy(ranks, r->ranks, sizeof ranks[0] * (size_t)n);
        r->have = false;
    }
    snprintf(said, sizeof said, "%s", r->said);
    r->said[0] = '\0';
    pthread_mutex_unlock(&r->mu);
    if (said[0])
        guard_log(g, "%s", said);
    /* a CLI that did not answer changes nothing: the PIDs known stay */
    if (have && ok)
        guard_set_ranks(g, ranks, n);
}

void guard_resolver_stop(struct guard *g)
{
    struct guard_res *r = g->res;
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->th, NULL); /* a CLI in flight ends by its own timeout */
    guard_resolver_take(g);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
    g->res = NULL;
}
