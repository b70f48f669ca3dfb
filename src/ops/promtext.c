#include "promtext.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guardview.h"

/* "# HELP" and "# TYPE" once per family, its samples after. */
static void family(struct buf *o, const char *name, const char *type, const char *help)
{
    buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label's value as the format escapes it: backslash, quote, newline. */
static void label_value(struct buf *o, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            buf_printf(o, "\\%c", *v);
        else if (*v == '\n')
            buf_puts(o, "\\n");
        else
            buf_printf(o, "%c", *v);
    }
}

/* name{k1="v1",k2="v2"} value; the labels as NULL-terminated pairs. */
static void sample(struct buf *o, const char *name, double v, ...)
{
    buf_puts(o, name);
    va_list ap;
    va_start(ap, v);
    const char *k;
    int n = 0;
    while ((k = va_arg(ap, const char *))) {
        const char *val = va_arg(ap, const char *);
        buf_printf(o, "%s%s=\"", n++ ? "," : "{", k);
        label_value(o, val);
        buf_puts(o, "\"");
    }
    va_end(ap);
    if (n)
        buf_puts(o, "}");
    /* %.17g: a byte counter of 2^53 and more keeps every digit it can */
    if (isnan(v))
        buf_puts(o, " NaN\n");
    else
        buf_printf(o, " %.17g\n", v);
}

typedef bool (*node_get)(const struct state_node *sn, double *v);

static bool pv(struct pval p, double scale, double *v)
{
    if (p.ok)
        *v = p.v * scale;
    return p.ok;
}

static bool get_up(const struct state_node *sn, double *v)
{
    *v = sn->snap.reachable;
    return true;
}
static bool get_avail(const struct state_node *sn, double *v)
{
    return sn->snap.reachable && pv(sn->snap.mem.available_kib, 1024, v);
}
static bool get_total(const struct state_node *sn, double *v)
{
    return sn->snap.reachable && pv(sn->snap.mem.total_kib, 1024, v);
}
static bool get_psi_full(const struct state_node *sn, double *v)
{
    return sn->snap.reachable && pv(sn->snap.psi_full, 0.01, v);
}
static bool get_psi_some(const struct state_node *sn, double *v)
{
    return sn->snap.reachable && pv(sn->snap.psi_some, 0.01, v);
}
static bool get_blocks(const struct state_node *sn, double *v)
{
    return sn->snap.reachable && pv(sn->snap.frag_blocks, 1, v);
}
static bool get_oom(const struct state_node *sn, double *v)
{
    return sn->snap.reachable && pv(sn->snap.oom_kill, 1, v);
}
/* The guard's heartbeat carries the NVRM lines of the last 10 minutes
 * (guardctl_signals: ", NVRM N"); a guard from before the signals, none. */
static bool get_nvrm(const struct state_node *sn, double *v)
{
    const char *p = strstr(sn->guard_desc, ", NVRM ");
    if (!p || (sn->guard != GUARD_VIEW_OK && sn->guard != GUARD_VIEW_WARN &&
               sn->guard != GUARD_VIEW_FIRED))
        return false;
    char *end;
    long n = strtol(p + 7, &end, 10);
    if (end == p + 7 || n < 0)
        return false;
    *v = (double)n;
    return true;
}
static bool get_age(const struct state_node *sn, double *v)
{
    *v = sn->snap.reachable ? sn->snap.late_s : NAN;
    return sn->snap.reachable;
}

static const struct {
    const char *name, *type, *help;
    node_get get;
} NODE_FAMS[] = {
    {"dsv41_node_up", "gauge", "1 when the node answered its last sample over ssh", get_up},
    {"dsv41_node_sample_late_seconds", "gauge",
     "how old the node's newest sample is when the last one did not come in time (0: fresh)",
     get_age},
    {"dsv41_memory_available_bytes", "gauge", "MemAvailable of /proc/meminfo", get_avail},
    {"dsv41_memory_total_bytes", "gauge", "MemTotal of /proc/meminfo", get_total},
    {"dsv41_memory_pressure_full_ratio", "gauge",
     "PSI memory full avg10 (share of the last 10 s every task stalled on memory)", get_psi_full},
    {"dsv41_memory_pressure_some_ratio", "gauge",
     "PSI memory some avg10 (share of the last 10 s some task stalled on memory)", get_psi_some},
    {"dsv41_memory_free_4mib_blocks", "gauge",
     "free blocks of 4 MiB or more (/proc/buddyinfo order >= 10): what the GPU driver can map",
     get_blocks},
    {"dsv41_oom_kills_total", "counter", "oom_kill of /proc/vmstat", get_oom},
    {"dsv41_kernel_nvrm_lines", "gauge",
     "NVRM lines in the kernel log in the last 10 minutes, as the node's memory guard counts them",
     get_nvrm},
};

