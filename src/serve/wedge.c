/* wedge: see wedge.h. */
#include "wedge.h"

#include <stdio.h>

void wedge_reset(struct wedge *w)
{
    *w = (struct wedge)WEDGE_INIT;
}

double wedge_window(const struct wedge *w, double limit_s)
{
    return limit_s + w->allow_s;
}

bool wedge_feed(struct wedge *w, const struct metrics *m, double now, double limit_s, char *why,
                size_t n)
{
    /* a counter the server does not export, or one that went back (a
     * restarted server), counts as movement: never a false alarm */
    bool gen_moved = !w->have_prev || !m->generation_tokens.ok || !w->prev_gen.ok ||
                     m->generation_tokens.v != w->prev_gen.v;
    if (w->have_prev && m->prompt_tokens.ok && w->prev_prompt.ok &&
        m->prompt_tokens.v > w->prev_prompt.v)
        w->allow_s += (m->prompt_tokens.v - w->prev_prompt.v) / WEDGE_PREFILL_TPS;
    bool busy = m->running.ok && m->running.v > 0;
    if (gen_moved || !busy) {
        w->moved_t = now;
        w->allow_s = 0;
    }
    w->prev_prompt = m->prompt_tokens;
    w->prev_gen = m->generation_tokens;
    w->have_prev = true;
    if (!busy || limit_s <= 0 || now - w->moved_t < limit_s + w->allow_s)
        return false;
    if (n)
        snprintf(why, n, "%.0f request(s) running and no token generated for %.0f s", m->running.v,
                 now - w->moved_t);
    return true;
}
