#include "monitor.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "dlview.h"
#include "drift.h"
#include "events.h"
#include "guardview.h"
#include "interrupt.h"
#include "incident.h"
#include "liveview.h"
#include "logstream.h"
#include "mono.h"
#include "phase.h"
#include "runtime.h"
#include "wedge.h"

/* Samples between two looks at the containers (a look runs the runtime's
 * CLI on every node). */
#define FULL_EVERY 5
/* Lines of a rank's log fetched when the console attaches to it. */
#define ATTACH_TAIL 2000

struct log_follow {
    struct monitor *m;
    int idx; /* in state->ranks */
    struct logstream *st;
    struct node *node;
    char started[64];
    struct phase_state phase; /* under the state lock */
};

struct monitor {
    const struct config *c;
    struct cluster *cl;
    struct state *s;
    int interval_ms;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, poke;
    bool full_next; /* under mu */
    bool no_ct;     /* the monitor thread's: a node's containers not known yet */
    unsigned round, jobs_ended;
    struct status_report *r;
    struct log_follow logs[CLUSTER_MAX_NODES];
    struct guardview *gv;
    struct dlview *dv;
    struct liveview *lv;
    struct incident *inc;
    struct events_watch ev;
    /* the fabric each node's running rank started with (its env file), read
     * when a rank's StartedAt is new */
    struct drift_start started[CLUSTER_MAX_NODES];
    char started_at[CLUSTER_MAX_NODES][64];
    double drift_tried[CLUSTER_MAX_NODES];
    /* server rates and the wedge, from successive scrapes */
    bool have_prev;
    bool rank_down_prev; /* the last sample's report said a rank is down under /health */
    bool server_seen;    /* a sample of the server came before this one */
    struct metrics prev;
    double prev_t;
    struct wedge wedge;
    /* RDMA counters of the previous sample */
    struct pval prev_rx[CLUSTER_MAX_NODES][RDMA_MAX_PORTS], prev_tx[CLUSTER_MAX_NODES][RDMA_MAX_PORTS];
    double prev_err[CLUSTER_MAX_NODES][RDMA_MAX_PORTS];
    double prev_port_t[CLUSTER_MAX_NODES];
};

struct pval monitor_rate(struct pval prev, struct pval cur, double dt)
{
    struct pval r = {false, 0};
    if (prev.ok && cur.ok && dt > 0 && cur.v >= prev.v) {
        r.ok = true;
        r.v = (cur.v - prev.v) / dt;
    }
    return r;
}

static void on_log_line(void *ctx, const char *line, size_t len)
{
    struct log_follow *f = ctx;
    struct state *s = f->m->s;
    state_lock(s);
    logbuf_push(&s->ranks[f->idx].log, line, len);
    phase_feed(&f->phase, line, len);
    snprintf(s->nodes[f->idx].phase, sizeof s->nodes[f->idx].phase, "%s%s",
             phase_name(f->phase.phase), f->phase.failed ? ", fatal line logged" : "");
    state_unlock(s);
    state_changed(s);
}

static void on_log_event(void *ctx, bool up)
{
    (void)ctx;
    (void)up; /* a broken session re-attaches on the next sample */
}

/* Follows rank idx's container when it runs and is not followed yet (or
 * restarted: another StartedAt); detaches when it is gone. */
static void follow_rank(struct monitor *m, int idx, const struct container_info *ct)
{
    struct log_follow *f = &m->logs[idx];
    struct state *s = m->s;
    bool want = ct && ct->running;
    if (f->st && (!want || strcmp(f->started, ct->started) != 0)) {
        logstream_close(f->node, f->st);
        f->st = NULL;
        state_lock(s);
        s->ranks[idx].attached = false;
        state_unlock(s);
    }
    if (!want || f->st)
        return;
    char mark[160];
    int n = snprintf(mark, sizeof mark, "---- %s started %s: following its log ----", ct->name,
                     ct->started);
    state_lock(s);
    logbuf_push(&s->ranks[idx].log, mark, (size_t)n);
    phase_init(&f->phase);
    s->ranks[idx].attached = true;
    snprintf(s->ranks[idx].started, sizeof s->ranks[idx].started, "%s", ct->started);
    state_unlock(s);
    snprintf(f->started, sizeof f->started, "%s", ct->started);
    f->st = logstream_open(f->node, config_str(m->c, CFG_RUNTIME), ct->name, true, ATTACH_TAIL,
                           on_log_line, on_log_event, f);
    if (!f->st)
        state_say(s, "%s: cannot follow the log of %s", m->cl->nodes[idx].name, ct->name);
    state_changed(s);
}

