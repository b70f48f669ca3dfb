#include "status.h"

#include "benchhist.h"
#include "engine.h"
#include "guards.h"
#include "mono.h"
#include "phase.h"
#include "ranks.h"
#include "suprec.h"
#include "wedge.h"
#include "text.h"
#include "usage.h"

#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct collect_job {
    const struct config *c;
    struct cluster_node *cn;
    char *guard;
    int *guard_rc;
    struct units_state *unit;
    struct alike_print *alike;
    struct drift_start *started;
    const char *runtime;
    struct snapshot *snap;
    time_t *down_since;
    int timeout_ms;
    int nranks;
    bool lite, quick;
    double *step_ms;
    atomic_int cancel; /* the node did not answer its sample: the asks give up */
    bool drift_answered; /* the env file was asked (there or not) */
};

const char *const status_step_names[STATUS_STEPS] = {"sample", "guard", "unit", "alike", "drift"};

/* What a warm status need not ask again (#32): the alike facts and the
 * drift start are the running rank's own - a launch writes the env file and
 * starts another container, with its own NCCL mapping - so they are kept per
 * node with the rank container they were read for (its id, pid and start);
 * the alike facts at most ALIKE_KEEP_S as well (an image pulled again under
 * the same name, a driver's version). Asking them costs the node three
 * engine CLI calls and the sha256 of a ~250 MB libnccl. */
#define ALIKE_KEEP_S 60.0
/* The guard's unit is the node's, not the rank's: kept across ranks for
 * UNITS_KEEP_S, and asked again at once when the guard's own answer changes
 * (a guard that died: its unit failed). Asking it costs the node three
 * systemctl calls each round, every second in the console. */
#define UNITS_KEEP_S 30.0
struct status_memo {
    bool warm; /* a round asked it all: its home known, its session up */
    double unit_at; /* mono s; 0: none kept */
    struct units_state unit;
    int unit_guard_rc; /* the guard's answer when the unit was asked */
    char key[400];
    double alike_at; /* mono s; 0: none kept */
    struct alike_print alike;
    bool started_ok;
    struct drift_start started;
};
/* collect_one's threads each touch their own node's memo; a status of the
 * same cluster from two threads at once shares it */
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;

static void memo_key(const struct collect_job *j, char *out, size_t sz)
{
    out[0] = '\0';
    if (!j->snap->ct_sampled)
        return; /* the containers unknown this round: nothing to match */
    const struct container_info *ct = snapshot_rank_container(j->snap, j->cn->rank);
    /* the container's own facts first: a long IMG is what a full key cuts */
    snprintf(out, sz, "%s|%ld|%s|%d|%s|%s", ct ? ct->id : "-", ct && ct->running ? ct->pid : 0L,
             ct ? ct->started : "-", ct && ct->running, j->runtime, config_str(j->c, CFG_IMG));
}

static struct status_memo *memo_of(struct cluster_node *cn)
{
    if (!cn->memo) {
        cn->memo = calloc(1, sizeof(struct status_memo));
        cn->memo_free = free;
    }
    return cn->memo;
}

/* One of a node's asks after its sample (guard, unit, alike, drift), timed:
 * each is an exec of its own on the node's session (make bench prints the
 * figures: docs/deploy.md); collect_one runs them at once. */
struct probe {
    struct collect_job *j;
    int step;
    pthread_t th;
    bool threaded;
};

static void *probe_one(void *arg)
{
    struct probe *p = arg;
    struct collect_job *j = p->j;
    double t = mono_s();
    if (p->step == 1) {
        *j->guard_rc = guards_describe(j->c, j->cn, j->guard, 400, &j->cancel);
    } else if (p->step == 2) {
        struct buf ue = BUF_INIT;
        char dir[512];
        if (cluster_state_dir(j->c, j->cn, dir, sizeof dir, &ue) < 0)
            dir[0] = '\0';
        units_probe_in(j->cn, dir, &j->cancel, j->unit, &ue); /* n/a when it cannot be asked */
        buf_free(&ue);
    } else if (p->step == 3) {
        alike_collect(j->c, j->cn, j->alike);
    } else {
        const struct container_info *ct = snapshot_rank_container(j->snap, j->cn->rank);
        if (ct && ct->running)
            j->drift_answered = drift_read(j->c, j->cn, &j->cancel, j->started) == 0;
    }
    j->step_ms[p->step] = (mono_s() - t) * 1e3;
    return NULL;
}

