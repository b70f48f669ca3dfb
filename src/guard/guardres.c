/* The guard's resolver: the runtime CLI runs in a thread of its own - the
 * inspect that finds the ranks' PIDs, and the kill that cleans up after a
 * firing - so the loop that samples and kills never waits on it. Under
 * memory pressure the CLI is slowest exactly when the guard must act; a
 * resolve used to stop the sampling for as long as the CLI took (up to its
 * 10 s timeout). The thread touches nothing of the guard but its own
 * request and result, under its mutex; the loop applies a result (opens
 * the pidfds) and logs what the thread said. */
#include "guard.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

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
        pthread_mutex_unlock(&r->mu);
        char out[1024] = "";
        struct guard_rank ranks[GUARD_MAX_RANKS];
        int n = -1, rc;
        if (job == RES_INSPECT) {
            n = guard_inspect(g, ranks, out, sizeof out);
        } else {
            static const char *const verb[] = {"kill", NULL};
            rc = guard_runtime_run(g, verb, out, sizeof out, 30000);
            snprintf(out, sizeof out, "runtime kill of the ranks: exit %d", rc);
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

static bool ask(struct guard *g, enum res_job job)
{
    struct guard_res *r = g->res;
    if (!r)
        return false;
    pthread_mutex_lock(&r->mu);
    /* a kill waits for no inspect: it replaces one not yet begun */
    bool taken = r->want == RES_NONE || job == RES_KILL;
    if (taken) {
        r->want = job;
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
    return idle && ask(g, RES_INSPECT);
}

bool guard_resolver_kill(struct guard *g)
{
    return ask(g, RES_KILL);
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
