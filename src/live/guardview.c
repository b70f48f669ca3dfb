#include "guardview.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "guard.h"
#include "guardctl.h"
#include "guardpoll.h"
#include "guards.h"
#include "job.h"
#include "mono.h"
#include "text.h"

/* How often the guards are read, and how long the console waits after
 * letting go of the lock before it takes it again (a daemon is coming). */
#define POLL_S 2.0
#define RETAKE_S 10.0

struct guardview {
    const struct config *c;
    struct cluster *cl;
    struct state *s;
    int local;                      /* index of the local node; -1 none */
    char dirs[CLUSTER_MAX_NODES][512]; /* the local node's; "" until known */
    struct guardpoll *polls[CLUSTER_MAX_NODES]; /* the remote nodes' */
    enum guard_view last[CLUSTER_MAX_NODES];
    double next_poll, released_at;
    /* the console's own guard */
    struct guard g;
    pthread_t th;
    bool running;
    atomic_int stop, resolve_now;
    atomic_int release; /* set by SIGUSR2 */
};

static void *guard_thread(void *arg)
{
    struct guardview *gv = arg;
    guard_run(&gv->g, &gv->stop, &gv->resolve_now);
    return NULL;
}

/* Takes the node's guard lock and guards from a thread, unless a daemon
 * holds it. */
static void take(struct guardview *gv)
{
    if (gv->running || gv->local < 0 || !gv->dirs[gv->local][0])
        return;
    struct guard_opts o;
    guard_opts_from_config(gv->c, &o);
    snprintf(o.state_dir, sizeof o.state_dir, "%s", gv->dirs[gv->local]);
    o.embedded = true;
    o.resolve_s = 10; /* launch nudges it (SIGUSR1) when ranks start */
    char err[512];
    if (guard_open(&gv->g, &o, err, sizeof err) < 0) {
        if (errno != EWOULDBLOCK)
            state_say(gv->s, "%s: cannot run the memory guard: %s", gv->cl->nodes[gv->local].name,
                      err);
        return;
    }
    atomic_store(&gv->stop, 0);
    atomic_store(&gv->resolve_now, 1);
    if (pthread_create(&gv->th, NULL, guard_thread, gv) != 0) {
        guard_close(&gv->g);
        return;
    }
    gv->running = true;
    state_say(gv->s, "%s: the console guards this node's memory (floor %s GiB)",
              gv->cl->nodes[gv->local].name, config_str(gv->c, CFG_MEMGUARD_GIB));
}

static void let_go(struct guardview *gv)
{
    if (!gv->running)
        return;
    atomic_store(&gv->stop, 1);
    pthread_join(gv->th, NULL);
    guard_close(&gv->g);
    gv->running = false;
}

struct guardview *guardview_start(const struct config *c, struct cluster *cl, struct state *s)
{
    struct guardview *gv = calloc(1, sizeof *gv);
    if (!gv)
        return NULL;
    gv->c = c;
    gv->cl = cl;
    gv->s = s;
    gv->local = -1;
    for (int i = 0; i < cl->n; i++) {
        if (cl->nodes[i].node.local && gv->local < 0)
            gv->local = i;
        else if (!cl->nodes[i].node.local && cl->nodes[i].configured)
            gv->polls[i] = guardpoll_start(c, &cl->nodes[i], POLL_S);
    }
    if (gv->local >= 0) {
        struct buf err = BUF_INIT;
        cluster_state_dir(c, &cl->nodes[gv->local], gv->dirs[gv->local], sizeof gv->dirs[0], &err);
        buf_free(&err);
        take(gv);
    }
    return gv;
}

const char *guardview_word(enum guard_view g)
{
    static const char *const w[] = {"unknown", "ok", "FIRED", "STALE", "NONE", "WARN"};
    return (unsigned)g < sizeof w / sizeof *w ? w[g] : "unknown";
}