/* The alike facts and drift start from the memo when they are the same
 * rank's: true for each step answered so. */
static void memo_take(struct collect_job *j, const char *key, bool *took)
{
    pthread_mutex_lock(&memo_mu);
    struct status_memo *m = memo_of(j->cn);
    if (m && key[0] && strcmp(m->key, key) == 0) {
        if (m->alike_at > 0 && mono_s() - m->alike_at < ALIKE_KEEP_S) {
            *j->alike = m->alike;
            took[3] = true;
        }
        if (m->started_ok) {
            *j->started = m->started;
            took[4] = true;
        }
    }
    pthread_mutex_unlock(&memo_mu);
}

/* The unit from the memo while it is fresh: true when taken. */
static bool memo_take_unit(struct collect_job *j)
{
    pthread_mutex_lock(&memo_mu);
    struct status_memo *m = memo_of(j->cn);
    bool took = m && m->unit_at > 0 && mono_s() - m->unit_at < UNITS_KEEP_S;
    if (took)
        *j->unit = m->unit;
    pthread_mutex_unlock(&memo_mu);
    return took;
}

/* The kept unit was asked beside another answer of the guard's. */
static bool memo_unit_stale(struct collect_job *j)
{
    pthread_mutex_lock(&memo_mu);
    struct status_memo *m = memo_of(j->cn);
    bool stale = !m || m->unit_guard_rc != *j->guard_rc;
    pthread_mutex_unlock(&memo_mu);
    return stale;
}

static bool memo_warm(struct cluster_node *cn)
{
    pthread_mutex_lock(&memo_mu);
    bool warm = cn->memo && ((struct status_memo *)cn->memo)->warm;
    pthread_mutex_unlock(&memo_mu);
    return warm;
}

static void probe_start(struct probe *p)
{
    p->threaded = pthread_create(&p->th, NULL, probe_one, p) == 0;
    if (!p->threaded)
        probe_one(p);
}

static void memo_keep(struct collect_job *j, const char *key, const bool *took)
{
    pthread_mutex_lock(&memo_mu);
    struct status_memo *m = memo_of(j->cn);
    /* warm once the guard answered: its asks found the node's home */
    if (m && *j->guard_rc >= 0)
        m->warm = true;
    if (m && !took[2] && j->unit->known) {
        m->unit = *j->unit;
        m->unit_at = mono_s();
        m->unit_guard_rc = *j->guard_rc;
    }
    if (m && key[0]) {
        if (strcmp(m->key, key) != 0) { /* another rank: its facts go, not the node's */
            struct status_memo node = *m;
            memset(m, 0, sizeof *m);
            m->warm = node.warm;
            m->unit_at = node.unit_at;
            m->unit = node.unit;
            m->unit_guard_rc = node.unit_guard_rc;
            snprintf(m->key, sizeof m->key, "%s", key);
        }
        if (!took[3] && j->alike->asked) { /* a node that did not answer: asked again */
            m->alike = *j->alike;
            m->alike_at = mono_s();
        }
        const struct container_info *ct = snapshot_rank_container(j->snap, j->cn->rank);
        /* an env file that is not there stays so for this container: a
         * launch writes it before it starts the rank */
        if (!took[4] && ct && ct->running && j->drift_answered) {
            m->started = *j->started;
            m->started_ok = true;
        }
    }
    pthread_mutex_unlock(&memo_mu);
}