static const char *const GUARD_STATES[] = {"unknown", "ok", "fired", "stale", "none", "warn"};

static void nodes(const struct state *s, struct buf *o)
{
    for (size_t f = 0; f < sizeof NODE_FAMS / sizeof *NODE_FAMS; f++) {
        family(o, NODE_FAMS[f].name, NODE_FAMS[f].type, NODE_FAMS[f].help);
        for (int i = 0; i < s->nnodes; i++) {
            double v;
            const struct state_node *sn = &s->nodes[i];
            if (sn->configured && sn->have && NODE_FAMS[f].get(sn, &v))
                sample(o, NODE_FAMS[f].name, v, "node", sn->name, NULL);
        }
    }
}

static void gpus(const struct state *s, struct buf *o)
{
    static const struct {
        const char *name, *help;
        size_t off;
        double scale;
    } G[] = {
        {"dsv41_gpu_memory_used_bytes", "GPU memory in use (NVML; n/a on a GB10's unified memory)",
         offsetof(struct probe_gpu, mem_used_mib), 1048576},
        {"dsv41_gpu_memory_total_bytes", "GPU memory (NVML)", offsetof(struct probe_gpu, mem_total_mib),
         1048576},
        {"dsv41_gpu_utilization_ratio", "GPU utilisation (NVML), 0..1",
         offsetof(struct probe_gpu, util_pct), 0.01},
        {"dsv41_gpu_power_watts", "GPU power draw (NVML)", offsetof(struct probe_gpu, power_w), 1},
        {"dsv41_gpu_temperature_celsius", "GPU temperature (NVML)",
         offsetof(struct probe_gpu, temp_c), 1},
    };
    for (size_t f = 0; f < sizeof G / sizeof *G; f++) {
        family(o, G[f].name, "gauge", G[f].help);
        for (int i = 0; i < s->nnodes; i++) {
            const struct state_node *sn = &s->nodes[i];
            if (!sn->configured || !sn->have || !sn->snap.reachable)
                continue;
            for (int g = 0; g < sn->snap.ngpu; g++) {
                const struct pval *p =
                    (const struct pval *)((const char *)&sn->snap.gpu[g] + G[f].off);
                char idx[16];
                snprintf(idx, sizeof idx, "%d", sn->snap.gpu[g].index);
                if (p->ok)
                    sample(o, G[f].name, p->v * G[f].scale, "node", sn->name, "gpu", idx, NULL);
            }
        }
    }
}

/* "200 Gb/sec (4X HDR)" in bytes per second; false when it does not say. */
static bool port_rate(const char *rate, double *v)
{
    char *end;
    double g = strtod(rate, &end);
    if (end == rate || g <= 0 || strncmp(end, " Gb/sec", 7) != 0)
        return false;
    *v = g * 1e9 / 8;
    return true;
}

static void ports(const struct state *s, struct buf *o)
{
    static const char *const F[][3] = {
        {"dsv41_rdma_port_up", "gauge", "1 when the RDMA port's state is ACTIVE"},
        {"dsv41_rdma_port_rate_bytes_per_second", "gauge", "the port's link rate (sysfs rate)"},
        {"dsv41_rdma_port_receive_bytes_total", "counter", "port_rcv_data (bytes)"},
        {"dsv41_rdma_port_transmit_bytes_total", "counter", "port_xmit_data (bytes)"},
        {"dsv41_rdma_port_errors_total", "counter",
         "the port's error counters summed (symbol errors, discards, link downs, NAK and "
         "sequence errors)"},
    };
    for (size_t f = 0; f < sizeof F / sizeof *F; f++) {
        family(o, F[f][0], F[f][1], F[f][2]);
        for (int i = 0; i < s->nnodes; i++) {
            const struct state_node *sn = &s->nodes[i];
            if (!sn->configured || !sn->have || !sn->snap.reachable)
                continue;
            for (int p = 0; p < sn->snap.nports; p++) {
                const struct rdma_port *rp = &sn->snap.ports[p];
                char port[16];
                snprintf(port, sizeof port, "%d", rp->port);
                double v = 0;
                bool ok = false;
                switch (f) {
                case 0: v = rp->state_num == 4; ok = rp->state_num >= 0; break;
                case 1: ok = port_rate(rp->rate, &v); break;
                case 2: ok = pv(rp->rcv_bytes, 1, &v); break;
                case 3: ok = pv(rp->xmit_bytes, 1, &v); break;
                default: ok = pv(rp->errors, 1, &v); break;
                }
                if (ok)
                    sample(o, F[f][0], v, "node", sn->name, "device", rp->dev, "port", port,
                           "netdev", rp->netdev, NULL);
            }
        }
    }
}