static void apply_ports(struct monitor *m, int i, struct state_node *sn, double now)
{
    const struct snapshot *snap = &sn->snap;
    double dt = now - m->prev_port_t[i];
    for (int p = 0; p < snap->nports && p < RDMA_MAX_PORTS; p++) {
        struct state_port *sp = &sn->ports[p];
        sp->rx_bps = monitor_rate(m->prev_rx[i][p], snap->ports[p].rcv_bytes, dt);
        sp->tx_bps = monitor_rate(m->prev_tx[i][p], snap->ports[p].xmit_bytes, dt);
        double e = snap->ports[p].errors.ok ? snap->ports[p].errors.v : -1;
        if (m->prev_port_t[i] > 0 && e > m->prev_err[i][p] && m->prev_err[i][p] >= 0)
            sp->errors_rose = time(NULL);
        sp->errors = e;
        m->prev_err[i][p] = e;
        m->prev_rx[i][p] = snap->ports[p].rcv_bytes;
        m->prev_tx[i][p] = snap->ports[p].xmit_bytes;
    }
    m->prev_port_t[i] = now;
}

static void apply_server(struct monitor *m, struct state_server *sv, double now)
{
    const struct status_report *r = m->r;
    sv->have = true;
    sv->api = r->api;
    sv->metrics_ok = r->metrics_ok;
    sv->m = r->metrics;
    sv->wedged[0] = '\0';
    if (!r->metrics_ok) {
        m->have_prev = false;
        wedge_reset(&m->wedge);
        sv->rates_ok = false;
    } else {
        if (m->have_prev) {
            metrics_rates(&m->prev, &r->metrics, now - m->prev_t, &sv->rates);
            sv->rates_ok = true;
        }
        if (wedge_feed(&m->wedge, &r->metrics, now, config_num(m->c, CFG_WEDGE_SECONDS), sv->wedged,
                       sizeof sv->wedged))
            status_wedge_gpu(r, sv->wedged, sizeof sv->wedged);
        m->prev = r->metrics;
        m->prev_t = now;
        m->have_prev = true;
    }
    /* a rank down while /health answers, in two samples running: in one it
     * can be a launch's race (the new rank 0 answering, a worker's sample
     * taken a moment before its rank started: the last two CIs' "wedged"
     * incident the second a deployment came up). A monitor's first sample
     * takes it at once: `watch --once` has no second, and what it finds was
     * not just launched under its eyes. */
    if (!sv->wedged[0] && r->wedged[0] &&
        (!r->rank_down || m->rank_down_prev || !m->server_seen))
        snprintf(sv->wedged, sizeof sv->wedged, "%s", r->wedged);
    m->rank_down_prev = r->rank_down;
    m->server_seen = true;
    liveview_feed(m->lv, r, now, &sv->live);
    /* a probe's empty answer is the wedge the metrics cannot see while idle */
    if (!sv->wedged[0] && sv->live.have && sv->live.wedged && r->api.health_code == 200)
        snprintf(sv->wedged, sizeof sv->wedged, "liveness probe: %s", sv->live.why);
    sv->nproblems = r->nproblems < 8 ? r->nproblems : 8;
    sv->nwarnings = r->nwarnings < 8 ? r->nwarnings : 8;
    memcpy(sv->problems, r->problems, sizeof sv->problems);
    memcpy(sv->warnings, r->warnings, sizeof sv->warnings);
}

/* The fabric under running ranks: what each started with against what the
 * node's sysfs says now (read by every sample). A change is an alarm. */
