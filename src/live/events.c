#include "events.h"

#include <stdio.h>
#include <string.h>

#include "mono.h"
#include "text.h"

static const char *const KINDS[EVENT_NKINDS] = {EVENT_KINDS};

int events_kind_index(const char *kind)
{
    for (int i = 0; i < EVENT_NKINDS; i++)
        if (strcmp(KINDS[i], kind) == 0)
            return i;
    return -1;
}

const char *events_kind_name(int i)
{
    return i >= 0 && i < EVENT_NKINDS ? KINDS[i] : "?";
}

static void fill(struct state_event *e, const char *kind, const char *what, const char *incident)
{
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    /* remote text (a guard's event line, a container's name): no escapes
     * into a terminal, a journal or a chat */
    text_clean(e->what, sizeof e->what, what, strlen(what));
    snprintf(e->incident, sizeof e->incident, "%s", incident ? incident : "");
    e->at = mono_s();
}

uint64_t events_push(struct state *s, const char *kind, const char *node, const char *incident,
                     const char *what)
{
    state_lock(s);
    uint64_t seq = s->events_end++;
    struct state_event *e = &s->events[seq % STATE_EVENTS];
    memset(e, 0, sizeof *e);
    e->seq = seq;
    e->t = time(NULL);
    snprintf(e->node, sizeof e->node, "%s", node ? node : "");
    fill(e, kind, what, incident);
    state_unlock(s);
    state_changed(s);
    return seq;
}

/* A symptom waits for its cause (events.h); under the state's lock. */
static bool settled(const struct state *s, const struct state_event *e, double now,
                    double settle_s)
{
    if (now - e->at < settle_s)
        return false;
    bool symptom = strcmp(e->kind, "wedged") == 0 || strcmp(e->kind, "rank-exited") == 0;
    return !symptom || e->at < s->causes_at || now - e->at >= EVENTS_CAUSE_WAIT_S;
}

double events_guards_asked(struct state *s, bool guards)
{
    double now = mono_s(), oldest = now;
    state_lock(s);
    /* a node never asked (its poller's first answer not in, no state
     * directory to ask in) has nothing to tell yet: it holds nothing up */
    for (int i = 0; guards && i < s->nnodes && i < CLUSTER_MAX_NODES; i++)
        if (s->nodes[i].configured && s->nodes[i].guard_read_at > 0 &&
            s->nodes[i].guard_read_at < oldest)
            oldest = s->nodes[i].guard_read_at;
    state_unlock(s);
    return oldest;
}

void events_causes_seen(struct state *s, double at)
{
    state_lock(s);
    if (at > s->causes_at)
        s->causes_at = at;
    state_unlock(s);
}

bool events_update(struct state *s, uint64_t seq, const char *kind, const char *node,
                   const char *what, const char *incident)
{
    state_lock(s);
    struct state_event *e = &s->events[seq % STATE_EVENTS];
    /* settled is as good as read: a reader may have it (EVENTS_SETTLE_S) */
    bool have = seq < s->events_end && e->seq == seq && !settled(s, e, mono_s(), EVENTS_SETTLE_S);
    if (have) {
        snprintf(e->node, sizeof e->node, "%s", node ? node : "");
        fill(e, kind, what, incident);
    }
    state_unlock(s);
    return have;
}

int events_read(struct state *s, uint64_t *next, double settle_s, struct state_event *out, int max,
                uint64_t *lost)
{
    double now = mono_s();
    int n = 0;
    state_lock(s);
    uint64_t first = s->events_end > STATE_EVENTS ? s->events_end - STATE_EVENTS : 0;
    if (*next < first) {
        if (lost)
            *lost += first - *next;
        *next = first;
    }
    while (n < max && *next < s->events_end) {
        const struct state_event *e = &s->events[*next % STATE_EVENTS];
        if (!settled(s, e, now, settle_s))
            break;
        out[n++] = *e;
        ++*next;
    }
    state_unlock(s);
    return n;
}

void events_check(struct events_watch *w, struct state *s)
{
    struct {
        char kind[24], node[32], what[480];
    } found[CLUSTER_MAX_NODES * 3 + 1];
    int nf = 0;
    state_lock(s);
    for (int i = 0; i < s->nnodes && i < CLUSTER_MAX_NODES; i++) {
        const struct state_node *sn = &s->nodes[i];
        if (!sn->configured || !sn->have)
            continue;
        bool up = sn->snap.reachable, warned = sn->guard == GUARD_VIEW_WARN,
             drifted = sn->fabric_drift[0] != '\0';
        bool primed = w->seen[i]; /* a node's first sample only says how it stands */
        w->seen[i] = true;
        if (primed && !up && w->up[i]) {
            snprintf(found[nf].kind, sizeof found[nf].kind, "node-unreachable");
            snprintf(found[nf].what, sizeof found[nf].what, "%s unreachable: %s", sn->name,
                     sn->snap.error);
            snprintf(found[nf++].node, sizeof found[0].node, "%s", sn->name);
        }
        if (primed && warned && !w->warned[i]) {
            snprintf(found[nf].kind, sizeof found[nf].kind, "guard-warning");
            snprintf(found[nf].what, sizeof found[nf].what, "memory guard warning on %s: %s",
                     sn->name, sn->guard_desc);
            snprintf(found[nf++].node, sizeof found[0].node, "%s", sn->name);
        }
        if (primed && drifted && !w->drifted[i]) {
            snprintf(found[nf].kind, sizeof found[nf].kind, "fabric-drift");
            snprintf(found[nf].what, sizeof found[nf].what,
                     "the fabric changed under the rank on %s: %s", sn->name, sn->fabric_drift);
            snprintf(found[nf++].node, sizeof found[0].node, "%s", sn->name);
        }
        w->up[i] = up;
        /* an unreachable node's guard is not known: its warning stays as it was */
        if (up)
            w->warned[i] = warned;
        w->drifted[i] = drifted;
    }
    /* status' warning of a bench below the accepted baseline (benchhist.h):
     * a new one (another run, other figures) is a new event */
    const char *reg = "";
    for (int i = 0; s->server.have && i < s->server.nwarnings; i++)
        if (strncmp(s->server.warnings[i], "bench of ", 9) == 0)
            reg = s->server.warnings[i];
    if (s->server.have) {
        if (w->server_seen && reg[0] && strcmp(reg, w->regression) != 0) {
            snprintf(found[nf].kind, sizeof found[nf].kind, "bench-regression");
            snprintf(found[nf].what, sizeof found[nf].what, "%s", reg);
            found[nf++].node[0] = '\0';
        }
        snprintf(w->regression, sizeof w->regression, "%s", reg);
        w->server_seen = true;
    }
    state_unlock(s);
    for (int k = 0; k < nf; k++)
        events_push(s, found[k].kind, found[k].node, NULL, found[k].what);
}