static void *collect_one(void *arg)
{
    struct collect_job *j = arg;
    double t = mono_s();
    /* the asks at once, each on a channel of the node's one session: the
     * wait is the slowest one's, not their sum. Once a round asked it all
     * (its home known: nothing of the asks' own waits on the node), the
     * guard and its unit go beside the sample; a node that then does not
     * answer the sample has them cancelled, not waited for. */
    struct probe pr[STATUS_STEPS];
    for (int k = 0; k < STATUS_STEPS; k++)
        pr[k] = (struct probe){j, k, 0, false};
    bool early = j->guard && memo_warm(j->cn);
    bool took[STATUS_STEPS] = {false};
    took[2] = j->guard && memo_take_unit(j);
    for (int k = 1; early && k <= 2; k++)
        if (!took[k])
            probe_start(&pr[k]);
    if (!j->cn->sampler)
        j->cn->sampler = sampler_start(&j->cn->node, j->runtime, j->nranks, &j->cn->ov);
    if (j->cn->sampler && j->quick && !j->cn->node.local) { /* local: no session to hang */
        sampler_sample(j->cn->sampler, 1000, j->lite, j->snap);
    } else if (j->cn->sampler) {
        sampler_request_opt(j->cn->sampler, j->timeout_ms, j->lite, j->snap);
    } else {
        memset(j->snap, 0, sizeof *j->snap);
        snprintf(j->snap->error, sizeof j->snap->error, "%s: cannot start sampling",
                 j->cn->node.name);
    }
    node_reachable(&j->cn->node, j->down_since, NULL, 0);
    j->step_ms[0] = (mono_s() - t) * 1e3;
    if (!j->guard || !j->snap->reachable) {
        if (early) { /* not asked, as before: an unreachable node's guard is not known */
            atomic_store(&j->cancel, 1);
            for (int k = 1; k <= 2; k++) {
                if (pr[k].threaded)
                    pthread_join(pr[k].th, NULL);
                j->step_ms[k] = 0; /* given up: no ask's figure */
            }
            j->guard[0] = '\0';
            *j->guard_rc = 0;
        }
        if (j->guard) /* asked or kept, its unit is not known this round either */
            memset(j->unit, 0, sizeof *j->unit);
        return NULL;
    }
    char key[400];
    memo_key(j, key, sizeof key);
    memo_take(j, key, took);
    for (int k = 1; k < STATUS_STEPS; k++) {
        if (took[k])
            j->step_ms[k] = 0; /* kept: nothing asked */
        else if (!early || k > 2)
            probe_start(&pr[k]);
    }
    for (int k = 1; k < STATUS_STEPS; k++)
        if (pr[k].threaded)
            pthread_join(pr[k].th, NULL);
    if (took[2] && memo_unit_stale(j)) { /* the guard's answer changed: its unit now */
        took[2] = false;
        probe_one(&pr[2]);
    }
    memo_keep(j, key, took);
    return NULL;
}

