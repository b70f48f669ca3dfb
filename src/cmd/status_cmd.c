/* `dsv41-top status`: the report status_collect (src/deploy/status.c)
 * gathers, printed as text or JSON; its exit status from the problems. */
#include "status_out.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "text.h"
#include "usage.h"

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
            const struct container_info *ct = &s->cont[k];
            char up[48] = "";
            time_t started;
            if (ct->running && inspect_parse_started(ct->started, &started) == 0) {
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
        const struct container_info *ct = &s->cont[k];
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
        if (ct->running && inspect_parse_started(ct->started, &started) == 0)
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
