/* panes: the header, the nodes, the server and the fabric. */
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "draw_util.h"
#include "guardview.h"
#include "mono.h"
#include "panes.h"

static void human_rate(char *out, size_t sz, struct pval bps)
{
    if (!bps.ok) {
        snprintf(out, sz, "n/a");
        return;
    }
    static const char *U[] = {"B/s", "kB/s", "MB/s", "GB/s"};
    double v = bps.v;
    int k = 0;
    while (v >= 1000 && k < 3) {
        v /= 1000;
        k++;
    }
    snprintf(out, sz, k ? "%.1f %s" : "%.0f %s", v, U[k]);
}

void pane_header(struct ui *u)
{
    struct state *s = u->s;
    struct rect r = u->l.header;
    int a = draw_attr(u, ROLE_HEADER);
    fill(u, r.y, 0, r.w, a);
    /* the most urgent thing takes the header */
    char banner[400] = "";
    for (int i = 0; i < s->nnodes && !banner[0]; i++)
        if (s->nodes[i].guard == GUARD_VIEW_FIRED)
            snprintf(banner, sizeof banner, " MEMORY GUARD FIRED on %s: %s", s->nodes[i].name,
                     s->nodes[i].guard_event);
    if (!banner[0] && s->server.wedged[0])
        snprintf(banner, sizeof banner, " ENGINE WEDGED: %s", s->server.wedged);
    for (int i = 0; i < s->nnodes && !banner[0]; i++)
        if (s->nodes[i].fabric_drift[0])
            snprintf(banner, sizeof banner, " FABRIC CHANGED on %s: %s (restart the deployment)",
                     s->nodes[i].name, s->nodes[i].fabric_drift);
    for (int i = 0; i < s->nnodes && !banner[0]; i++)
        if (s->nodes[i].configured &&
            (s->nodes[i].guard == GUARD_VIEW_STALE || s->nodes[i].guard == GUARD_VIEW_NONE) &&
            s->nodes[i].snap.ncont > 0)
            snprintf(banner, sizeof banner, " ALARM: %s has ranks but its memory guard is %s",
                     s->nodes[i].name, guardview_word(s->nodes[i].guard));
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char clock[16];
    strftime(clock, sizeof clock, "%H:%M:%S", &tm);
    if (banner[0]) {
        int b = draw_attr(u, ROLE_BANNER);
        fill(u, r.y, 0, r.w, b);
        put(u, r.y, 0, r.w - 10, b, banner);
        put(u, r.y, r.w - 9, 9, b, clock);
        return;
    }
    const char *api = !s->server.have                 ? "API ..."
                      : s->server.api.health_code != 200 ? "API down"
                      : s->server.api.models_code != 200 ? "API no models"
                                                          : "API up";
    int x = put(u, r.y, 0, r.w, a, " dsv41-top ");
    x += putf(u, r.y, x, r.w - x, a, "| %d node%s | %s | %s%s%s", s->nnodes,
              s->nnodes == 1 ? "" : "s", api, u->readonly ? "read-only | " : "", u->title,
              u->title[0] ? " |" : "");
    put(u, r.y, r.w - 9, 9, a, clock);
}

static int level_role(double avail_gib, double floor_gib)
{
    if (avail_gib < floor_gib * 2)
        return ROLE_BAD;
    return avail_gib < 10 ? ROLE_WARN : ROLE_NORMAL;
}