static void watch_fabric(struct monitor *m)
{
    struct state *s = m->s;
    for (int i = 0; i < m->r->n && i < s->nnodes; i++) {
        const struct snapshot *sn = &m->r->nodes[i].snap;
        if (!m->cl->nodes[i].configured || !sn->reachable)
            continue;
        const struct container_info *ct = snapshot_rank_container(sn, m->cl->nodes[i].rank);
        bool run = ct && ct->running;
        double now = mono_s();
        if (sn->ct_sampled && run && strcmp(ct->started, m->started_at[i]) != 0 &&
            now - m->drift_tried[i] >= 30) {
            /* kept only once read: a failed read (no env file: ranks started
             * by hand) is tried again, every 30 s */
            m->drift_tried[i] = now;
            if (drift_read(m->c, &m->cl->nodes[i], NULL, &m->started[i]) == 0 && m->started[i].known)
                snprintf(m->started_at[i], sizeof m->started_at[i], "%s", ct->started);
        } else if (sn->ct_sampled && !run) {
            m->started_at[i][0] = '\0';
            m->drift_tried[i] = 0;
            memset(&m->started[i], 0, sizeof m->started[i]);
        }
        char why[300];
        bool moved = drift_check(&m->started[i], &sn->fabric, why, sizeof why);
        state_lock(s);
        char *was = s->nodes[i].fabric_drift;
        bool news = moved && strcmp(was, why) != 0;
        snprintf(was, sizeof s->nodes[i].fabric_drift, "%s", moved ? why : "");
        state_unlock(s);
        if (news)
            state_say(s, "ALARM: %s: the fabric changed since rank r%d started: %s (NCCL runs on "
                         "the old one: restart the deployment)",
                      m->cl->nodes[i].name, m->cl->nodes[i].rank, why);
    }
}

static void sample(struct monitor *m, bool full)
{
    struct status_report *r = m->r;
    struct state *s = m->s;
    /* the containers every FULL_EVERY samples, and at once after an action
     * or when a job ended */
    state_lock(s);
    unsigned ended = s->jobs_ended;
    state_unlock(s);
    full |= m->round % FULL_EVERY == 0 || ended != m->jobs_ended || m->no_ct;
    m->jobs_ended = ended;
    m->round++;
    status_sample(m->c, m->cl, r, full);
    double now = mono_s();
    /* a node whose containers are not known yet is asked in full again
     * next round, not FULL_EVERY rounds later */
    m->no_ct = false;
    state_lock(s);
    for (int i = 0; i < r->n && i < s->nnodes; i++) {
        struct state_node *sn = &s->nodes[i];
        if (!m->cl->nodes[i].configured)
            continue;
        if (r->nodes[i].snap.pending && !sn->have)
            continue; /* shown as not sampled yet ("..."), watch --once waits */
        m->no_ct |= r->nodes[i].snap.reachable && !r->nodes[i].snap.ct_sampled;
        sn->snap = r->nodes[i].snap;
        sn->have = true;
        sn->down_since = r->nodes[i].down_since;
        sn->sampled_at = now;
        const struct probe_mem *mem = &sn->snap.mem;
        state_hist_push(sn->hist_avail_gib, &sn->nhist_avail,
                        sn->snap.reachable && mem->available_kib.ok
                            ? (float)(mem->available_kib.v / 1048576.0)
                            : NAN);
        apply_ports(m, i, sn, now);
        struct state_sample *rs = &sn->recent[sn->nrecent++ % STATE_RECENT];
        const struct snapshot *sp = &sn->snap;
        struct pval na = {false, 0};
        *rs = (struct state_sample){time(NULL), sp->reachable, mem->available_kib, mem->free_kib,
                                    mem->cached_kib, sp->psi_full, sp->frag_blocks,
                                    sp->ngpu ? sp->gpu[0].util_pct : na,
                                    sp->ngpu ? sp->gpu[0].temp_c : na,
                                    sp->ngpu ? sp->gpu[0].power_w : na};
    }
    apply_server(m, &s->server, now);
    state_unlock(s);
    for (int i = 0; i < r->n && i < s->nnodes; i++)
        if (m->cl->nodes[i].configured && r->nodes[i].snap.reachable && r->nodes[i].snap.runtime_ok)
            follow_rank(m, i, snapshot_rank_container(&r->nodes[i].snap, m->cl->nodes[i].rank));
    watch_fabric(m);
    guardview_poll(m->gv);
    incident_check(m->inc); /* after the guards: a firing is in the state */
    double asked = events_guards_asked(s, m->gv != NULL);
    if (m->inc) /* ...and, once written, renamed what it caused */
        incident_causes_seen(m->inc, asked);
    else
        events_causes_seen(s, asked);
    events_check(&m->ev, s);
    state_changed(s);
}

