/* dlview: see dlview.h. */
#include "dlview.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assemble.h"
#include "mono.h"

/* polls the rate is taken over: long enough to smooth a state file saved in
 * steps, short enough to follow a change of speed */
#define RATE_WINDOW 5

struct dlview {
    struct state *s;
    char dir[512];
    int interval_ms;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    /* the last polls: when, and the bytes done */
    double t[RATE_WINDOW];
    int64_t done[RATE_WINDOW];
    int nwin;
    char commit[41];
    /* which files were verified at the last poll, to see which became so */
    char **was_verified;
    int nwas;
};

void dlview_summarize(const struct dl_state *st, struct state_download *d)
{
    d->total = d->done = 0;
    d->files = st->n;
    d->verified = 0;
    d->ninflight = 0;
    for (int i = 0; i < st->n; i++) {
        const struct dl_state_file *f = &st->f[i];
        int64_t landed = f->verified ? f->size : ranges_count(&f->landed, 0, f->size);
        d->total += f->size;
        d->done += landed;
        d->verified += f->verified;
        if (f->verified || landed == 0)
            continue;
        /* the files in flight with the most still to come first: those are
         * what the ETA waits on, and a pane of a few rows shows them (with
         * many connections every file is in flight at once, and in listing
         * order the big shards would show only in the last seconds) */
        int64_t left = f->size - landed;
        int at = d->ninflight;
        while (at > 0 && d->inflight[at - 1].size - d->inflight[at - 1].done < left)
            at--;
        if (at == STATE_DL_FILES)
            continue;
        int moved = (d->ninflight < STATE_DL_FILES ? d->ninflight : STATE_DL_FILES - 1) - at;
        memmove(&d->inflight[at + 1], &d->inflight[at], (size_t)moved * sizeof d->inflight[0]);
        if (d->ninflight < STATE_DL_FILES)
            d->ninflight++;
        struct state_dl_file *o = &d->inflight[at];
        snprintf(o->path, sizeof o->path, "%s", f->path);
        o->size = f->size;
        o->done = landed;
        o->parts = f->parts;
        o->hashing = landed == f->size;
    }
    snprintf(d->repo, sizeof d->repo, "%s", st->repo);
    snprintf(d->commit, sizeof d->commit, "%s", st->commit);
}

static bool was_verified(const struct dlview *v, const char *path)
{
    for (int i = 0; i < v->nwas; i++)
        if (strcmp(v->was_verified[i], path) == 0)
            return true;
    return false;
}

static void forget_verified(struct dlview *v)
{
    for (int i = 0; i < v->nwas; i++)
        free(v->was_verified[i]);
    free(v->was_verified);
    v->was_verified = NULL;
    v->nwas = 0;
}

/* The files verified since the last poll go to the front of d's list; the
 * first poll only learns what is verified already. */
static void note_verified(struct dlview *v, const struct dl_state *st, bool first,
                          struct state_download *d)
{
    char **now = calloc((size_t)st->n + 1, sizeof *now);
    int n = 0;
    for (int i = 0; i < st->n && now; i++) {
        if (!st->f[i].verified)
            continue;
        if (!first && !was_verified(v, st->f[i].path)) {
            memmove(d->verified_last[1], d->verified_last[0], sizeof d->verified_last[0] * 3);
            snprintf(d->verified_last[0], sizeof d->verified_last[0], "%s", st->f[i].path);
            if (d->nverified_last < 4)
                d->nverified_last++;
        }
        now[n] = strdup(st->f[i].path);
        n += now[n] != NULL;
    }
    forget_verified(v);
    v->was_verified = now;
    v->nwas = n;
}

/* The rate over the window, also the graph's point (MB/s; NAN while nothing
 * runs): a single poll's step would show the state file's saving cadence,
 * not the transfer. A download that went back (--fresh, another commit)
 * starts the window again. */