static void node_column(struct ui *u, int i, struct rect c)
{
    const struct state_node *n = &u->s->nodes[i];
    const struct snapshot *sn = &n->snap;
    int norm = draw_attr(u, ROLE_NORMAL), bad = draw_attr(u, ROLE_BAD), dim = draw_attr(u, ROLE_DIM);
    int y = c.y + 1, end = c.y + c.h;
    char up[64] = "up";
    if (!n->configured)
        snprintf(up, sizeof up, "not configured");
    else if (!n->have)
        snprintf(up, sizeof up, "...");
    else if (!sn->reachable && n->down_since) {
        struct tm tm;
        localtime_r(&n->down_since, &tm);
        strftime(up, sizeof up, "DOWN since %H:%M:%S", &tm);
    } else if (!sn->reachable)
        snprintf(up, sizeof up, "DOWN");
    else if (sn->late_s >= 3) /* the values below are its last ones */
        snprintf(up, sizeof up, "NO ANSWER for %d s", sn->late_s);
    title(u, c, PANE_NODES, "%s %s", n->name, up);
    if (!n->configured) {
        put(u, y, c.x, c.w, dim, "WORKER is not set");
        return;
    }
    if (!n->have || !sn->reachable) {
        for (const char *p = sn->error; *p && y < end; y++) { /* the reason, wrapped */
            int cols = put(u, y, c.x, c.w, bad, p);
            p += cols ? (size_t)cols : strlen(p);
        }
        return;
    }
    double floor_gib = config_num(u->c, CFG_MEMGUARD_GIB);
    const struct probe_mem *m = &sn->mem;
    char v1[32], v2[32], v3[32];
    if (m->available_kib.ok && m->total_kib.ok) {
        double av = m->available_kib.v / 1048576, tot = m->total_kib.v / 1048576;
        putf(u, y++, c.x, c.w, draw_attr(u, level_role(av, floor_gib)), "avail %.1f / %.1f GiB",
             av, tot);
        char bar[256];
        double used = tot > 0 ? 1 - av / tot : 0;
        int gw = c.w - 5 > 1 ? c.w - 5 : 1;
        graph_gauge(used, gw, u->glyphs, bar, sizeof bar);
        int x = put(u, y, c.x, gw, draw_attr(u, ROLE_GAUGE), bar);
        putf(u, y++, c.x + x, c.w - x, norm, " %3.0f%%", used * 100);
    } else {
        put(u, y++, c.x, c.w, bad, "memory: n/a");
        y++;
    }
    putf(u, y++, c.x, c.w, norm, "free %s cache %s oom %s",
         fmt_pval(v1, sizeof v1, (struct pval){m->free_kib.ok, m->free_kib.v / 1048576}, 1),
         fmt_pval(v2, sizeof v2, (struct pval){m->cached_kib.ok, m->cached_kib.v / 1048576}, 1),
         fmt_pval(v3, sizeof v3, sn->oom_kill, 0));
    /* the guard's other signals; warned levels in the warning colour */
    double psi_warn = config_num(u->c, CFG_MEMGUARD_PSI_WARN);
    double frag_warn = config_num(u->c, CFG_MEMGUARD_FRAG_WARN);
    bool stressed = (sn->psi_full.ok && psi_warn > 0 && sn->psi_full.v >= psi_warn) ||
                    (sn->frag_blocks.ok && frag_warn > 0 && sn->frag_blocks.v < frag_warn);
    putf(u, y++, c.x, c.w, stressed ? draw_attr(u, ROLE_WARN) : norm, "psi %s%s 4M blocks %s",
         fmt_pval(v1, sizeof v1, sn->psi_full, 1), sn->psi_full.ok ? "%" : "",
         fmt_pval(v2, sizeof v2, sn->frag_blocks, 0));
    int graph_rows = end - y - 3;
    if (graph_rows > 0) {
        static char rows[16][1024];
        int gr = graph_rows < 16 ? graph_rows : 16;
        float vals[STATE_HIST];
        int nv = 0;
        unsigned have = n->nhist_avail < STATE_HIST ? n->nhist_avail : STATE_HIST;
        for (unsigned k = have; k-- > 0;)
            vals[nv++] = state_hist(n->hist_avail_gib, n->nhist_avail, k);
        double top = m->total_kib.ok ? m->total_kib.v / 1048576 : 1;
        graph_render(vals, nv, 0, top, c.w, gr, u->glyphs, &rows[0][0], sizeof rows[0]);
        for (int k = 0; k < gr; k++)
            put(u, y++, c.x, c.w, draw_attr(u, ROLE_GRAPH), rows[k]);
    }
    if (sn->ngpu > 0) {
        const struct probe_gpu *g = &sn->gpu[0];
        putf(u, y++, c.x, c.w, norm, "GPU %s%% %sC %sW", fmt_pval(v1, sizeof v1, g->util_pct, 0),
             fmt_pval(v2, sizeof v2, g->temp_c, 0), fmt_pval(v3, sizeof v3, g->power_w, 1));
        double procs = 0;
        bool any = false;
        for (int k = 0; k < sn->nprocs; k++)
            if (sn->procs[k].used_mib.ok) {
                procs += sn->procs[k].used_mib.v;
                any = true;
            }
        if (g->mem_used_mib.ok)
            snprintf(v1, sizeof v1, "%.1fG", g->mem_used_mib.v / 1024);
        else
            snprintf(v1, sizeof v1, "n/a");
        if (any)
            snprintf(v2, sizeof v2, "%.1fG", procs / 1024);
        else
            snprintf(v2, sizeof v2, "n/a");
        putf(u, y++, c.x, c.w, norm, "mem %s procs %d %s", v1, sn->nprocs, v2);
    } else {
        putf(u, y++, c.x, c.w, dim, "GPU n/a%s%s", sn->gpu_note[0] ? ": " : "", sn->gpu_note);
        y++;
    }
    int ga = n->guard == GUARD_VIEW_OK      ? draw_attr(u, ROLE_GOOD)
             : n->guard == GUARD_VIEW_WARN    ? draw_attr(u, ROLE_WARN)
             : n->guard == GUARD_VIEW_UNKNOWN ? dim
                                              : bad;
    putf(u, y++, c.x, c.w, ga, "guard %s %s", guardview_word(n->guard),
         n->guard_event[0] ? n->guard_event : n->guard_desc);
}