static void *monitor_thread(void *arg)
{
    struct monitor *m = arg;
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        bool full = m->full_next;
        m->full_next = false;
        pthread_mutex_unlock(&m->mu);
        sample(m, full);
        pthread_mutex_lock(&m->mu);
        struct timespec dl;
        mono_deadline(&dl, m->interval_ms);
        while (!m->stop && !m->poke)
            if (mono_cond_wait(&m->cv, &m->mu, &dl) != 0)
                break;
        m->poke = false;
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

struct monitor *monitor_start(const struct config *c, struct cluster *cl, struct state *s,
                              int interval_ms)
{
    struct monitor *m = calloc(1, sizeof *m);
    if (!m || !(m->r = calloc(1, sizeof *m->r))) {
        free(m);
        return NULL;
    }
    m->c = c;
    m->cl = cl;
    m->s = s;
    m->interval_ms = interval_ms > 100 ? interval_ms : 100;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    state_lock(s);
    s->nnodes = cl->n;
    s->nranks = cl->n;
    for (int i = 0; i < cl->n; i++) {
        snprintf(s->nodes[i].name, sizeof s->nodes[i].name, "%s", cl->nodes[i].name);
        s->nodes[i].configured = cl->nodes[i].configured;
        s->ranks[i].rank = cl->nodes[i].rank;
        snprintf(s->ranks[i].node, sizeof s->ranks[i].node, "%s", cl->nodes[i].name);
        m->logs[i] = (struct log_follow){.m = m, .idx = i, .node = &cl->nodes[i].node};
        phase_init(&m->logs[i].phase);
        for (int p = 0; p < RDMA_MAX_PORTS; p++)
            m->prev_err[i][p] = -1;
    }
    state_unlock(s);
    m->gv = guardview_start(c, cl, s);
    m->dv = dlview_start(c, s, m->interval_ms);
    m->lv = liveview_start(c);
    m->inc = incident_start(c, cl, s);
    if (pthread_create(&m->th, NULL, monitor_thread, m) != 0) {
        incident_stop(m->inc);
        liveview_stop(m->lv);
        dlview_stop(m->dv);
        guardview_stop(m->gv);
        free(m->r);
        free(m);
        return NULL;
    }
    return m;
}

void monitor_poke(struct monitor *m)
{
    pthread_mutex_lock(&m->mu);
    m->poke = true;
    m->full_next = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

void monitor_guard_release(struct monitor *m)
{
    guardview_release(m->gv);
}

void monitor_guard_resolve(struct monitor *m)
{
    guardview_resolve(m->gv);
}

/* The monitor SIGUSR1/2 reach (monitor_take_usr); usr_busy counts handlers
 * inside, so taking it away waits until none can still hold the old one. */
static _Atomic(struct monitor *) usr_mon;
static atomic_int usr_busy;

void monitor_stop(struct monitor *m)
{
    if (!m)
        return;
    struct monitor *mine = m;
    if (atomic_compare_exchange_strong(&usr_mon, &mine, NULL))
        monitor_take_usr(NULL); /* the caller forgot: no signal reaches it freed */
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->th, NULL);
    for (int i = 0; i < m->cl->n; i++)
        if (m->logs[i].st)
            logstream_close(m->logs[i].node, m->logs[i].st);
    incident_stop(m->inc);
    liveview_stop(m->lv);
    dlview_stop(m->dv);
    guardview_stop(m->gv);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    free(m->r);
    free(m);
}

static void on_usr(int sig)
{
    atomic_fetch_add(&usr_busy, 1);
    struct monitor *m = atomic_load(&usr_mon);
    if (m && sig == SIGUSR1)
        monitor_guard_resolve(m);
    else if (m)
        monitor_guard_release(m);
    atomic_fetch_sub(&usr_busy, 1);
}

void monitor_take_usr(struct monitor *m)
{
    atomic_store(&usr_mon, m);
    if (m)
        interrupt_on_usr(on_usr);
    else /* a handler that read the old one finishes before it is freed */
        while (atomic_load(&usr_busy) > 0)
            sched_yield();
}
