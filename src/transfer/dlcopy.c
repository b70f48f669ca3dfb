/* dlcopy: see dlcopy.h. */
#include "dlcopy.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "fixstr.h"
#include "progress.h"
#include "text.h"
#include "wire.h"
#include "xfer_peer.h"

struct worker {
    struct dlcopy *d;
    struct cluster_node *cn;
    pthread_t th;
    bool started;
    int rc;
    int64_t landed, need;
};

struct dlcopy {
    const struct config *c;
    const char *dir;
    int streams;
    const atomic_int *cancel;
    struct cluster cl;
    struct xfer_plan plan;
    _Atomic int *ready;
    struct worker w[CLUSTER_MAX_NODES];
    int nw;
    pthread_mutex_t mu; /* stdout and the figures */
};

static void on_text(void *arg, const char *line)
{
    struct worker *w = arg;
    pthread_mutex_lock(&w->d->mu);
    printf("%s: %s\n", w->cn->name, line);
    fflush(stdout);
    pthread_mutex_unlock(&w->d->mu);
}

static void on_file(void *arg, const char *path, int64_t size)
{
    struct worker *w = arg;
    (void)size;
    char clean[1024];
    text_clean(clean, sizeof clean, path, strlen(path));
    pthread_mutex_lock(&w->d->mu);
    printf("COPIED      %s to %s\n", clean, w->cn->name);
    fflush(stdout);
    pthread_mutex_unlock(&w->d->mu);
}

static void on_tick(void *arg, const struct xfer_peer_progress *p)
{
    struct worker *w = arg;
    pthread_mutex_lock(&w->d->mu);
    w->landed = p->landed;
    w->need = p->need;
    pthread_mutex_unlock(&w->d->mu);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct dlcopy *d = w->d;
    struct xfer_peer_out out = {.text = on_text, .file = on_file, .tick = on_tick, .arg = w};
    struct buf err = BUF_INIT;
    int r = xfer_peer_run(d->c, w->cn, d->dir, &d->plan, d->ready, d->streams, false, d->cancel,
                          &out, &err);
    if (r < 0)
        on_text(w, buf_str(&err));
    w->rc = r == 0 ? 0 : 1;
    buf_free(&err);
    return NULL;
}

/* The copy's plan from the download's: each output with the sha256 the hub
 * or the manifest gives, a small file with the hub's git sha1 (checked on
 * the worker beside the sum the head sends). The time is not known yet (-1:
 * the worker's file keeps its own). */
static int plan_of(const struct dl_plan *p, struct xfer_plan *x)
{
    for (int i = 0; i < p->n; i++) {
        const struct dl_output *o = &p->o[i];
        unsigned char sha[32];
        const char *q = dl_output_sha256(o);
        bool has = q[0] && wire_hex32(&q, sha, true);
        if (xfer_plan_add(x, o->path, o->size, -1, has ? sha : NULL) < 0)
            return -1;
        const char *g = dl_output_git_sha1(o);
        struct xfer_file *f = &x->f[x->n - 1];
        f->has_git = !has && g[0] && wire_hex(&g, f->git, 20, true);
    }
    return 0;
}

struct dlcopy *dlcopy_start(const struct config *c, const struct dl_plan *plan, const char *dir,
                            int streams, const atomic_int *cancel, struct buf *err)
{
    struct dlcopy *d = calloc(1, sizeof *d);
    if (!d || plan_of(plan, &d->plan) < 0 ||
        !(d->ready = calloc((size_t)(plan->n ? plan->n : 1), sizeof *d->ready))) {
        buf_puts(err, "out of memory");
        if (d)
            xfer_plan_free(&d->plan);
        free(d);
        return NULL;
    }
    d->c = c;
    d->dir = dir;
    d->streams = streams;
    d->cancel = cancel;
    pthread_mutex_init(&d->mu, NULL);
    if (cluster_open(c, &d->cl, err) < 0) {
        xfer_plan_free(&d->plan);
        free(d->ready);
        free(d);
        return NULL;
    }
    for (int i = 0; i < d->cl.n; i++) {
        struct cluster_node *cn = &d->cl.nodes[i];
        if (cn->node.local || !cn->configured)
            continue;
        struct worker *w = &d->w[d->nw];
        w->d = d;
        w->cn = cn;
        w->started = pthread_create(&w->th, NULL, worker_main, w) == 0;
        w->rc = w->started ? 0 : 1;
        d->nw++;
    }
    if (!d->nw) {
        buf_puts(err, "--to-workers: no worker is configured (set WORKER)");
        dlcopy_finish(d);
        return NULL;
    }
    return d;
}

void dlcopy_ready(struct dlcopy *d, const char *path)
{
    for (int i = 0; i < d->plan.n; i++)
        if (strcmp(d->plan.f[i].path, path) == 0)
            atomic_store(&d->ready[i], XFER_READY);
}

void dlcopy_status(struct dlcopy *d, char *out, size_t n)
{
    size_t at = 0;
    out[0] = '\0';
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->nw && at + 1 < n; i++) {
        char a[32], b[32];
        progress_bytes(a, sizeof a, (double)d->w[i].landed);
        progress_bytes(b, sizeof b, (double)d->w[i].need);
        fixstr_appendf(out, n, &at, "%s%s %s of %s", i ? ", " : "", d->w[i].cn->name, a,
                       d->w[i].need ? b : "?");
    }
    pthread_mutex_unlock(&d->mu);
}

int dlcopy_finish(struct dlcopy *d)
{
    if (!d)
        return 1;
    for (int i = 0; i < d->plan.n; i++) /* what the download did not bring is not coming */
        if (atomic_load(&d->ready[i]) != XFER_READY)
            atomic_store(&d->ready[i], XFER_NEVER);
    int rc = 0;
    for (int i = 0; i < d->nw; i++) {
        if (d->w[i].started)
            pthread_join(d->w[i].th, NULL);
        rc |= d->w[i].rc;
    }
    cluster_close(&d->cl);
    xfer_plan_free(&d->plan);
    free(d->ready);
    pthread_mutex_destroy(&d->mu);
    free(d);
    return rc ? 1 : 0;
}
