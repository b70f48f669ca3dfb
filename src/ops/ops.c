#include "ops.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert.h"
#include "events.h"
#include "job.h"
#include "mono.h"
#include "opsfiles.h"
#include "promtext.h"
#include "strv.h"
#include "supervise.h"

#define TICK_MS 250
#define FILES_EVERY_S 5.0

struct ops {
    const struct config *c;
    struct state *s;
    struct alerter *alerts;
    struct supervisor *sv;
    struct strv base; /* the jobs' global options, until job.c copied them */
    pthread_t th;
    pthread_mutex_t mu; /* files, counts, stop */
    pthread_cond_t cv;
    bool stop;
    struct opsfiles files;
    struct ops_counts counts;
    uint64_t next;     /* the ops thread's: the next event */
    char accept_last[200];
    bool accept_seen;
};

/* The files, and a new acceptance verdict as an event. */
static void refresh_files(struct ops *o)
{
    struct opsfiles *f = malloc(sizeof *f);
    if (!f)
        return;
    opsfiles_load(o->c, f);
    if (o->accept_seen && f->accept_last[0] && strcmp(f->accept_last, o->accept_last) != 0) {
        char what[300];
        snprintf(what, sizeof what, "acceptance: %s", f->accept_last);
        events_push(o->s, "acceptance", NULL, NULL, what);
    }
    o->accept_seen = true;
    snprintf(o->accept_last, sizeof o->accept_last, "%s", f->accept_last);
    pthread_mutex_lock(&o->mu);
    o->files = *f;
    pthread_mutex_unlock(&o->mu);
    free(f);
}

static void take_events(struct ops *o)
{
    struct state_event ev[8];
    int n;
    uint64_t lost = 0;
    while ((n = events_read(o->s, &o->next, EVENTS_SETTLE_S, ev, 8, &lost)) > 0) {
        for (int i = 0; i < n; i++) {
            supervise_event(o->sv, &ev[i]); /* first: the alert says what it did */
            alert_post(o->alerts, &ev[i]);
            int k = events_kind_index(ev[i].kind), node = -1;
            if (k >= 0 && k == events_kind_index("guard-fired")) { /* counted by node */
                state_lock(o->s);
                for (int j = 0; j < o->s->nnodes && j < CLUSTER_MAX_NODES; j++)
                    if (strcmp(o->s->nodes[j].name, ev[i].node) == 0)
                        node = j;
                state_unlock(o->s);
            }
            pthread_mutex_lock(&o->mu);
            if (k >= 0)
                o->counts.events[k]++;
            if (node >= 0)
                o->counts.guard_firings[node]++;
            pthread_mutex_unlock(&o->mu);
        }
    }
    if (lost)
        state_say(o->s, "ops: %llu event(s) passed before they were read", (unsigned long long)lost);
}

static void *ops_thread(void *arg)
{
    struct ops *o = arg;
    double files_at = 0;
    pthread_mutex_lock(&o->mu);
    while (!o->stop) {
        pthread_mutex_unlock(&o->mu);
        take_events(o);
        supervise_step(o->sv);
        if (mono_s() >= files_at) {
            refresh_files(o);
            files_at = mono_s() + FILES_EVERY_S;
        }
        pthread_mutex_lock(&o->mu);
        struct timespec dl;
        mono_deadline(&dl, TICK_MS);
        if (!o->stop)
            mono_cond_wait(&o->cv, &o->mu, &dl);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* The jobs (a relaunch's stop and launch) run with the options this process
 * got: its config file and its --set values (the environment they inherit). */
static void base_args(struct ops *o)
{
    if (o->c->file) {
        strv_add(&o->base, "--config");
        strv_add(&o->base, o->c->file);
    }
    for (int i = 0; i < o->c->count; i++)
        if (o->c->values[i].source == CONFIG_SRC_FLAG && config_is_secret(o->c->values[i].key)) {
            /* never on a command line: the child reads it where it lives */
            state_say(o->s, "%s from --set is not passed on to a relaunch's jobs: put it in the "
                            "config file (mode 0600)",
                      o->c->values[i].key);
        } else if (o->c->values[i].source == CONFIG_SRC_FLAG) {
            strv_add(&o->base, "--set");
            strv_addf(&o->base, "%s=%s", o->c->values[i].key, o->c->values[i].value);
        }
    job_set_base_args(o->base.v, o->base.n); /* copied there */
    strv_free(&o->base);
}

int ops_start(const struct config *c, struct state *s, bool supervise, struct ops **out,
              struct buf *err)
{
    *out = NULL;
    struct ops *o = calloc(1, sizeof *o);
    if (!o) {
        buf_puts(err, "out of memory");
        return -1;
    }
    o->c = c;
    o->s = s;
    o->counts.started = (double)time(NULL);
    if (alert_start(c, s, &o->alerts, err) < 0) {
        free(o);
        return -1;
    }
    if (supervise) {
        size_t before = err->len;
        o->sv = supervise_start(c, s, err);
        if (!o->sv && err->len > before) {
            alert_stop(o->alerts);
            free(o);
            return -1;
        }
        o->counts.supervise = o->sv != NULL;
    }
    base_args(o);
    /* events from before this process are not ours to act on */
    state_lock(s);
    o->next = s->events_end;
    state_unlock(s);
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    if (pthread_create(&o->th, NULL, ops_thread, o) != 0) {
        buf_puts(err, "cannot start the ops thread");
        pthread_mutex_destroy(&o->mu);
        pthread_cond_destroy(&o->cv);
        supervise_stop(o->sv);
        alert_stop(o->alerts);
        strv_free(&o->base);
        free(o);
        return -1;
    }
    *out = o;
    return 0;
}

void ops_render(struct ops *o, struct buf *out)
{
    struct ops_counts k;
    struct opsfiles *f = malloc(sizeof *f);
    if (!f)
        return;
    pthread_mutex_lock(&o->mu);
    k = o->counts;
    *f = o->files;
    pthread_mutex_unlock(&o->mu);
    alert_stats(o->alerts, &k.alerts_sent, &k.alerts_failed, &k.alerts_dropped);
    state_lock(o->s);
    promtext_render(o->s, f, &k, out);
    state_unlock(o->s);
    free(f);
}

void ops_stop(struct ops *o)
{
    if (!o)
        return;
    pthread_mutex_lock(&o->mu);
    o->stop = true;
    pthread_cond_signal(&o->cv);
    pthread_mutex_unlock(&o->mu);
    pthread_join(o->th, NULL);
    /* what settled meanwhile is still told, but nothing more is started:
     * the jobs are cut at exit (job_shutdown) */
    supervise_stop(o->sv);
    o->sv = NULL;
    take_events(o);
    alert_stop(o->alerts);
    strv_free(&o->base);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o);
}