static void note_rate(struct dlview *v, double t, int64_t done, bool running,
                      struct state_download *d)
{
    if (v->nwin && done < v->done[v->nwin - 1])
        v->nwin = 0;
    if (v->nwin == RATE_WINDOW) {
        memmove(v->t, v->t + 1, sizeof v->t[0] * (RATE_WINDOW - 1));
        memmove(v->done, v->done + 1, sizeof v->done[0] * (RATE_WINDOW - 1));
        v->nwin--;
    }
    v->t[v->nwin] = t;
    v->done[v->nwin++] = done;
    d->rate.ok = running && v->nwin >= 2 && t > v->t[0];
    d->rate.v = d->rate.ok ? (double)(done - v->done[0]) / (t - v->t[0]) : 0;
    if (!running)
        v->nwin = 0;
    state_hist_push(d->hist_rate, &d->nhist_rate, d->rate.ok ? (float)(d->rate.v / 1e6) : NAN);
}

/* assemble's journals under the directory, and the shards still in parts */
static void note_assemble(const char *dir, struct state_download *d)
{
    char **shards;
    int n;
    struct buf err = BUF_INIT;
    d->nrebuild = d->in_parts = 0;
    if (assemble_find(dir, &shards, &n, &err) == 0) {
        for (int i = 0; i < n; i++) {
            int64_t w, total;
            if (assemble_progress(dir, shards[i], &w, &total) == 0 && d->nrebuild < 4) {
                struct state_dl_file *o = &d->rebuild[d->nrebuild++];
                snprintf(o->path, sizeof o->path, "%s", shards[i]);
                o->done = w;
                o->size = total;
            } else {
                d->in_parts++;
            }
            free(shards[i]);
        }
        free(shards);
    }
    buf_free(&err);
}

static void poll_once(struct dlview *v)
{
    struct dl_state st = {0};
    struct buf err = BUF_INIT;
    long pid = dl_state_lock_holder(v->dir);
    int rc = dl_state_load(v->dir, &st, &err);
    double now = mono_s();
    struct state *s = v->s;
    state_lock(s);
    struct state_download *d = &s->download;
    bool was_shown = d->shown;
    snprintf(d->dir, sizeof d->dir, "%s", v->dir);
    d->pid = pid;
    d->have = rc == 0;
    snprintf(d->error, sizeof d->error, "%s", rc < 0 ? buf_str(&err) : "");
    if (rc == 0) {
        bool first = strcmp(v->commit, st.commit) != 0;
        if (first) { /* another download here: nothing of the last one's counts */
            d->nverified_last = 0;
            v->nwin = 0;
            snprintf(v->commit, sizeof v->commit, "%s", st.commit);
        }
        dlview_summarize(&st, d);
        note_verified(v, &st, first, d);
        note_rate(v, now, d->done, pid != 0, d);
    } else {
        d->files = d->verified = d->ninflight = 0;
        d->total = d->done = 0;
        d->rate.ok = false;
    }
    note_assemble(v->dir, d);
    d->shown = pid != 0 || (rc == 0 && d->verified < d->files) || rc < 0 || d->nrebuild > 0;
    bool shown = d->shown;
    state_unlock(s);
    if (shown || was_shown)
        state_changed(s);
    dl_state_free(&st);
    buf_free(&err);
}

static void *dlview_thread(void *arg)
{
    struct dlview *v = arg;
    pthread_mutex_lock(&v->mu);
    while (!v->stop) {
        pthread_mutex_unlock(&v->mu);
        poll_once(v);
        pthread_mutex_lock(&v->mu);
        struct timespec dl;
        mono_deadline(&dl, v->interval_ms);
        while (!v->stop)
            if (mono_cond_wait(&v->cv, &v->mu, &dl) != 0)
                break;
    }
    pthread_mutex_unlock(&v->mu);
    return NULL;
}

struct dlview *dlview_start(const struct config *c, struct state *s, int interval_ms)
{
    struct dlview *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->s = s;
    snprintf(v->dir, sizeof v->dir, "%s", config_str(c, CFG_MODEL_DIR));
    v->interval_ms = interval_ms < 200 ? 200 : interval_ms > 2000 ? 2000 : interval_ms;
    pthread_mutex_init(&v->mu, NULL);
    pthread_cond_init(&v->cv, NULL);
    if (pthread_create(&v->th, NULL, dlview_thread, v) != 0) {
        free(v);
        return NULL;
    }
    return v;
}

void dlview_stop(struct dlview *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&v->mu);
    v->stop = true;
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
    pthread_join(v->th, NULL);
    pthread_mutex_destroy(&v->mu);
    pthread_cond_destroy(&v->cv);
    forget_verified(v);
    free(v);
}