void pane_nodes(struct ui *u)
{
    int per = u->l.ncols, first = u->node_page * per;
    if (first >= u->s->nnodes)
        first = u->node_page = 0;
    for (int k = 0; k < per && first + k < u->s->nnodes; k++)
        node_column(u, first + k, u->l.col[k]);
}

/* Each rank's image, named by the reference an acceptance measured (short
 * digest, accepted or not), and the last acceptance's verdict. */
static int draw_images(struct ui *u, struct rect r, int y, int end)
{
    static struct accept_view v;
    static double loaded_at;
    double now = mono_s();
    if (loaded_at == 0 || now - loaded_at >= 5) { /* local files */
        char dir[700];
        snprintf(dir, sizeof dir, "%s/accept", u->state_dir);
        accept_view_load(dir, &v);
        loaded_at = now;
    }
    if (!v.accepted[0] && !v.nimg && !v.last[0])
        return y; /* accept never ran here: nothing to name the images by */
    for (int i = 0; i < u->s->nnodes && y < end; i++) {
        const struct snapshot *sn = &u->s->nodes[i].snap;
        for (int k = 0; k < sn->ncont && y < end; k++) {
            const struct container_info *ct = &sn->cont[k];
            if (!ct->running || strncmp(ct->name, "dsv41-r", 7) != 0)
                continue;
            char name[80];
            bool accepted;
            accept_view_name(&v, ct->image, name, sizeof name, &accepted);
            const char *id = strncmp(ct->image, "sha256:", 7) == 0 ? ct->image + 7 : ct->image;
            if (name[0])
                putf(u, y++, r.x, r.w, draw_attr(u, accepted ? ROLE_NORMAL : ROLE_WARN),
                     "%s %s %s %s", ct->name + 6, u->s->nodes[i].name, name,
                     accepted ? "accepted" : "NOT accepted");
            else
                putf(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "%s %s image id %.12s%s",
                     ct->name + 6, u->s->nodes[i].name, id, " unmeasured");
        }
    }
    if (v.last[0] && y < end)
        putf(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "accept: %s", v.last);
    return y;
}