enum guard_view guardview_parse(const char *text, char *desc, size_t descsz, char *event,
                                size_t eventsz)
{
    long now, ts, pid, avail, fl;
    char st[16] = "", alive[8] = "";
    event[0] = '\0';
    const char *l2 = strchr(text, '\n');
    const char *l3 = l2 ? strchr(l2 + 1, '\n') : NULL;
    if (l3) {
        size_t n = strcspn(l3 + 1, "\n");
        char raw[400];
        snprintf(raw, sizeof raw, "%.*s", (int)(n < sizeof raw - 1 ? n : sizeof raw - 1), l3 + 1);
        /* "YYYY-MM-DD HH:MM:SS host text": the time and the text are what matter */
        char day[16], tod[16], host[64], shorter[400];
        int off = 0;
        const char *shown = raw;
        if (sscanf(raw, "%15s %15s %63s %n", day, tod, host, &off) == 3 && off > 0 &&
            strlen(day) == 10 && day[4] == '-') {
            snprintf(shorter, sizeof shorter, "%s %s", tod, raw + off);
            shown = shorter;
        }
        text_clean(event, eventsz, shown, strlen(shown));
    }
    int k = sscanf(text, "%ld %ld %ld %ld %ld %15s", &now, &ts, &pid, &avail, &fl, st);
    if (k >= 1 && k < 6) {
        snprintf(desc, descsz, "no guard heartbeat");
        return GUARD_VIEW_NONE;
    }
    long age;
    /* a heartbeat is a file anyone with the state dir can write: numbers whose
     * difference does not fit are as unreadable as no numbers (the fuzzer's find) */
    if (k != 6 || !l2 || __builtin_sub_overflow(now, ts, &age)) {
        snprintf(desc, descsz, "unreadable guard heartbeat");
        return GUARD_VIEW_UNKNOWN;
    }
    sscanf(l2 + 1, "%7s", alive);
    char sig[200];
    bool warned = guardctl_signals(text, (size_t)(l2 - text), sig, sizeof sig);
    snprintf(desc, descsz, "pid %ld %s, %lds ago, avail %ld MiB, floor %ld MiB%s%s", pid, st, age,
             avail / 1024, fl / 1024, sig, strcmp(alive, "alive") ? " (process gone)" : "");
    /* a guard that stopped cleanly (`stop`) is no alarm: there is nothing to guard */
    if (strcmp(alive, "alive") != 0 && strstr(event, "guard stopped")) {
        snprintf(desc, descsz, "stopped");
        return GUARD_VIEW_NONE;
    }
    if (strcmp(alive, "alive") != 0 || age > GUARDVIEW_STALE_S)
        return GUARD_VIEW_STALE;
    return strcmp(st, "fired") == 0 ? GUARD_VIEW_FIRED : warned ? GUARD_VIEW_WARN : GUARD_VIEW_OK;
}

/* The last line of a local file (its last 1 KiB), without the newline. */
static void last_line(const char *path, char *out, size_t sz)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char b[1025];
    off_t end = lseek(fd, 0, SEEK_END), from = end > 1024 ? end - 1024 : 0;
    ssize_t n = end > 0 ? pread(fd, b, (size_t)(end - from), from) : 0;
    close(fd);
    if (n <= 0)
        return;
    b[n] = '\0';
    while (n > 0 && b[n - 1] == '\n')
        b[--n] = '\0';
    const char *nl = strrchr(b, '\n');
    snprintf(out, sz, "%.399s", nl ? nl + 1 : b);
}

/* The three lines of the remote check, from the local files directly (no
 * shell forked every poll). */
static void ask_local(const char *dir, struct buf *text)
{
    char path[768], hb[320], last[400];
    bool alive = guardctl_heartbeat_read(dir, hb, sizeof hb);
    snprintf(path, sizeof path, "%s/memguard.log", dir);
    last_line(path, last, sizeof last);
    buf_printf(text, "%ld %s\n%s\n%s\n", (long)time(NULL), hb, alive ? "alive" : "dead", last);
}

/* The node's guard: read here for the local node, taken from its poller
 * for a remote one. -1 when a remote poller has nothing new. *at: when the
 * read began; 0 when the node could not be asked. */
static int ask(struct guardview *gv, int i, char *desc, size_t dsz, char *ev, size_t esz,
               double *at)
{
    struct buf text = BUF_INIT;
    int v = GUARD_VIEW_UNKNOWN;
    *at = mono_s();
    if (gv->cl->nodes[i].node.local) {
        ask_local(gv->dirs[i], &text);
        v = (int)guardview_parse(buf_str(&text), desc, dsz, ev, esz);
    } else {
        char answer[1200];
        bool asked;
        if (!gv->polls[i] || !guardpoll_take(gv->polls[i], &asked, at, answer, sizeof answer)) {
            buf_free(&text);
            return -1;
        }
        if (asked) {
            v = (int)guardview_parse(answer, desc, dsz, ev, esz);
        } else {
            snprintf(desc, dsz, "%.300s", answer);
            ev[0] = '\0';
            /* not asked (ssh failed, a slow node timed out): it says nothing of
             * a firing, so it lets no symptom settle (events.h) */
            *at = 0;
        }
    }
    buf_free(&text);
    return v;
}

static bool ranks_run_on(struct state *s, int i)
{
    const struct snapshot *sn = &s->nodes[i].snap;
    for (int k = 0; k < sn->ncont; k++)
        if (sn->cont[k].running)
            return true;
    return false;
}