static void guards_ranks(const struct state *s, const struct ops_counts *k, struct buf *o)
{
    family(o, "dsv41_guard_state", "gauge",
           "the node's memory guard: 1 for the state it is in (ok, warn, fired, stale, none, "
           "unknown)");
    for (int i = 0; i < s->nnodes; i++) {
        const struct state_node *sn = &s->nodes[i];
        if (!sn->configured || !sn->have)
            continue;
        for (size_t g = 0; g < sizeof GUARD_STATES / sizeof *GUARD_STATES; g++)
            sample(o, "dsv41_guard_state", (size_t)sn->guard == g, "node", sn->name, "state",
                   GUARD_STATES[g], NULL);
    }
    family(o, "dsv41_guard_firings_total", "counter",
           "memory guard firings seen since this process started");
    for (int i = 0; i < s->nnodes && i < CLUSTER_MAX_NODES; i++)
        if (s->nodes[i].configured)
            sample(o, "dsv41_guard_firings_total", k->guard_firings[i], "node", s->nodes[i].name,
                   NULL);
    family(o, "dsv41_rank_up", "gauge", "1 when the rank's container runs");
    int up = 0, known = 0;
    for (int i = 0; i < s->nnodes; i++) {
        const struct state_node *sn = &s->nodes[i];
        if (!sn->configured || !sn->have || !sn->snap.reachable || !sn->snap.ct_sampled)
            continue;
        const struct container_info *ct = snapshot_rank_container(&sn->snap, s->ranks[i].rank);
        char rank[16];
        snprintf(rank, sizeof rank, "%d", s->ranks[i].rank);
        sample(o, "dsv41_rank_up", ct && ct->running, "node", sn->name, "rank", rank, NULL);
        up += ct && ct->running;
        known++;
    }
    family(o, "dsv41_ranks_up", "gauge", "ranks running, of dsv41_ranks_configured");
    if (known)
        sample(o, "dsv41_ranks_up", up, NULL);
    family(o, "dsv41_ranks_configured", "gauge", "ranks the deployment has");
    sample(o, "dsv41_ranks_configured", s->nranks, NULL);
}

static void server(const struct state *s, struct buf *o)
{
    const struct state_server *sv = &s->server;
    family(o, "dsv41_api_up", "gauge", "1 when /health and /v1/models answer 200");
    if (sv->have)
        sample(o, "dsv41_api_up", sv->api.health_code == 200 && sv->api.models_code == 200, NULL);
    family(o, "dsv41_engine_wedged", "gauge",
           "1 when the engine is called wedged (requests with nothing moving for WEDGE_SECONDS, or "
           "the liveness probe got no token)");
    if (sv->have)
        sample(o, "dsv41_engine_wedged", sv->wedged[0] != '\0', NULL);
    family(o, "dsv41_liveness_probe_ok", "gauge", "1 when the last liveness probe got its token");
    family(o, "dsv41_liveness_probe_seconds", "gauge", "the last probe's time to its token");
    if (sv->live.have) {
        sample(o, "dsv41_liveness_probe_ok", sv->live.ok, NULL);
        if (sv->live.ok)
            sample(o, "dsv41_liveness_probe_seconds", sv->live.latency_s, NULL);
    }
}

static void download(const struct state *s, const struct opsfiles *f, struct buf *o)
{
    const struct state_download *d = &s->download;
    family(o, "dsv41_download_running", "gauge", "1 while a download into MODEL_DIR runs");
    family(o, "dsv41_download_size_bytes", "gauge", "the download's bytes in all");
    family(o, "dsv41_download_done_bytes", "gauge", "the download's bytes landed and verified");
    family(o, "dsv41_download_rate_bytes_per_second", "gauge", "the download's rate");
    if (d->have) {
        sample(o, "dsv41_download_running", d->pid > 0, NULL);
        sample(o, "dsv41_download_size_bytes", (double)d->total, NULL);
        sample(o, "dsv41_download_done_bytes", (double)d->done, NULL);
        if (d->rate.ok)
            sample(o, "dsv41_download_rate_bytes_per_second", d->rate.v, NULL);
    }
    family(o, "dsv41_copy_running", "gauge", "1 while copy-to-peer runs from this head");
    family(o, "dsv41_copy_size_bytes", "gauge", "the copy's bytes to send");
    family(o, "dsv41_copy_done_bytes", "gauge", "the copy's bytes landed on the peer");
    if (f->read) {
        sample(o, "dsv41_copy_running", f->copying, NULL);
        if (f->copying) {
            sample(o, "dsv41_copy_size_bytes", (double)f->copy_need, "node", f->copy_node, NULL);
            sample(o, "dsv41_copy_done_bytes", (double)f->copy_landed, "node", f->copy_node, NULL);
        }
    }
}

