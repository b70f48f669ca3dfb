/* dlresolve: where each piece's bytes come from (the hub's 302 to a CDN),
 * asked on threads of their own, each with its own connection to the hub. A
 * resolve is a round trip to the hub - and with the hub's retries on 429 and
 * 5xx, up to half a minute - which the transfer loop must never wait for:
 * every connection would idle meanwhile. The resolvers take the pieces of
 * active outputs in the plan's order, ahead of the transfers, and again a
 * piece whose CDN URL expired (the transfers clear url_ok and wake them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlrun.h"
#include "mono.h"

struct resolver {
    struct dl_run *d;
    struct hub h;
    pthread_t th;
    bool started;
};

struct dl_resolvers {
    struct resolver *r;
    int n;
};

/* The next piece nobody resolves yet, while fewer than a connection's worth
 * of resolved pieces wait unstarted (a CDN URL expires: an hour ahead of
 * its use it would only be asked again); lock held. */
static bool next_piece(struct dl_run *d, int *o, int *p)
{
    int ahead = 0;
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        if (r->status != OUT_ACTIVE || r->final_name)
            continue;
        for (int k = 0; k < r->o->np; k++) {
            const struct dl_piece *dp = &r->o->p[k];
            int64_t a = dp->off, b = dp->off + dp->f->size;
            int64_t landed = ranges_count(&r->st->landed, a, b);
            if (landed == dp->f->size)
                continue;
            if (r->pc[k].url_ok) {
                ahead += landed == 0 && ranges_count(&r->inflight, a, b) == 0;
                continue;
            }
            if (ahead >= d->o->connections)
                return false;
            if (!r->pc[k].resolving) {
                *o = i, *p = k;
                return true;
            }
        }
    }
    return false;
}

static void *resolver_main(void *arg)
{
    struct resolver *me = arg;
    struct dl_run *d = me->d;
    pthread_mutex_lock(&d->mu);
    while (!d->resolve_stop) {
        int o, p;
        if (!next_piece(d, &o, &p)) {
            struct timespec ts;
            mono_deadline(&ts, 500);
            mono_cond_wait(&d->resolve_cv, &d->mu, &ts);
            continue;
        }
        struct out_rt *r = &d->out[o];
        struct piece_rt *pc = &r->pc[p];
        pc->resolving = true;
        const char *path = r->o->p[p].f->path; /* the plan's: it does not move */
        pthread_mutex_unlock(&d->mu);
        struct buf url = BUF_INIT, err = BUF_INIT;
        bool with_token = false;
        int rc = hub_resolve(&me->h, d->st->commit, path, &url, &with_token, &err);
        pthread_mutex_lock(&d->mu);
        pc->resolving = false;
        if (rc == 0) {
            buf_reset(&pc->url);
            buf_puts(&pc->url, buf_str(&url));
            pc->with_token = with_token;
            pc->url_ok = true;
            if (d->wake)
                curl_multi_wakeup(d->wake);
        } else if (r->status == OUT_ACTIVE) { /* the hub would not say: that output fails */
            snprintf(r->err, sizeof r->err, "%s", buf_str(&err));
            r->status = OUT_FAILED;
            pthread_cond_signal(&d->sync_cv); /* its file is closed once no transfer writes */
        }
        buf_free(&url);
        buf_free(&err);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

struct dl_resolvers *dlresolve_start(struct dl_run *d, int n, struct buf *err)
{
    struct dl_resolvers *rs = calloc(1, sizeof *rs);
    if (rs)
        rs->r = calloc((size_t)n, sizeof *rs->r);
    if (!rs || !rs->r) {
        free(rs);
        buf_puts(err, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        struct resolver *r = &rs->r[i];
        r->d = d;
        int dup = hub_dup(&r->h, d->hub);
        r->h.stop = &d->resolve_quit;
        if (dup < 0 || pthread_create(&r->th, NULL, resolver_main, r) != 0) {
            hub_close(&r->h);
            buf_puts(err, "cannot start the resolvers");
            rs->n = i;
            dlresolve_stop(rs);
            return NULL;
        }
        r->started = true;
        rs->n = i + 1;
    }
    return rs;
}

void dlresolve_stop(struct dl_resolvers *rs)
{
    if (!rs)
        return;
    struct dl_run *d = rs->n ? rs->r[0].d : NULL;
    if (d) {
        atomic_store(&d->resolve_quit, 1);
        pthread_mutex_lock(&d->mu);
        d->resolve_stop = true;
        pthread_cond_broadcast(&d->resolve_cv);
        pthread_mutex_unlock(&d->mu);
    }
    for (int i = 0; i < rs->n; i++) {
        if (rs->r[i].started)
            pthread_join(rs->r[i].th, NULL);
        hub_close(&rs->r[i].h);
    }
    free(rs->r);
    free(rs);
}
