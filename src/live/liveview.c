#include "liveview.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "buf.h"

struct liveview {
    const struct config *c;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int stop; /* also the probe's cancel */
    struct liveness live;   /* under mu */
    bool go, done;          /* under mu: a probe asked for, its outcome posted */
    /* under mu: the server's lives - a new one each time it is seen down or its
     * token counter goes back (a relaunch) - and the one the probe went to */
    unsigned epoch, probe_epoch;
    char model[128];        /* under mu: for the probe asked for */
    int rc;
    double latency_s;
    char why[256];
};

static void *probe_thread(void *arg)
{
    struct liveview *lv = arg;
    pthread_mutex_lock(&lv->mu);
    for (;;) {
        while (!lv->go && !atomic_load(&lv->stop))
            pthread_cond_wait(&lv->cv, &lv->mu);
        if (atomic_load(&lv->stop))
            break;
        lv->go = false;
        char model[128];
        snprintf(model, sizeof model, "%s", lv->model);
        pthread_mutex_unlock(&lv->mu);
        struct buf base = BUF_INIT, key = BUF_INIT, kwhy = BUF_INIT;
        double lat = 0;
        char why[256] = "";
        int rc = -1;
        api_base_url(lv->c, &base);
        if (api_load_key(lv->c, &key, &kwhy) < 0)
            snprintf(why, sizeof why, "no API key: %.200s", buf_str(&kwhy));
        else
            rc = liveness_probe(buf_str(&base), buf_str(&key), model,
                                config_num(lv->c, CFG_PROBE_DEADLINE_S), &lv->stop, &lat,
                                why, sizeof why);
        buf_free(&base);
        buf_free(&key);
        buf_free(&kwhy);
        pthread_mutex_lock(&lv->mu);
        lv->rc = rc;
        lv->latency_s = lat;
        snprintf(lv->why, sizeof lv->why, "%s", why);
        lv->done = true;
    }
    pthread_mutex_unlock(&lv->mu);
    return NULL;
}

struct liveview *liveview_start(const struct config *c)
{
    struct liveview *lv = calloc(1, sizeof *lv);
    if (!lv)
        return NULL;
    lv->c = c;
    liveness_init(&lv->live);
    pthread_mutex_init(&lv->mu, NULL);
    pthread_cond_init(&lv->cv, NULL);
    if (pthread_create(&lv->th, NULL, probe_thread, lv) != 0) {
        pthread_mutex_destroy(&lv->mu);
        pthread_cond_destroy(&lv->cv);
        free(lv);
        return NULL;
    }
    return lv;
}

void liveview_feed(struct liveview *lv, const struct status_report *r, double now,
                   struct liveness *out)
{
    if (!lv) {
        liveness_init(out);
        return;
    }
    pthread_mutex_lock(&lv->mu);
    /* only a server that answers with its model is probed: a down one says
     * so by itself */
    bool up = r->api.health_code == 200 && r->api.models_code == 200 && r->api.model_id[0];
    const struct pval *gen = &r->metrics.generation_tokens;
    if (!up || (r->metrics_ok && gen->ok && lv->live.gen.ok && gen->v < lv->live.gen.v))
        lv->epoch++;
    if (lv->done) {
        lv->done = false;
        if (lv->probe_epoch == lv->epoch) {
            liveness_result(&lv->live, lv->rc, lv->latency_s, lv->why, now);
        } else {
            /* a probe of a server since gone (a probe's deadline outlasts a
             * relaunch): its empty stream says nothing of this one, whose
             * first minute it would have called wedged (it/test_ops.sh) */
            lv->live.in_flight = false;
            lv->live.have = lv->live.wedged = false;
        }
    }
    if (liveness_due(&lv->live, up && r->metrics_ok ? &r->metrics : NULL, now,
                     config_num(lv->c, CFG_PROBE_IDLE_S))) {
        lv->live.in_flight = true;
        lv->probe_epoch = lv->epoch;
        snprintf(lv->model, sizeof lv->model, "%s", r->api.model_id);
        lv->go = true;
        pthread_cond_signal(&lv->cv);
    }
    *out = lv->live;
    pthread_mutex_unlock(&lv->mu);
}

void liveview_stop(struct liveview *lv)
{
    if (!lv)
        return;
    pthread_mutex_lock(&lv->mu);
    atomic_store(&lv->stop, 1);
    pthread_cond_signal(&lv->cv);
    pthread_mutex_unlock(&lv->mu);
    pthread_join(lv->th, NULL);
    pthread_mutex_destroy(&lv->mu);
    pthread_cond_destroy(&lv->cv);
    free(lv);
}