static void note(char (*list)[320], int *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(char (*list)[320], int *n, const char *fmt, ...)
{
    if (*n >= STATUS_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(list[*n], 320, fmt, ap);
    va_end(ap);
    (*n)++;
}

#define PROBLEM(r, ...) note((r)->problems, &(r)->nproblems, __VA_ARGS__)
#define WARNING(r, ...) note((r)->warnings, &(r)->nwarnings, __VA_ARGS__)

/* The guard's warning levels, seen from the snapshot (every node, with or
 * without a guard), and the guard itself where ranks run. */
static void judge_memory(const struct config *c, struct status_report *r, int i)
{
    const struct snapshot *s = &r->nodes[i].snap;
    const char *name = r->nodes[i].cn->node.name;
    /* numbers, checked when the settings loaded; the defaults are the table's */
    double floor_gib = config_num(c, CFG_MEMGUARD_GIB), warn_gib = config_num(c, CFG_MEMGUARD_WARN_GIB);
    double psi_warn = config_num(c, CFG_MEMGUARD_PSI_WARN);
    double psi_kill = config_num(c, CFG_MEMGUARD_PSI_KILL);
    double frag_warn = config_num(c, CFG_MEMGUARD_FRAG_WARN);
    double avail = s->mem.available_kib.ok ? s->mem.available_kib.v / 1048576 : -1;
    if (avail >= floor_gib && avail < warn_gib)
        WARNING(r, "%s: MemAvailable %.1f GiB is under the warning level of %.1f GiB "
                   "(MEMGUARD_WARN_GIB); the guard kills the ranks at %.1f GiB",
                name, avail, warn_gib, floor_gib);
    if (s->psi_full.ok && psi_kill > 0 && s->psi_full.v >= psi_kill)
        PROBLEM(r, "%s: memory pressure (PSI full avg10) %.1f%% is at the guard's kill level "
                   "%.0f%% (MEMGUARD_PSI_KILL)",
                name, s->psi_full.v, psi_kill);
    else if (s->psi_full.ok && psi_warn > 0 && s->psi_full.v >= psi_warn)
        WARNING(r, "%s: memory pressure (PSI full avg10) %.1f%% is at or above %.0f%% "
                   "(MEMGUARD_PSI_WARN): the node stalls on memory",
                name, s->psi_full.v, psi_warn);
    if (s->frag_blocks.ok && frag_warn > 0 && s->frag_blocks.v < frag_warn)
        WARNING(r, "%s: memory is fragmented: %.0f free blocks of 4 MiB or more (under %.0f, "
                   "MEMGUARD_FRAG_WARN); GPU allocations and nvidia-smi may stall",
                name, s->frag_blocks.v, frag_warn);
    char why[300];
    if (drift_check(&r->nodes[i].started, &s->fabric, why, sizeof why))
        PROBLEM(r, "%s: the fabric changed since rank r%d started: %s (NCCL runs on the old one: "
                   "`dsv41-top restart`)",
                name, r->nodes[i].cn->rank, why);
    const char *g = r->nodes[i].guard;
    if (!g[0])
        return;
    const struct container_info *mine = snapshot_rank_container(s, r->nodes[i].cn->rank);
    if (r->nodes[i].guard_rc == 127 && mine && mine->running)
        WARNING(r, "%s: rank %d runs with no memory guard installed (`dsv41-top launch` installs "
                   "and starts one)",
                name, r->nodes[i].cn->rank);
    else if (r->nodes[i].guard_rc != 0 && mine && mine->running)
        PROBLEM(r, "%s: rank %d runs without a memory guard: %s (`dsv41-top launch` starts one)",
                name, r->nodes[i].cn->rank, g);
    else if (r->nodes[i].guard_rc == 0 && strstr(g, ", WARN "))
        WARNING(r, "%s: memory guard warns: %s", name, strstr(g, ", WARN ") + 7);
    const struct units_state *u = &r->nodes[i].unit;
    if (u->known && u->systemd && !units_guard_ok(u))
        WARNING(r, "%s: %s is %s, %s: no memory guard after a reboot (`dsv41-top doctor --fix`)",
                name, UNITS_GUARD, u->enabled, u->active[0] ? u->active : "n/a");
}

/* The nodes alike: what differs is a warning with every node's value. */
static void judge_alike(struct status_report *r)
{
    struct alike_print p[CLUSTER_MAX_NODES];
    const char *names[CLUSTER_MAX_NODES];
    for (int i = 0; i < r->n && i < CLUSTER_MAX_NODES; i++) {
        p[i] = r->nodes[i].alike;
        names[i] = r->nodes[i].cn->node.name;
    }
    char warn[ALIKE_FIELDS][320];
    int n = alike_compare(p, names, r->n, warn, ALIKE_FIELDS);
    for (int k = 0; k < n; k++)
        WARNING(r, "%s", warn[k]);
}

static void judge_node(const struct config *c, struct status_report *r, int i)
{
    const struct cluster_node *cn = r->nodes[i].cn;
    const struct snapshot *s = &r->nodes[i].snap;
    const char *name = cn->node.name;
    if (!cn->configured) {
        PROBLEM(r, "%s: WORKER is not set (e.g. export WORKER=user@10.10.10.11)", name);
        return;
    }
    if (!s->reachable) {
        PROBLEM(r, "%s: unreachable: %s", name, s->error);
        return;
    }
    if (!s->mem_ok)
        PROBLEM(r, "%s: cannot read MemTotal/MemAvailable from %s/meminfo", name,
                cn->node.proc_root);
    double floor_gib = 1;
    struct buf e = BUF_INIT;
    if (config_get_double(c, CFG_MEMGUARD_GIB, &floor_gib, &e) < 0)
        floor_gib = 1;
    buf_free(&e);
    if (s->mem.available_kib.ok && s->mem.available_kib.v < floor_gib * 1048576)
        PROBLEM(r, "%s: MemAvailable %.1f GiB is below the guard floor of %.1f GiB", name,
                s->mem.available_kib.v / 1048576, floor_gib);
    judge_memory(c, r, i);
    if (s->gpu_note[0])
        WARNING(r, "%s: GPU: %s", name, s->gpu_note);
    if (s->engine_note[0])
        WARNING(r, "%s: %s", name, s->engine_note);
    if (!s->fabric.ok)
        PROBLEM(r, "%s: fabric: %s", name, s->fabric.why);
    if (!s->runtime_ok)
        PROBLEM(r, "%s: container runtime %s: %s", name, config_str(c, CFG_RUNTIME),
                s->runtime_note[0] ? s->runtime_note : "not answering");
    char want[16];
    snprintf(want, sizeof want, "dsv41-r%d", cn->rank);
    const struct container_info *mine = snapshot_rank_container(s, cn->rank);
    if (s->runtime_ok && !mine)
        PROBLEM(r, "%s: rank %s is not running (start the deployment with `dsv41-top launch`)",
                name, want);
    else if (mine && !mine->running)
        PROBLEM(r, "%s: rank %s exited with code %d%s (see `dsv41-top logs r%d`)", name, want,
                mine->exit_code, mine->oom_killed ? ", OOM-killed" : "", cn->rank);
}

static bool scrape(const char *base, struct metrics *m)
{
    struct buf body = BUF_INIT, err = BUF_INIT;
    bool ok = api_get(base, "/metrics", NULL, 3000, &body, &err) == 200 &&
              metrics_parse(buf_str(&body), m) > 0;
    buf_free(&body);
    buf_free(&err);
    return ok;
}

/* One scrape; while requests run, more until something moves (a counter, a
 * gauge an engine step sets) or the wedge rule (wedge.h) says wedged. */
static void scrape_metrics(const struct config *c, struct status_report *r, bool once)
{
    struct buf base = BUF_INIT;
    api_base_url(c, &base);
    r->metrics_ok = scrape(buf_str(&base), &r->metrics);
    double limit = once ? 0 : config_num(c, CFG_WEDGE_SECONDS);
    struct wedge w = WEDGE_INIT;
    if (r->metrics_ok && limit > 0 &&
        !wedge_feed(&w, &r->metrics, mono_s(), limit, r->wedged, sizeof r->wedged) &&
        r->metrics.running.ok && r->metrics.running.v > 0) {
        double t0 = mono_s(), t;
        struct metrics now;
        do {
            usleep(250000);
            t = mono_s();
            if (!scrape(buf_str(&base), &now))
                break;
            metrics_rates(&r->metrics, &now, t - t0, &r->rates);
            r->rates_ok = true;
            r->rates_window_s = t - t0;
            if (wedge_feed(&w, &now, t, limit, r->wedged, sizeof r->wedged) || w.moving)
                break;
        } while (t - t0 < limit + 1);
    }
    buf_free(&base);
}

void status_wedge_gpu(const struct status_report *r, char *why, size_t n)
{
    const struct probe_gpu *gpus[CLUSTER_MAX_NODES * SNAP_MAX_GPUS];
    const char *names[CLUSTER_MAX_NODES * SNAP_MAX_GPUS];
    int k = 0;
    for (int i = 0; i < r->n; i++)
        for (int g = 0; g < r->nodes[i].snap.ngpu && g < SNAP_MAX_GPUS; g++) {
            gpus[k] = &r->nodes[i].snap.gpu[g];
            names[k++] = r->nodes[i].cn->name;
        }
    wedge_gpu_note(gpus, names, k, why, n);
}

/* How a round collects: status's way (everything, once) or the console's
 * (status_sample, every second). */
struct collect_way {
    bool tail;       /* the ranks' log tails for their phase while booting */
    bool guard;      /* each node's memory guard asked */
    bool one_scrape; /* one metrics scrape, never a wait for a second */
    bool quick;      /* a node late by 1 s gives its last snapshot */
    bool lite;       /* no container state asked: the previous round's kept */
};

static void collect(const struct config *c, struct cluster *cl, struct status_report *r,
                    const struct collect_way *way);

void status_collect(const struct config *c, struct cluster *cl, struct status_report *r)
{
    collect(c, cl, r, &(const struct collect_way){.tail = true, .guard = true});
}

void status_survey(const struct config *c, struct cluster *cl, struct status_report *r)
{
    collect(c, cl, r, &(const struct collect_way){.one_scrape = true});
}

void status_sample(const struct config *c, struct cluster *cl, struct status_report *r, bool full)
{
    collect(c, cl, r, &(const struct collect_way){.one_scrape = true, .quick = true, .lite = !full});
}

/* What a lite sample does not ask: kept from the report's previous round. */
struct kept_containers {
    bool valid, runtime_ok;
    int ct_missing, ncont;
    char runtime_note[256];
    struct container_info cont[SNAP_MAX_CONTAINERS];
};

static void keep_containers(const struct snapshot *s, struct kept_containers *k)
{
    k->valid = s->ct_sampled;
    k->runtime_ok = s->runtime_ok;
    k->ct_missing = s->ct_missing;
    k->ncont = s->ncont;
    memcpy(k->runtime_note, s->runtime_note, sizeof k->runtime_note);
    memcpy(k->cont, s->cont, sizeof k->cont);
}

static void restore_containers(struct snapshot *s, const struct kept_containers *k)
{
    if (s->ct_sampled || !k->valid || !s->reachable)
        return;
    s->ct_sampled = true;
    s->runtime_ok = k->runtime_ok;
    s->ct_missing = k->ct_missing;
    s->ncont = k->ncont;
    memcpy(s->runtime_note, k->runtime_note, sizeof s->runtime_note);
    memcpy(s->cont, k->cont, sizeof s->cont);
}

static void collect(const struct config *c, struct cluster *cl, struct status_report *r,
                    const struct collect_way *way)
{
    /* a lite round reuses the containers r holds from the round before */
    struct kept_containers *kept = NULL;
    /* a quick round's full sample may come without them too (a node's
     * late answer, its socket's exchange not back in time) */
    if (way->lite || way->quick) {
        kept = calloc(CLUSTER_MAX_NODES, sizeof *kept);
        for (int i = 0; kept && i < r->n && i < CLUSTER_MAX_NODES; i++)
            keep_containers(&r->nodes[i].snap, &kept[i]);
    }
    memset(r, 0, sizeof *r);
    long t = 5;
    struct buf e = BUF_INIT;
    config_get_long(c, CFG_SSH_TIMEOUT, &t, &e);
    buf_free(&e);
    struct collect_job jobs[CLUSTER_MAX_NODES];
    pthread_t th[CLUSTER_MAX_NODES];
    bool started[CLUSTER_MAX_NODES] = {false};
    r->n = cl->n;
    for (int i = 0; i < cl->n; i++) {
        r->nodes[i].cn = &cl->nodes[i];
        bool guard = way->guard && !way->lite;
        jobs[i] = (struct collect_job){c,
                                       &cl->nodes[i],
                                       guard ? r->nodes[i].guard : NULL,
                                       &r->nodes[i].guard_rc,
                                       &r->nodes[i].unit,
                                       &r->nodes[i].alike,
                                       &r->nodes[i].started,
                                       config_str(c, CFG_RUNTIME),
                                       &r->nodes[i].snap,
                                       &r->nodes[i].down_since,
                                       (int)t * 1000 + 10000,
                                       cl->n,
                                       way->lite,
                                       way->quick,
                                       r->nodes[i].step_ms,
                                       0,
                                       false};
        if (!cl->nodes[i].configured)
            continue;
        started[i] = pthread_create(&th[i], NULL, collect_one, &jobs[i]) == 0;
        if (!started[i])
            collect_one(&jobs[i]);
    }
    double t0 = mono_s();
    api_check_health(c, 3000, &r->api);
    r->api_ms = (mono_s() - t0) * 1e3;
    t0 = mono_s();
    if (r->api.health_code == 200)
        scrape_metrics(c, r, way->one_scrape);
    r->metrics_ms = (mono_s() - t0) * 1e3;
    for (int i = 0; i < cl->n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    for (int i = 0; kept && i < r->n; i++)
        restore_containers(&r->nodes[i].snap, &kept[i]);
    free(kept);
    if (r->wedged[0])
        status_wedge_gpu(r, r->wedged, sizeof r->wedged);
    /* while booting, each rank's phase from its log's tail */
    for (int i = 0; i < r->n && r->api.models_code != 200 && way->tail; i++) {
        const struct container_info *ct =
            snapshot_rank_container(&r->nodes[i].snap, r->nodes[i].cn->rank);
        if (ct && ct->running) {
            struct strv lines = STRV_INIT;
            struct buf e2 = BUF_INIT;
            if (ranks_tail(&cl->nodes[i].node, config_str(c, CFG_RUNTIME), r->nodes[i].cn->rank,
                          300, &lines, &e2) == 0) {
                struct phase_state ph;
                phase_init(&ph);
                for (int l = 0; l < lines.n; l++)
                    phase_feed(&ph, lines.v[l], strlen(lines.v[l]));
                snprintf(r->nodes[i].phase, sizeof r->nodes[i].phase, "%s%s",
                         phase_name(ph.phase), ph.failed ? ", fatal line logged" : "");
            }
            strv_free(&lines);
            buf_free(&e2);
        }
    }
    for (int i = 0; i < r->n; i++)
        judge_node(c, r, i);
    judge_alike(r);
    for (int i = 1; i < r->n; i++) {
        const struct rdma_fabric *a = &r->nodes[0].snap.fabric, *b = &r->nodes[i].snap.fabric;
        const char *wn = r->nodes[i].cn->name;
        if (!a->ok || !b->ok)
            continue;
        if (!rdma_same_subnet(a, b))
            PROBLEM(r, "fabric: head %s/%d and %s %s/%d are not in one subnet", a->ipv4,
                    a->prefix, wn, b->ipv4, b->prefix);
        if (a->gid_index != b->gid_index)
            WARNING(r, "fabric: RoCE v2 GID index differs: head %d, %s %d (launch sets "
                    "NCCL_IB_GID_INDEX per node)", a->gid_index, wn, b->gid_index);
    }
    /* every rank should run the same image */
    const char *img0 = NULL, *node0 = NULL;
    for (int i = 0; i < r->n; i++)
        for (int k = 0; k < r->nodes[i].snap.ncont; k++) {
            const struct container_info *ct = &r->nodes[i].snap.cont[k];
            if (!ct->image[0])
                continue;
            if (!img0) {
                img0 = ct->image;
                node0 = r->nodes[i].cn->name;
            } else if (strcmp(img0, ct->image) != 0) {
                WARNING(r, "image differs: %s runs %.19s, %s runs %.19s", node0, img0,
                        r->nodes[i].cn->name, ct->image);
            }
        }
    /* a bench of this configuration below the accepted baseline's (local files) */
    char hash[17], why[320];
    config_hash(c, hash);
    if (benchhist_regression(config_str(c, CFG_STATE_DIR), hash,
                             config_num(c, CFG_ACCEPT_BENCH_TOL) / 100, why, sizeof why) == 1)
        WARNING(r, "%s", why);
    /* what the supervisor did lately (SUPERVISE=1 in watch): its relaunches
     * of the last hour and why, or that it stopped trying */
    struct suprec *sup = malloc(sizeof *sup);
    if (sup) {
        suprec_load(config_str(c, CFG_STATE_DIR), time(NULL), sup);
        if (sup->gave_up && time(NULL) - sup->last_at < 3600)
            WARNING(r, "supervisor stopped the deployment: %s", sup->last);
        else if (sup->nhour)
            WARNING(r, "supervisor: %d relaunch%s in the last hour, the last %s", sup->nhour,
                    sup->nhour == 1 ? "" : "es", sup->last);
        free(sup);
    }
    /* a rank down while /health answers is the wedge's cause: said first,
     * the metrics' verdict on the same hang (if any yet) after it */
    if (r->api.health_code == 200)
        for (int i = 0; i < r->n; i++) {
            const struct snapshot *s = &r->nodes[i].snap;
            /* a late snapshot (an old one reused) cannot say a rank is down now */
            if (!r->nodes[i].cn->configured || !s->reachable || !s->runtime_ok || s->late_s > 0)
                continue;
            bool up = false;
            for (int k = 0; k < s->ncont; k++)
                up |= s->cont[k].running && atoi(s->cont[k].name + 7) == r->nodes[i].cn->rank;
            if (up)
                continue;
            struct buf w = BUF_INIT; /* cut to the field's size: the cause comes first */
            buf_printf(&w, "rank r%d on %s is not running while /health answers: no request can "
                           "complete",
                       r->nodes[i].cn->rank, r->nodes[i].cn->name);
            if (r->wedged[0])
                buf_printf(&w, " (metrics: %s)", r->wedged);
            snprintf(r->wedged, sizeof r->wedged, "%s", buf_str(&w));
            buf_free(&w);
            r->rank_down = true;
            break;
        }
    if (r->wedged[0])
        PROBLEM(r, "engine wedged: %s (restart the deployment: `dsv41-top restart`)", r->wedged);
    if (r->api.health_code != 200)
        PROBLEM(r, "api: GET %s/health: %s", r->api.url,
                r->api.health_code ? "answered non-200 (engine dead?)" : r->api.error);
    else if (r->api.models_code != 200)
        PROBLEM(r, "api: %s/v1/models: %s", r->api.url,
                r->api.models_code ? "did not answer 200 (wrong key?)" : r->api.error);
}
