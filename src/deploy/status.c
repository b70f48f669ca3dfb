#include "status.h"

#include "engine.h"
#include "guards.h"
#include "mono.h"
#include "phase.h"
#include "ranks.h"
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
};

static void *collect_one(void *arg)
{
    struct collect_job *j = arg;
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
    if (j->guard && j->snap->reachable) {
        *j->guard_rc = guards_describe(j->c, j->cn, j->guard, 400);
        struct buf ue = BUF_INIT;
        char dir[512];
        if (cluster_state_dir(j->c, j->cn, dir, sizeof dir, &ue) < 0)
            dir[0] = '\0';
        units_probe_in(j->cn, dir, j->unit, &ue); /* unknown (n/a) when it cannot be asked */
        buf_free(&ue);
        alike_collect(j->c, j->cn, j->alike);
        const struct probe_container *ct = snapshot_rank_container(j->snap, j->cn->rank);
        if (ct && ct->running)
            drift_read(j->c, j->cn, j->started);
    }
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
    const struct probe_container *mine = snapshot_rank_container(s, r->nodes[i].cn->rank);
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
    const struct probe_container *mine = snapshot_rank_container(s, cn->rank);
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

void status_collect(const struct config *c, struct cluster *cl, struct status_report *r)
{
    status_collect_opt(c, cl, r, 0);
}

/* What a lite sample does not ask: kept from the report's previous round. */
struct kept_containers {
    bool valid, runtime_ok;
    int ct_missing, ncont;
    char runtime_note[256];
    struct probe_container cont[SNAP_MAX_CONTAINERS];
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

void status_collect_opt(const struct config *c, struct cluster *cl, struct status_report *r,
                        unsigned flags)
{
    /* a lite round reuses the containers r holds from the round before */
    struct kept_containers *kept = NULL;
    /* a quick round's full sample may come without them too (a node's
     * late answer, its socket's exchange not back in time) */
    if (flags & (STATUS_LITE | STATUS_QUICK)) {
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
        bool guard = !(flags & (STATUS_NO_GUARD | STATUS_LITE));
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
                                       (flags & STATUS_LITE) != 0,
                                       (flags & STATUS_QUICK) != 0};
        if (!cl->nodes[i].configured)
            continue;
        started[i] = pthread_create(&th[i], NULL, collect_one, &jobs[i]) == 0;
        if (!started[i])
            collect_one(&jobs[i]);
    }
    api_check_health(c, 3000, &r->api);
    if (r->api.health_code == 200)
        scrape_metrics(c, r, flags & STATUS_ONE_SCRAPE);
    for (int i = 0; i < cl->n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    for (int i = 0; kept && i < r->n; i++)
        restore_containers(&r->nodes[i].snap, &kept[i]);
    free(kept);
    if (r->wedged[0])
        status_wedge_gpu(r, r->wedged, sizeof r->wedged);
    /* while booting, each rank's phase from its log's tail */
    for (int i = 0; i < r->n && r->api.models_code != 200 && !(flags & STATUS_NO_TAIL); i++) {
        const struct probe_container *ct =
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
            const struct probe_container *ct = &r->nodes[i].snap.cont[k];
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
    /* a rank down while /health answers is the wedge's cause: said first,
     * the metrics' verdict on the same hang (if any yet) after it */
    if (r->api.health_code == 200)
        for (int i = 0; i < r->n; i++) {
            const struct snapshot *s = &r->nodes[i].snap;
            if (!r->nodes[i].cn->configured || !s->reachable || !s->runtime_ok)
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

static void fmt_gib(char *out, size_t sz, struct pval v)
{
    if (v.ok)
        snprintf(out, sz, "%.1f GiB", v.v / 1048576.0);
    else
        snprintf(out, sz, "n/a");
}

static void fmt_num(char *out, size_t sz, struct pval v, const char *unit, int prec)
{
    if (v.ok)
        snprintf(out, sz, "%.*f%s", prec, v.v, unit);
    else
        snprintf(out, sz, "n/a");
}

static void print_metrics(FILE *f, const struct status_report *r)
{
    const struct metrics *m = &r->metrics;
    char a[32], b[32], k[32], hit[32], acc[32], len[32];
    fmt_num(a, sizeof a, m->running, "", 0);
    fmt_num(b, sizeof b, m->waiting, "", 0);
    struct pval kv = m->kv_usage;
    kv.v *= 100;
    fmt_num(k, sizeof k, kv, "%", 1);
    /* since the server started: one scrape has no interval */
    struct metrics zero;
    memset(&zero, 0, sizeof zero);
    zero.prefix_queries = zero.prefix_hits = zero.spec_drafts = (struct pval){true, 0};
    zero.spec_draft_tokens = zero.spec_accepted = (struct pval){true, 0};
    struct metrics_rates life;
    metrics_rates(&zero, m, 1, &life);
    life.prefix_hit_rate.v *= 100;
    life.spec_acceptance.v *= 100;
    fmt_num(hit, sizeof hit, life.prefix_hit_rate, "%", 1);
    fmt_num(acc, sizeof acc, life.spec_acceptance, "%", 1);
    fmt_num(len, sizeof len, life.spec_mean_accept_len, "", 2);
    fprintf(f, "server  running %s  waiting %s  KV cache %s  prompt %.0f  generated %.0f tokens\n", a,
            b, k, m->prompt_tokens.ok ? m->prompt_tokens.v : 0,
            m->generation_tokens.ok ? m->generation_tokens.v : 0);
    fprintf(f, "        prefix cache hits %s  spec acceptance %s, mean length %s\n", hit, acc, len);
    char old[400];
    metrics_old_names(m, old, sizeof old);
    if (old[0]) /* an older vLLM: the figures are the same, under the names it used */
        fprintf(f, "        read from the older metric names %s\n", old);
    if (r->rates_ok) {
        char g[32], p[32], t[32];
        fmt_num(g, sizeof g, r->rates.generation_tps, " tok/s", 1);
        fmt_num(p, sizeof p, r->rates.prompt_tps, " tok/s", 1);
        fmt_num(t, sizeof t, r->rates.mean_ttft_s, " s", 2);
        fprintf(f, "        over %.1f s: generation %s  prompt %s  mean TTFT %s\n",
                r->rates_window_s, g, p, t);
    }
}

void status_print_text(FILE *f, const struct status_report *r)
{
    for (int i = 0; i < r->n; i++) {
        const struct cluster_node *cn = r->nodes[i].cn;
        const struct snapshot *s = &r->nodes[i].snap;
        fprintf(f, "%s (rank %d%s%s)", cn->node.name, cn->rank, cn->node.local ? ", local" : "",
                cn->configured && !cn->node.local ? ", ssh" : "");
        if (!cn->configured) {
            fprintf(f, ": not configured (WORKER unset)\n");
            continue;
        }
        if (!s->reachable) {
            fprintf(f, ": UNREACHABLE");
            if (r->nodes[i].down_since) {
                char when[32];
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S",
                         localtime(&r->nodes[i].down_since));
                fprintf(f, " since %s", when);
            }
            fprintf(f, "\n  %s\n", s->error);
            continue;
        }
        fprintf(f, " host %s\n", s->hostname[0] ? s->hostname : "?");
        char a[32], b[32], c2[32], d[32], e[32];
        fmt_gib(a, sizeof a, s->mem.total_kib);
        fmt_gib(b, sizeof b, s->mem.available_kib);
        fmt_gib(c2, sizeof c2, s->mem.free_kib);
        fmt_gib(d, sizeof d, s->mem.cached_kib);
        fmt_num(e, sizeof e, s->oom_kill, "", 0);
        fprintf(f, "  memory  total %s  available %s  free %s  cached %s  oom_kill %s\n", a, b, c2,
                d, e);
        fmt_num(a, sizeof a, s->psi_full, "%", 1);
        fmt_num(b, sizeof b, s->frag_blocks, "", 0);
        fprintf(f, "  stress  PSI full avg10 %s  free 4 MiB blocks %s\n", a, b);
        if (r->nodes[i].guard[0])
            fprintf(f, "  guard   %s\n", r->nodes[i].guard);
        if (r->nodes[i].guard[0]) {
            char ud[200];
            units_describe(&r->nodes[i].unit, ud, sizeof ud);
            fprintf(f, "  unit    %s %s\n", UNITS_GUARD, ud);
        }
        const struct alike_print *al = &r->nodes[i].alike;
        if (al->asked) {
            static const char *const label[ALIKE_FIELDS] = {"kernel", "driver", "image", "cuda",
                                                            "nccl"};
            fprintf(f, "  alike  ");
            for (int k = 0; k < ALIKE_FIELDS; k++)
                fprintf(f, " %s %.*s", label[k], k == 2 || k == 4 ? 19 : 40,
                        al->value[k][0] ? al->value[k] : "n/a");
            fputc('\n', f);
        }
        if (!s->ngpu)
            fprintf(f, "  gpu     n/a (%s)\n", s->gpu_note);
        for (int g = 0; g < s->ngpu; g++) {
            const struct probe_gpu *gp = &s->gpu[g];
            fmt_num(a, sizeof a, gp->util_pct, "%", 0);
            fmt_num(b, sizeof b, gp->temp_c, " C", 0);
            fmt_num(c2, sizeof c2, gp->power_w, " W", 1);
            if (gp->mem_used_mib.ok && gp->mem_total_mib.ok)
                snprintf(d, sizeof d, "%.0f/%.0f MiB", gp->mem_used_mib.v, gp->mem_total_mib.v);
            else
                snprintf(d, sizeof d, "n/a");
            fprintf(f, "  gpu %d   %s  util %s  temp %s  power %s  memory %s\n", gp->index,
                    gp->name, a, b, c2, d);
        }
        for (int p = 0; p < s->nprocs; p++) {
            fmt_num(a, sizeof a, s->procs[p].used_mib, " MiB", 0);
            fprintf(f, "  gpu proc %d %s %s\n", s->procs[p].pid, s->procs[p].name, a);
        }
        if (!s->nports)
            fprintf(f, "  rdma    no RDMA devices\n");
        for (int p = 0; p < s->nports; p++) {
            const struct rdma_port *pt = &s->ports[p];
            fprintf(f, "  rdma    %s/%d %s  %s  %s %s  gid %d\n", pt->dev, pt->port,
                    pt->state[0] ? pt->state : "?", pt->rate[0] ? pt->rate : "rate n/a",
                    pt->netdev[0] ? pt->netdev : "-", pt->ipv4[0] ? pt->ipv4 : "-",
                    pt->gid_index);
        }
        if (s->fabric.ok)
            fprintf(f, "  fabric  %s %s/%d  hcas %s  gid %d\n", s->fabric.ifname, s->fabric.ipv4,
                    s->fabric.prefix, s->fabric.hcas, s->fabric.gid_index);
        else
            fprintf(f, "  fabric  none: %s\n", s->fabric.why);
        if (!s->runtime_ok)
            fprintf(f, "  ranks   runtime: %s\n", s->runtime_note);
        else if (!s->ncont)
            fprintf(f, "  ranks   none\n");
        for (int k = 0; k < s->ncont; k++) {
            const struct probe_container *ct = &s->cont[k];
            char up[48] = "";
            time_t started;
            if (ct->running && probe_parse_started(ct->started, &started) == 0) {
                long secs = (long)(time(NULL) - started);
                snprintf(up, sizeof up, " up %ldh%02ldm%02lds", secs / 3600, secs / 60 % 60,
                         secs % 60);
            }
            fprintf(f, "  ranks   %s %s pid %ld%s image %.19s%s%s", ct->name,
                    ct->running ? "running" : "exited", ct->pid, up, ct->image,
                    ct->managed ? "" : " (not started by dsv41-top)",
                    ct->oom_killed ? " OOM-killed" : "");
            if (!ct->running)
                fprintf(f, " exit %d", ct->exit_code);
            if (r->nodes[i].phase[0] && ct->running)
                fprintf(f, " phase: %s", r->nodes[i].phase);
            fputc('\n', f);
        }
    }
    fprintf(f, "api %s  health %ld  models %ld", r->api.url, r->api.health_code,
            r->api.models_code);
    if (r->api.model_id[0])
        fprintf(f, "  (%s, max_model_len %ld)", r->api.model_id, r->api.max_model_len);
    fputc('\n', f);
    if (r->metrics_ok)
        print_metrics(f, r);
    if (r->wedged[0])
        fprintf(f, "ENGINE WEDGED: %s\n", r->wedged);
    for (int i = 0; i < r->nwarnings; i++)
        fprintf(f, "warning: %s\n", r->warnings[i]);
    if (!r->nproblems)
        fprintf(f, "all well\n");
    for (int i = 0; i < r->nproblems; i++)
        fprintf(f, "problem: %s\n", r->problems[i]);
}

static void add_pval(cJSON *o, const char *k, struct pval v)
{
    if (v.ok)
        cJSON_AddNumberToObject(o, k, v.v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *node_json(const struct cluster_node *cn, const struct snapshot *s, time_t down,
                        const char *phase)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", cn->node.name);
    cJSON_AddStringToObject(o, "role", cn->role);
    cJSON_AddNumberToObject(o, "rank", cn->rank);
    cJSON_AddBoolToObject(o, "configured", cn->configured);
    cJSON_AddBoolToObject(o, "reachable", cn->configured && s->reachable);
    if (!cn->configured || !s->reachable) {
        cJSON_AddStringToObject(o, "error", cn->configured ? s->error : "WORKER is not set");
        if (down)
            cJSON_AddNumberToObject(o, "down_since", (double)down);
        return o;
    }
    cJSON_AddStringToObject(o, "hostname", s->hostname);
    cJSON *m = cJSON_AddObjectToObject(o, "mem");
    add_pval(m, "total_kib", s->mem.total_kib);
    add_pval(m, "available_kib", s->mem.available_kib);
    add_pval(m, "free_kib", s->mem.free_kib);
    add_pval(m, "cached_kib", s->mem.cached_kib);
    add_pval(o, "oom_kill", s->oom_kill);
    add_pval(o, "psi_full_avg10", s->psi_full);
    add_pval(o, "free_4mib_blocks", s->frag_blocks);
    cJSON *gpus = cJSON_AddArrayToObject(o, "gpu");
    for (int g = 0; g < s->ngpu; g++) {
        const struct probe_gpu *gp = &s->gpu[g];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "index", gp->index);
        cJSON_AddStringToObject(j, "name", gp->name);
        cJSON_AddStringToObject(j, "uuid", gp->uuid);
        add_pval(j, "util_pct", gp->util_pct);
        add_pval(j, "temp_c", gp->temp_c);
        add_pval(j, "power_w", gp->power_w);
        add_pval(j, "power_limit_w", gp->power_limit_w);
        add_pval(j, "mem_total_mib", gp->mem_total_mib);
        add_pval(j, "mem_used_mib", gp->mem_used_mib);
        add_pval(j, "sm_clock_mhz", gp->sm_clock_mhz);
        cJSON *procs = cJSON_AddArrayToObject(j, "procs");
        for (int p = 0; p < s->nprocs; p++) {
            if (strcmp(s->procs[p].gpu_uuid, gp->uuid) != 0)
                continue;
            cJSON *pj = cJSON_CreateObject();
            cJSON_AddNumberToObject(pj, "pid", s->procs[p].pid);
            cJSON_AddStringToObject(pj, "name", s->procs[p].name);
            add_pval(pj, "used_mib", s->procs[p].used_mib);
            cJSON_AddItemToArray(procs, pj);
        }
        cJSON_AddItemToArray(gpus, j);
    }
    if (s->gpu_note[0])
        cJSON_AddStringToObject(o, "gpu_note", s->gpu_note);
    cJSON *rd = cJSON_AddArrayToObject(o, "rdma");
    for (int p = 0; p < s->nports; p++) {
        const struct rdma_port *pt = &s->ports[p];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "dev", pt->dev);
        cJSON_AddNumberToObject(j, "port", pt->port);
        cJSON_AddStringToObject(j, "state", pt->state);
        cJSON_AddStringToObject(j, "rate", pt->rate);
        cJSON_AddStringToObject(j, "netdev", pt->netdev);
        cJSON_AddStringToObject(j, "ipv4", pt->ipv4);
        if (pt->gid_index >= 0)
            cJSON_AddNumberToObject(j, "gid_index", pt->gid_index);
        else
            cJSON_AddNullToObject(j, "gid_index");
        add_pval(j, "xmit_bytes", pt->xmit_bytes);
        add_pval(j, "rcv_bytes", pt->rcv_bytes);
        cJSON_AddItemToArray(rd, j);
    }
    cJSON *fb = cJSON_AddObjectToObject(o, "fabric");
    cJSON_AddBoolToObject(fb, "ok", s->fabric.ok);
    cJSON_AddStringToObject(fb, "ifname", s->fabric.ifname);
    cJSON_AddStringToObject(fb, "ipv4", s->fabric.ipv4);
    cJSON_AddNumberToObject(fb, "prefix", s->fabric.prefix);
    cJSON_AddStringToObject(fb, "hcas", s->fabric.hcas);
    if (s->fabric.gid_index >= 0)
        cJSON_AddNumberToObject(fb, "gid_index", s->fabric.gid_index);
    else
        cJSON_AddNullToObject(fb, "gid_index");
    if (!s->fabric.ok)
        cJSON_AddStringToObject(fb, "why", s->fabric.why);
    cJSON *cts = cJSON_AddArrayToObject(o, "containers");
    for (int k = 0; k < s->ncont; k++) {
        const struct probe_container *ct = &s->cont[k];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", ct->name);
        cJSON_AddBoolToObject(j, "running", ct->running);
        cJSON_AddNumberToObject(j, "pid", (double)ct->pid);
        cJSON_AddStringToObject(j, "started", ct->started);
        cJSON_AddNumberToObject(j, "exit_code", ct->exit_code);
        cJSON_AddBoolToObject(j, "oom_killed", ct->oom_killed);
        cJSON_AddStringToObject(j, "image", ct->image);
        cJSON_AddBoolToObject(j, "managed", ct->managed);
        time_t started;
        if (ct->running && probe_parse_started(ct->started, &started) == 0)
            cJSON_AddNumberToObject(j, "uptime_s", (double)(time(NULL) - started));
        cJSON_AddItemToArray(cts, j);
    }
    cJSON_AddBoolToObject(o, "runtime_ok", s->runtime_ok);
    if (phase[0])
        cJSON_AddStringToObject(o, "phase", phase);
    return o;
}

cJSON *status_to_json(const struct status_report *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
    for (int i = 0; i < r->n; i++) {
        cJSON *n = node_json(r->nodes[i].cn, &r->nodes[i].snap, r->nodes[i].down_since,
                             r->nodes[i].phase);
        const struct alike_print *al = &r->nodes[i].alike;
        if (al->asked) {
            static const char *const keys[ALIKE_FIELDS] = {"kernel", "driver", "image_id", "cuda",
                                                           "nccl_sha256"};
            cJSON *a = cJSON_AddObjectToObject(n, "alike");
            for (int k = 0; k < ALIKE_FIELDS; k++) {
                if (al->value[k][0])
                    cJSON_AddStringToObject(a, keys[k], al->value[k]);
                else
                    cJSON_AddNullToObject(a, keys[k]);
            }
            if (al->nccl_path[0])
                cJSON_AddStringToObject(a, "nccl_path", al->nccl_path);
        }
        if (r->nodes[i].guard[0]) {
            cJSON *g = cJSON_AddObjectToObject(n, "guard");
            cJSON_AddBoolToObject(g, "running", r->nodes[i].guard_rc == 0);
            cJSON_AddStringToObject(g, "desc", r->nodes[i].guard);
            /* null where there is no systemd (or it was not asked): n/a, not "disabled" */
            const struct units_state *u = &r->nodes[i].unit;
            cJSON *uj = cJSON_AddObjectToObject(g, "unit");
            cJSON_AddStringToObject(uj, "name", UNITS_GUARD);
            if (u->known)
                cJSON_AddBoolToObject(uj, "systemd", u->systemd);
            else
                cJSON_AddNullToObject(uj, "systemd");
            if (u->systemd) {
                cJSON_AddStringToObject(uj, "enabled", u->enabled);
                cJSON_AddStringToObject(uj, "active", u->active[0] ? u->active : "n/a");
            } else {
                cJSON_AddNullToObject(uj, "enabled");
                cJSON_AddNullToObject(uj, "active");
            }
        }
        cJSON_AddItemToArray(nodes, n);
    }
    cJSON *api = cJSON_AddObjectToObject(root, "api");
    cJSON_AddStringToObject(api, "url", r->api.url);
    cJSON_AddNumberToObject(api, "health", (double)r->api.health_code);
    cJSON_AddNumberToObject(api, "models", (double)r->api.models_code);
    if (r->api.model_id[0])
        cJSON_AddStringToObject(api, "model", r->api.model_id);
    if (r->api.max_model_len >= 0)
        cJSON_AddNumberToObject(api, "max_model_len", (double)r->api.max_model_len);
    if (r->api.error[0])
        cJSON_AddStringToObject(api, "error", r->api.error);
    if (r->metrics_ok) {
        cJSON *m = cJSON_AddObjectToObject(api, "metrics");
        add_pval(m, "running", r->metrics.running);
        add_pval(m, "waiting", r->metrics.waiting);
        add_pval(m, "kv_usage", r->metrics.kv_usage);
        cJSON *names = cJSON_AddArrayToObject(m, "names");
        for (int i = 0; i < METRICS_NFIELDS; i++) {
            const char *nm = metrics_field(&r->metrics, i, NULL, NULL);
            if (nm && !strstr(nm, "_seconds_count"))
                cJSON_AddItemToArray(names, cJSON_CreateString(nm));
        }
        add_pval(m, "prompt_tokens_total", r->metrics.prompt_tokens);
        add_pval(m, "generation_tokens_total", r->metrics.generation_tokens);
        add_pval(m, "prefix_cache_queries_total", r->metrics.prefix_queries);
        add_pval(m, "prefix_cache_hits_total", r->metrics.prefix_hits);
        add_pval(m, "spec_draft_tokens_total", r->metrics.spec_draft_tokens);
        add_pval(m, "spec_accepted_tokens_total", r->metrics.spec_accepted);
        if (r->rates_ok) {
            cJSON *rt = cJSON_AddObjectToObject(m, "rates");
            cJSON_AddNumberToObject(rt, "window_s", r->rates_window_s);
            add_pval(rt, "generation_tps", r->rates.generation_tps);
            add_pval(rt, "prompt_tps", r->rates.prompt_tps);
            add_pval(rt, "mean_ttft_s", r->rates.mean_ttft_s);
            add_pval(rt, "spec_acceptance", r->rates.spec_acceptance);
            add_pval(rt, "spec_mean_accept_len", r->rates.spec_mean_accept_len);
        }
    }
    if (r->wedged[0])
        cJSON_AddStringToObject(api, "wedged", r->wedged);
    else
        cJSON_AddNullToObject(api, "wedged");
    cJSON_AddBoolToObject(root, "ok", r->nproblems == 0);
    cJSON *p = cJSON_AddArrayToObject(root, "problems");
    for (int i = 0; i < r->nproblems; i++)
        cJSON_AddItemToArray(p, cJSON_CreateString(r->problems[i]));
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (int i = 0; i < r->nwarnings; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(r->warnings[i]));
    return root;
}

const struct usage_doc status_doc = {
    "status", NULL, "every node, the fabric, the ranks and the API",
    "Shows every node (memory, GPU, RDMA, fabric, ranks) and the API, then one line per problem.",
    (const struct usage_exit[]){{0, "all is well"},
                                {1, "a problem (each named)"},
                                {2, "a usage or configuration error"},
                                {-1, NULL}},
    (const struct usage_opt[]){{"--json", NULL, "one JSON object for scripts"}, {NULL, NULL, NULL}}};

int cmd_status(const struct config *c, int argc, char **argv)
{
    bool json = false;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
        if (ch == 'j') {
            json = true;
        } else {
            FILE *o = ch == 'h' ? stdout : stderr;
            usage_print(o, &status_doc);
            return ch == 'h' ? 0 : 2;
        }
    }
    struct cluster cl;
    if (cluster_open_for("status", c, &cl) < 0)
        return 2;
    struct status_report *r = malloc(sizeof *r);
    if (!r) {
        cluster_close(&cl);
        return 2;
    }
    status_collect(c, &cl, r);
    if (json) {
        cJSON *j = status_to_json(r);
        char *s = cJSON_Print(j);
        if (s)
            printf("%s\n", s);
        free(s);
        cJSON_Delete(j);
    } else {
        status_print_text(stdout, r);
    }
    int rc = r->nproblems ? 1 : 0;
    free(r);
    cluster_close(&cl);
    return rc;
}
