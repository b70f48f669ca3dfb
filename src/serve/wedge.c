/* wedge: see wedge.h. */
#include "wedge.h"
#include "fixstr.h"

#include <stdio.h>
#include <string.h>

void wedge_reset(struct wedge *w)
{
    *w = (struct wedge)WEDGE_INIT;
}

/* A counter moved, or cannot be judged: not exported, or gone back (a
 * restarted server). Either way no grounds for an alarm. */
static bool counter_moved(struct pval prev, struct pval cur)
{
    return !prev.ok || !cur.ok || cur.v != prev.v;
}

/* A gauge changed: it is set by every engine step, so a change is a step.
 * One the server does not export says nothing either way. */
static bool gauge_changed(struct pval prev, struct pval cur)
{
    return prev.ok != cur.ok || (cur.ok && cur.v != prev.v);
}

bool wedge_feed(struct wedge *w, const struct metrics *m, double now, double limit_s, char *why,
                size_t n)
{
    const struct metrics *p = &w->prev;
    bool progress = !w->have_prev || counter_moved(p->generation_tokens, m->generation_tokens) ||
                    counter_moved(p->prompt_tokens, m->prompt_tokens) ||
                    gauge_changed(p->kv_usage, m->kv_usage) ||
                    gauge_changed(p->running, m->running) ||
                    gauge_changed(p->waiting, m->waiting);
    bool busy = m->running.ok && m->running.v > 0;
    w->moving = progress || !busy;
    if (w->moving)
        w->moved_t = now;
    w->prev = *m;
    w->have_prev = true;
    if (!busy || limit_s <= 0 || now - w->moved_t < limit_s)
        return false;
    if (n) {
        char kv[48] = "";
        if (m->kv_usage.ok)
            snprintf(kv, sizeof kv, ", KV cache %.1f %% unchanged", m->kv_usage.v * 100);
        else
            snprintf(kv, sizeof kv, ", no KV-cache gauge to see a prefill by");
        snprintf(why, n, "%.0f request(s) running and nothing moving for %.0f s (no token, no "
                 "prefill step%s)", m->running.v, now - w->moved_t, kv);
    }
    return true;
}

void wedge_gpu_note(const struct probe_gpu *const *gpus, const char *const *names, int ngpu,
                    char *why, size_t n)
{
    size_t len = strlen(why);
    int shown = 0, low = 0, high = 0;
    for (int i = 0; i < ngpu; i++) {
        const struct probe_gpu *g = gpus[i];
        if (!g || !g->power_w.ok)
            continue;
        int cut;
        if (g->power_limit_w.ok && g->power_limit_w.v > 0) {
            bool is_low = g->power_w.v < WEDGE_GPU_LOW_SHARE * g->power_limit_w.v;
            low += is_low;
            high += !is_low;
            cut = fixstr_appendf(why, n, &len, "%s %s %.0f W of %.0f",
                                 shown ? "," : "; GPU power:", names[i], g->power_w.v,
                                 g->power_limit_w.v);
        } else {
            cut = fixstr_appendf(why, n, &len, "%s %s %.0f W", shown ? "," : "; GPU power:",
                                 names[i], g->power_w.v);
        }
        if (cut < 0)
            return;
        shown++;
    }
    if (!shown)
        return;
    if (low && !high)
        fixstr_appendf(why, n, &len, " (low: as a collective spinning on a dead peer)");
    else if (high && !low)
        fixstr_appendf(why, n, &len, " (high: the GPUs are computing; not a hang's picture)");
    else if (high && low)
        fixstr_appendf(why, n, &len, " (some low, some high)");
}