static void files(const struct state *s, const struct opsfiles *f, const struct ops_counts *k,
                  struct buf *o)
{
    family(o, "dsv41_incidents_total", "counter", "incident directories under STATE_DIR/incidents");
    family(o, "dsv41_events_total", "counter", "events seen since this process started, by kind");
    family(o, "dsv41_bench_tokens_per_second", "gauge",
           "the newest bench run's figures (the seed's table), by test");
    family(o, "dsv41_bench_timestamp_seconds", "gauge", "when the newest bench run was");
    family(o, "dsv41_bench_regression", "gauge",
           "1 when the newest bench of this configuration is below the accepted baseline");
    family(o, "dsv41_acceptance_pass", "gauge",
           "the newest acceptance's verdict: 1 pass, 0 fail (none: no data)");
    family(o, "dsv41_supervise_enabled", "gauge", "1 when this process supervises (SUPERVISE=1)");
    family(o, "dsv41_supervise_restarts_total", "counter",
           "relaunches by the supervisor (STATE_DIR/supervise.tsv), by cause");
    family(o, "dsv41_supervise_restarts_last_hour", "gauge", "relaunches in the last hour");
    family(o, "dsv41_supervise_gave_up", "gauge",
           "1 when the supervisor stopped trying (SUPERVISE_MAX an hour, or a guard's firing)");
    for (int i = 0; i < EVENT_NKINDS; i++)
        sample(o, "dsv41_events_total", k->events[i], "kind", events_kind_name(i), NULL);
    sample(o, "dsv41_supervise_enabled", k->supervise, NULL);
    bool reg = false;
    for (int i = 0; s->server.have && i < s->server.nwarnings; i++)
        reg |= strncmp(s->server.warnings[i], "bench of ", 9) == 0;
    if (s->server.have)
        sample(o, "dsv41_bench_regression", reg, NULL);
    if (!f->read)
        return;
    /* the kinds that leave a directory (incident.c, supervise.c) */
    static const char *const INCIDENT_KINDS[] = {"guard-fired", "wedged", "rank-exited", "restart"};
    for (size_t i = 0; i < sizeof INCIDENT_KINDS / sizeof *INCIDENT_KINDS; i++)
        sample(o, "dsv41_incidents_total", f->incidents[events_kind_index(INCIDENT_KINDS[i])],
               "kind", INCIDENT_KINDS[i], NULL);
    if (f->have_bench) {
        for (int i = 0; i < f->bench.n; i++)
            if (f->bench.v[i] >= 0)
                sample(o, "dsv41_bench_tokens_per_second", f->bench.v[i], "test",
                       f->bench.name[i], "label", f->bench.label, NULL);
        if (f->bench_epoch > 0)
            sample(o, "dsv41_bench_timestamp_seconds", f->bench_epoch, NULL);
    }
    if (f->accept_pass >= 0)
        sample(o, "dsv41_acceptance_pass", f->accept_pass, NULL);
    for (int i = 0; i < f->sup.ncauses; i++)
        sample(o, "dsv41_supervise_restarts_total", f->sup.causes[i].restarts, "cause",
               f->sup.causes[i].cause, NULL);
    sample(o, "dsv41_supervise_restarts_last_hour", f->sup.nhour, NULL);
    sample(o, "dsv41_supervise_gave_up", f->sup.gave_up, NULL);
}

void promtext_render(const struct state *s, const struct opsfiles *f, const struct ops_counts *k,
                     struct buf *o)
{
    nodes(s, o);
    gpus(s, o);
    ports(s, o);
    guards_ranks(s, k, o);
    server(s, o);
    download(s, f, o);
    files(s, f, k, o);
    family(o, "dsv41_alerts_total", "counter", "alerts by how their delivery ended");
    sample(o, "dsv41_alerts_total", (double)k->alerts_sent, "result", "sent", NULL);
    sample(o, "dsv41_alerts_total", (double)k->alerts_failed, "result", "failed", NULL);
    sample(o, "dsv41_alerts_total", (double)k->alerts_dropped, "result", "dropped", NULL);
    family(o, "dsv41_exporter_start_time_seconds", "gauge", "when this process started");
    sample(o, "dsv41_exporter_start_time_seconds", k->started, NULL);
}