void pane_server(struct ui *u)
{
    const struct state_server *sv = &u->s->server;
    struct rect r = u->l.pane[PANE_SERVER];
    int norm = draw_attr(u, ROLE_NORMAL), bad = draw_attr(u, ROLE_BAD);
    title(u, r, PANE_SERVER, "server %s", sv->api.url);
    int y = r.y + 1, end = r.y + r.h;
    char a[32], b[32];
    if (!sv->have) {
        put(u, y, r.x, r.w, draw_attr(u, ROLE_DIM), "asking...");
        return;
    }
    if (sv->wedged[0])
        putf(u, y++, r.x, r.w, draw_attr(u, ROLE_BANNER), "ENGINE WEDGED: %s", sv->wedged);
    if (sv->api.health_code == 200 && sv->api.models_code == 200) {
        putf(u, y++, r.x, r.w, draw_attr(u, ROLE_GOOD), "healthy: %s", sv->api.model_id);
    } else if (sv->api.health_code == 200) {
        putf(u, y++, r.x, r.w, bad, "/health 200, /v1/models %ld", sv->api.models_code);
    } else {
        putf(u, y++, r.x, r.w, bad, "down: %s",
             sv->api.health_code ? "/health not 200" : sv->api.error);
    }
    if (sv->api.health_code == 200 && y < end) {
        const struct liveness *lv = &sv->live;
        double ago = mono_s() - lv->at;
        if (lv->in_flight)
            putf(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "probe: asking for a token...");
        else if (lv->have && lv->ok)
            putf(u, y++, r.x, r.w, norm, "probe: token in %.2f s, %.0f s ago", lv->latency_s, ago);
        else if (lv->have)
            putf(u, y++, r.x, r.w, bad, "probe FAILED %.0f s ago: %s", ago, lv->why);
        else
            putf(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "probe: n/a until idle %s s",
                 config_str(u->c, CFG_PROBE_IDLE_S));
    }
    if (sv->api.health_code != 200) /* booting: each rank's phase from its log */
        for (int i = 0; i < u->s->nnodes && y < end; i++)
            if (u->s->nodes[i].phase[0])
                putf(u, y++, r.x, r.w, norm, "r%d %s", i, u->s->nodes[i].phase);
    const struct metrics *m = &sv->m;
    if (sv->metrics_ok && y < end) {
        putf(u, y++, r.x, r.w, norm, "running %s waiting %s KV %s%%",
             fmt_pval(a, sizeof a, m->running, 0), fmt_pval(b, sizeof b, m->waiting, 0),
             fmt_pval((char[32]){0}, 32, (struct pval){m->kv_usage.ok, m->kv_usage.v * 100}, 1));
        const struct metrics_rates *rt = &sv->rates;
        struct pval none = {false, 0};
        putf(u, y++, r.x, r.w, norm, "prompt %s gen %s tok/s",
             fmt_pval(a, sizeof a, sv->rates_ok ? rt->prompt_tps : none, 1),
             fmt_pval(b, sizeof b, sv->rates_ok ? rt->generation_tps : none, 1));
        if (y < end)
            putf(u, y++, r.x, r.w, norm, "TTFT %s s ITL %s ms",
                 fmt_pval(a, sizeof a, sv->rates_ok ? rt->mean_ttft_s : none, 3),
                 fmt_pval(b, sizeof b,
                          sv->rates_ok && rt->mean_itl_s.ok ? (struct pval){true, rt->mean_itl_s.v * 1000}
                                                            : none,
                          1));
        if (y < end)
            putf(u, y++, r.x, r.w, norm, "spec accept %s%% len %s",
                 fmt_pval(a, sizeof a,
                          sv->rates_ok && rt->spec_acceptance.ok
                              ? (struct pval){true, rt->spec_acceptance.v * 100}
                              : none,
                          0),
                 fmt_pval(b, sizeof b, sv->rates_ok ? rt->spec_mean_accept_len : none, 2));
        char old[300];
        metrics_old_names(m, old, sizeof old);
        if (old[0] && y < end) /* an older vLLM: where the figures came from */
            putf(u, y++, r.x, r.w, draw_attr(u, ROLE_DIM), "older names: %s", old);
    }
    for (int i = 0; i < sv->nproblems && y < end; i++)
        put(u, y++, r.x, r.w, bad, sv->problems[i]);
    for (int i = 0; i < sv->nwarnings && y < end; i++)
        put(u, y++, r.x, r.w, draw_attr(u, ROLE_WARN), sv->warnings[i]);
    draw_images(u, r, y, end);
}