static void on_fired(struct guardview *gv, int i, const char *event)
{
    struct state *s = gv->s;
    bool others = false;
    state_lock(s);
    for (int k = 0; k < s->nnodes; k++)
        others |= k != i && ranks_run_on(s, k);
    state_unlock(s);
    state_say(s, "MEMORY GUARD FIRED on %s: %s", gv->cl->nodes[i].name, event);
    if (others && !job_running(s, "stop")) {
        state_say(s, "stopping the ranks on the other nodes: they would hang in NCCL");
        /* at once: with a rank gone rank 0 cannot drain, it would only
         * hold the memory for STOP_TIMEOUT */
        char *argv[] = {"stop", "--now", NULL};
        job_start(s, "stop", argv);
    }
}

void guardview_poll(struct guardview *gv)
{
    if (!gv)
        return;
    double now = mono_s();
    if (atomic_exchange(&gv->release, 0)) {
        let_go(gv);
        gv->released_at = now;
        state_say(gv->s, "the console's memory guard let go of the lock (a guard daemon takes over)");
    }
    if (now < gv->next_poll)
        return;
    gv->next_poll = now + POLL_S;
    if (!gv->running && gv->local >= 0 && (gv->released_at == 0 || now - gv->released_at > RETAKE_S))
        take(gv);
    for (int i = 0; i < gv->cl->n; i++) {
        struct cluster_node *cn = &gv->cl->nodes[i];
        if (!cn->configured)
            continue;
        if (cn->node.local && !gv->dirs[i][0]) {
            struct buf err = BUF_INIT;
            if (cluster_state_dir(gv->c, cn, gv->dirs[i], sizeof gv->dirs[i], &err) < 0)
                gv->dirs[i][0] = '\0';
            buf_free(&err);
            if (!gv->dirs[i][0])
                continue;
        }
        char desc[320], ev[200];
        double at;
        int asked = ask(gv, i, desc, sizeof desc, ev, sizeof ev, &at);
        if (asked < 0)
            continue; /* its poller is still asking */
        enum guard_view v = (enum guard_view)asked;
        struct state *s = gv->s;
        state_lock(s);
        struct state_node *sn = &s->nodes[i];
        sn->guard = v;
        if (at > 0)
            sn->guard_read_at = at;
        sn->guard_here = i == gv->local && gv->running;
        snprintf(sn->guard_desc, sizeof sn->guard_desc, "%s%s",
                 sn->guard_here ? "in the console: " : "", desc);
        snprintf(sn->guard_event, sizeof sn->guard_event, "%s", ev);
        state_unlock(s);
        if (v == GUARD_VIEW_FIRED && gv->last[i] != GUARD_VIEW_FIRED && gv->last[i] != 0)
            on_fired(gv, i, ev);
        bool was_up = gv->last[i] == GUARD_VIEW_OK || gv->last[i] == GUARD_VIEW_WARN;
        if ((v == GUARD_VIEW_STALE || v == GUARD_VIEW_NONE) && was_up)
            state_say(s, "ALARM: %s: memory guard %s", cn->name, desc);
        if (v == GUARD_VIEW_WARN && gv->last[i] != GUARD_VIEW_WARN)
            state_say(s, "WARNING: %s: memory guard: %s", cn->name, ev[0] ? ev : desc);
        if ((v == GUARD_VIEW_OK || v == GUARD_VIEW_WARN) && gv->last[i] == GUARD_VIEW_STALE)
            state_say(s, "%s: the memory guard is back: %s", cn->name, desc);
        gv->last[i] = v;
    }
}

void guardview_release(struct guardview *gv)
{
    if (gv) {
        atomic_store(&gv->release, 1);
        atomic_store(&gv->stop, 1); /* ends at once; poll joins it */
    }
}

void guardview_resolve(struct guardview *gv)
{
    if (gv)
        atomic_store(&gv->resolve_now, 1);
}

void guardview_stop(struct guardview *gv)
{
    if (!gv)
        return;
    state_lock(gv->s);
    bool handover = gv->running && gv->local >= 0 && ranks_run_on(gv->s, gv->local);
    state_unlock(gv->s);
    let_go(gv);
    for (int i = 0; i < CLUSTER_MAX_NODES; i++)
        guardpoll_cancel(gv->polls[i]);
    for (int i = 0; i < CLUSTER_MAX_NODES; i++)
        guardpoll_stop(gv->polls[i]);
    if (handover) {
        fprintf(stderr, "%s: ranks are running: handing the memory guard over to a daemon\n",
                gv->cl->nodes[gv->local].name);
        guards_start_node(gv->c, gv->cl, gv->local, gv->dirs[gv->local], stderr);
    }
    free(gv);
}