/* The port that carries the fabric (its netdev), else the first ACTIVE one. */
static int fabric_port(const struct snapshot *sn)
{
    int best = -1;
    for (int p = 0; p < sn->nports; p++) {
        if (sn->fabric.ok && strcmp(sn->ports[p].netdev, sn->fabric.ifname) == 0)
            return p;
        if (best < 0 && sn->ports[p].state_num == 4)
            best = p;
    }
    return best >= 0 ? best : sn->nports ? 0 : -1;
}

void pane_fabric(struct ui *u)
{
    struct rect r = u->l.pane[PANE_FABRIC];
    struct state *s = u->s;
    title(u, r, PANE_FABRIC, "fabric (RoCE)");
    int y = r.y + 1, end = r.y + r.h, per = u->l.fabric_rows;
    time_t now = time(NULL);
    for (int i = 0; i < s->nnodes && y + per <= end; i++) {
        const struct state_node *n = &s->nodes[i];
        const struct snapshot *sn = &n->snap;
        int x = putf(u, y, r.x, r.w, draw_attr(u, ROLE_TITLE), "%-8.8s ", n->name);
        if (!n->have || !sn->reachable) {
            put(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_DIM), "n/a");
            y += per;
            continue;
        }
        int p = fabric_port(sn);
        if (p < 0) {
            put(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_BAD),
                sn->fabric.ok ? "no RDMA port" : sn->fabric.why);
            y += per;
            continue;
        }
        const struct rdma_port *pt = &sn->ports[p];
        const struct state_port *sp = &n->ports[p];
        char rx[32], tx[32], rate[24];
        human_rate(rx, sizeof rx, sp->rx_bps);
        human_rate(tx, sizeof tx, sp->tx_bps);
        double gbps;
        if (sscanf(pt->rate, "%lf Gb", &gbps) == 1) /* "200 Gb/sec (4X HDR)" */
            snprintf(rate, sizeof rate, "%.0fG", gbps);
        else
            snprintf(rate, sizeof rate, "%.20s", pt->rate[0] ? pt->rate : "n/a");
        int norm = draw_attr(u, pt->state_num == 4 ? ROLE_NORMAL : ROLE_BAD);
        x += putf(u, y, r.x + x, r.w - x, norm, "%s/%d %s %s %s %s/%d gid %d ", pt->dev, pt->port,
                  pt->state_num == 4 ? "ACTIVE" : pt->state, rate, per > 1 ? pt->netdev : "",
                  pt->ipv4[0] ? pt->ipv4 : "no-IPv4", pt->prefix, pt->gid_index);
        if (per > 1) {
            y++;
            x = 9;
        }
        x += putf(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_NORMAL), "rx %s tx %s ", rx, tx);
        bool rising = sp->errors_rose && now - sp->errors_rose < 60;
        if (sp->errors < 0)
            x += put(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_DIM), "err n/a");
        else
            x += putf(u, y, r.x + x, r.w - x, draw_attr(u, rising ? ROLE_BAD : ROLE_NORMAL),
                      "err %.0f%s", sp->errors, rising ? " RISING" : "");
        if (sn->nports > 1)
            putf(u, y, r.x + x, r.w - x, draw_attr(u, ROLE_DIM), "  (+%d ports)", sn->nports - 1);
        y++;
    }
    /* mismatches between nodes, as status found them */
    for (int i = 0; i < s->server.nproblems + s->server.nwarnings && y < end; i++) {
        const char *t = i < s->server.nproblems ? s->server.problems[i]
                                                : s->server.warnings[i - s->server.nproblems];
        if (strstr(t, "fabric"))
            put(u, y++, r.x, r.w, draw_attr(u, ROLE_WARN), t);
    }
}
