#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirs.h"
#include "events.h"
#include "fixstr.h"
#include "job.h"
#include "mono.h"
#include "strv.h"
#include "suprec.h"
#include "text.h"

#define DONE_MAX 128
#define LAUNCH_TAIL 30

enum phase { SV_IDLE, SV_WAITING, SV_STOPPING, SV_LAUNCHING, SV_HELD };

struct supervisor {
    const struct config *c;
    struct state *s;
    long max, backoff_s;
    bool after_guard;
    enum phase ph;
    char cause[24], what[480];
    double due;        /* monotonic: the relaunch's stop begins */
    unsigned job;      /* the stop or launch job under way; 0 a stop not ours */
    bool relaunch;     /* after the stop, launch */
    bool retry;        /* the last launch failed: the next try needs no new cause */
    time_t done[DONE_MAX];
    int ndone;
    time_t quiet_until; /* events before this are what our own stop and launch did */
    time_t began;       /* when the fault this relaunch answers was seen */
};

double supervise_next_wait(const time_t *done, int n, time_t now, int max, int backoff_s)
{
    int recent = 0;
    for (int i = 0; i < n; i++)
        recent += now - done[i] < 3600;
    if (recent >= max)
        return -1;
    double w = backoff_s;
    for (int i = 0; i < recent && w < 3600; i++)
        w *= 2;
    return w < 3600 ? w : 3600;
}

/* A line of the record (suprec.h): status and the exporter read it. */
static void record(struct supervisor *sv, const char *action, const char *what)
{
    struct buf err = BUF_INIT;
    if (suprec_append(config_str(sv->c, CFG_STATE_DIR), action, sv->cause, what, &err) < 0)
        state_say(sv->s, "supervise: %s", buf_str(&err));
    buf_free(&err);
}

/* STATE_DIR/incidents/DATE-restart/summary.txt; the directory, or "". */
static void restart_incident(struct supervisor *sv, const char *line, const struct strv *tail,
                             char *dir, size_t dirsz)
{
    dir[0] = '\0';
    char top[700], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(top, sizeof top, "%s/incidents", config_str(sv->c, CFG_STATE_DIR));
    if (dirs_make(top, 0700) < 0)
        return;
    for (int k = 1; k < 100; k++) {
        if (k == 1)
            snprintf(dir, dirsz, "%s/%s-restart", top, stamp);
        else
            snprintf(dir, dirsz, "%s/%s-restart-%d", top, stamp, k);
        if (mkdir(dir, 0700) == 0)
            break;
        if (errno != EEXIST || k == 99) {
            dir[0] = '\0';
            return;
        }
    }
    struct buf text = BUF_INIT, path = BUF_INIT;
    buf_printf(&text, "%s\n  cause: %s: %s\n  the launch's last lines:\n", line, sv->cause,
               sv->what);
    for (int i = 0; i < tail->n; i++) {
        char clean[600];
        text_clean(clean, sizeof clean, tail->v[i], strlen(tail->v[i]));
        buf_printf(&text, "    %s\n", clean);
    }
    buf_printf(&path, "%s/summary.txt", dir);
    if (buf_write_file(buf_str(&path), buf_str(&text), text.len, 0600) < 0)
        state_say(sv->s, "supervise: cannot write %s: %s", buf_str(&path), strerror(errno));
    buf_free(&text);
    buf_free(&path);
}

/* 0 with sv->job the stop (0: one already running, the guard's own -
 * guardview - waited for by name); -1 when none could start (said). */
static int start_stop(struct supervisor *sv)
{
    sv->job = 0;
    if (job_running(sv->s, "stop"))
        return 0;
    char *argv[] = {"stop", "--now", NULL};
    sv->job = job_start(sv->s, "stop", argv);
    return sv->job ? 0 : -1;
}

/* Someone else ran stop (or restart) since the fault: their intent wins. */
static bool operator_stopped(struct supervisor *sv)
{
    time_t at;
    long ppid;
    return suprec_last_stop(config_str(sv->c, CFG_STATE_DIR), &at, &ppid) && at >= sv->began &&
           ppid != (long)getpid();
}

/* Does the deployment still need a relaunch? A rank's container that
 * exited, or the wedge. No container at all: someone stopped it (stop
 * removes them) - nothing to bring back. */
static bool still_broken(struct supervisor *sv, bool *stopped)
{
    struct state *s = sv->s;
    bool broken = false, any = false;
    state_lock(s);
    for (int i = 0; i < s->nnodes; i++) {
        const struct state_node *sn = &s->nodes[i];
        if (!sn->configured || !sn->have || !sn->snap.reachable || !sn->snap.ct_sampled)
            continue;
        const struct container_info *ct = snapshot_rank_container(&sn->snap, s->ranks[i].rank);
        any |= ct != NULL;
        broken |= ct && !ct->running;
    }
    broken |= s->server.wedged[0] != '\0';
    state_unlock(s);
    *stopped = !any;
    return broken;
}

static bool guard_fired_now(struct supervisor *sv)
{
    bool fired = false;
    state_lock(sv->s);
    for (int i = 0; i < sv->s->nnodes; i++)
        fired |= sv->s->nodes[i].configured && sv->s->nodes[i].guard == GUARD_VIEW_FIRED;
    state_unlock(sv->s);
    return fired;
}

/* What the supervisor does about an event, on the end of its line. */
static void append(struct state_event *e, const char *text)
{
    size_t n = strlen(e->what);
    fixstr_appendf(e->what, sizeof e->what, &n, " - supervisor: %s", text);
}

/* Every rank stopped and left so: after a guard's firing, or the cap. */
static void hold(struct supervisor *sv, const char *why)
{
    record(sv, strcmp(sv->cause, "guard-fired") == 0 ? "stopped" : "gave-up", why);
    sv->relaunch = false;
    sv->ph = SV_STOPPING;
    if (start_stop(sv) < 0) { /* tried again at each step until one starts */
        sv->job = 0;
        sv->ph = SV_WAITING;
        sv->due = mono_s() + 1;
    }
}

/* The operator stopped or relaunched it meanwhile: nothing more of ours. */
static void yield_to_operator(struct supervisor *sv)
{
    if (sv->ph == SV_LAUNCHING && sv->job)
        job_cancel(sv->s, sv->job);
    record(sv, "stopped", "the deployment was stopped by an operator meanwhile: no relaunch");
    state_say(sv->s, "supervise: stopped by an operator meanwhile: not relaunched");
    sv->ph = SV_HELD;
    sv->job = 0;
    sv->quiet_until = time(NULL);
}

/* A relaunch scheduled, or the cap: what it did, appended to the event. */
static void schedule(struct supervisor *sv, struct state_event *e)
{
    time_t now = time(NULL);
    double w = supervise_next_wait(sv->done, sv->ndone, now, (int)sv->max, (int)sv->backoff_s);
    if (w < 0) {
        char why[200];
        snprintf(why, sizeof why,
                 "%ld relaunches in the last hour (SUPERVISE_MAX): every rank stopped, no more "
                 "tries until the deployment is launched again",
                 sv->max);
        hold(sv, why);
        if (e)
            append(e, why);
        events_push(sv->s, "supervise-stopped", NULL, NULL, why);
        return;
    }
    sv->ph = SV_WAITING;
    sv->relaunch = true;
    sv->due = mono_s() + w;
    int recent = 0;
    for (int i = 0; i < sv->ndone; i++)
        recent += now - sv->done[i] < 3600;
    char text[160];
    snprintf(text, sizeof text, "every rank stopped and relaunched in %.0f s (relaunch %d this hour)",
             w, recent + 1);
    if (e)
        append(e, text);
    state_say(sv->s, "supervise: %s: relaunch in %.0f s", sv->cause, w);
}

void supervise_event(struct supervisor *sv, struct state_event *e)
{
    if (!sv || e->t < sv->quiet_until)
        return;
    bool guard = strcmp(e->kind, "guard-fired") == 0;
    bool fault = strcmp(e->kind, "rank-exited") == 0 || strcmp(e->kind, "wedged") == 0;
    if (!guard && !fault)
        return;
    /* a rank's exit with a guard in FIRED: the guard's doing, whatever came first */
    if (fault && guard_fired_now(sv))
        guard = true;
    if (sv->ph == SV_LAUNCHING && guard && sv->job) {
        job_cancel(sv->s, sv->job); /* the relaunch ran into the floor */
        sv->ph = SV_IDLE;
    }
    /* held (after the cap, or an operator's stop) and relaunched by hand,
     * a guard that fires before a step has seen that launch serve is a
     * firing like any other: every rank stopped and held, and the alert
     * says so - a launch that says ready at once made this race common */
    bool held_guard = guard && sv->ph == SV_HELD && !sv->after_guard;
    if (guard && !sv->after_guard && sv->ph == SV_STOPPING && sv->relaunch) {
        /* the stop before a fault's relaunch is under way when the firing
         * is seen (the head's wedge can settle before the worker's guard is
         * read): the firing governs - the stop goes on, nothing relaunches */
        snprintf(sv->cause, sizeof sv->cause, "guard-fired");
        record(sv, "stopped", "a memory guard fired: every rank stopped and left stopped "
                              "(SUPERVISE_AFTER_GUARD=0)");
        sv->relaunch = false;
        append(e, "every rank stopped, not relaunched (SUPERVISE_AFTER_GUARD=0)");
        return;
    }
    if (sv->ph != SV_IDLE && !(guard && sv->ph == SV_WAITING) && !held_guard)
        return; /* a relaunch is under way, or held: said when it began */
    snprintf(sv->cause, sizeof sv->cause, "%s", guard ? "guard-fired" : e->kind);
    snprintf(sv->what, sizeof sv->what, "%s", e->what);
    sv->retry = false;
    sv->began = e->t;
    if (guard && !sv->after_guard) {
        hold(sv, "a memory guard fired: every rank stopped and left stopped "
                 "(SUPERVISE_AFTER_GUARD=0)");
        append(e, "every rank stopped, not relaunched (SUPERVISE_AFTER_GUARD=0)");
        return;
    }
    schedule(sv, e);
}

static bool job_over(struct supervisor *sv, enum job_status *st, int *code, struct strv *tail)
{
    if (!sv->job) { /* a stop that was not ours */
        *st = JOB_OK;
        *code = 0;
        return !job_running(sv->s, "stop");
    }
    *st = job_result(sv->s, sv->job, code, tail, LAUNCH_TAIL);
    return *st != JOB_RUNNING;
}

void supervise_step(struct supervisor *sv)
{
    if (!sv)
        return;
    enum job_status st;
    int code;
    bool stopped;
    switch (sv->ph) {
    case SV_IDLE:
        return;
    case SV_HELD: /* until someone launches it again and it serves */
        state_lock(sv->s);
        bool up = sv->s->server.have && sv->s->server.api.health_code == 200;
        state_unlock(sv->s);
        if (up && !still_broken(sv, &stopped) && !stopped) {
            sv->ph = SV_IDLE;
            sv->quiet_until = time(NULL);
            state_say(sv->s, "supervise: the deployment serves again: supervising");
        }
        return;
    case SV_WAITING:
        if (mono_s() < sv->due)
            return;
        if (operator_stopped(sv)) {
            yield_to_operator(sv);
            return;
        }
        if (sv->relaunch && !sv->after_guard && guard_fired_now(sv)) {
            /* a firing seen after the fault it caused: the memory would run out again */
            snprintf(sv->cause, sizeof sv->cause, "guard-fired");
            hold(sv, "a memory guard fired: every rank stopped and left stopped "
                     "(SUPERVISE_AFTER_GUARD=0)");
            return;
        }
        if (sv->relaunch && !sv->retry && !still_broken(sv, &stopped)) {
            state_say(sv->s, "supervise: %s", stopped ? "every rank was stopped meanwhile: no relaunch"
                                                      : "the deployment recovered: no relaunch");
            sv->ph = stopped ? SV_HELD : SV_IDLE;
            return;
        }
        sv->ph = SV_STOPPING;
        if (start_stop(sv) < 0) {
            sv->ph = SV_WAITING;
            sv->due = mono_s() + 5;
        }
        return;
    case SV_STOPPING:
        if (!job_over(sv, &st, &code, NULL))
            return;
        if (!sv->relaunch) {
            sv->ph = SV_HELD;
            sv->quiet_until = time(NULL);
            return;
        }
        if (operator_stopped(sv)) {
            yield_to_operator(sv);
            return;
        }
        if (!sv->after_guard && guard_fired_now(sv)) {
            snprintf(sv->cause, sizeof sv->cause, "guard-fired");
            record(sv, "stopped", "a memory guard fired: every rank left stopped "
                                  "(SUPERVISE_AFTER_GUARD=0)");
            sv->ph = SV_HELD;
            sv->quiet_until = time(NULL);
            return;
        }
        if (st != JOB_OK) { /* a node the stop could not reach: a launch would meet it too */
            state_say(sv->s, "supervise: the stop before the relaunch failed (exit %d): tried again",
                      code);
            sv->retry = true;
            schedule(sv, NULL);
            return;
        }
        if (sv->ndone == DONE_MAX) {
            memmove(sv->done, sv->done + 1, sizeof sv->done[0] * (DONE_MAX - 1));
            sv->ndone--;
        }
        sv->done[sv->ndone++] = time(NULL);
        char *argv[] = {"launch", NULL};
        sv->job = job_start(sv->s, "launch", argv);
        sv->ph = SV_LAUNCHING;
        if (!sv->job) { /* said by job_start */
            sv->retry = true;
            schedule(sv, NULL);
        }
        return;
    case SV_LAUNCHING: {
        if (operator_stopped(sv)) {
            yield_to_operator(sv);
            return;
        }
        struct strv tail = STRV_INIT;
        if (!job_over(sv, &st, &code, &tail)) {
            strv_free(&tail);
            return;
        }
        bool ok = st == JOB_OK;
        char line[600], dir[800], last[300] = "no output";
        if (tail.n) /* a node's bytes: cleaned before a file or an alert */
            text_clean(last, sizeof last, tail.v[tail.n - 1], strlen(tail.v[tail.n - 1]));
        snprintf(line, sizeof line, "relaunched after %s: launch %s%s", sv->cause,
                 ok ? "serves again" : "failed: ", ok ? "" : last);
        record(sv, "restart", line);
        restart_incident(sv, line, &tail, dir, sizeof dir);
        events_push(sv->s, "restart", NULL, dir, line);
        strv_free(&tail);
        sv->quiet_until = time(NULL);
        sv->job = 0;
        if (ok) {
            sv->ph = SV_IDLE;
        } else {
            sv->retry = true;
            schedule(sv, NULL);
        }
        return;
    }
    }
}

struct supervisor *supervise_start(const struct config *c, struct state *s, struct buf *err)
{
    long on = 0;
    if (config_get_long(c, CFG_SUPERVISE, &on, err) < 0 || !on)
        return NULL;
    struct supervisor *sv = calloc(1, sizeof *sv);
    long ag = 0;
    if (!sv || config_get_long(c, CFG_SUPERVISE_MAX, &sv->max, err) < 0 ||
        config_get_long(c, CFG_SUPERVISE_BACKOFF_S, &sv->backoff_s, err) < 0 ||
        config_get_long(c, CFG_SUPERVISE_AFTER_GUARD, &ag, err) < 0) {
        if (!sv)
            buf_puts(err, "out of memory");
        free(sv);
        return NULL;
    }
    sv->c = c;
    sv->s = s;
    sv->after_guard = ag != 0;
    sv->quiet_until = time(NULL);
    /* the relaunches of the last hour count, whoever made them (a watch
     * restarted by systemd keeps the cap) */
    struct suprec *r = malloc(sizeof *r);
    if (r) {
        suprec_load(config_str(c, CFG_STATE_DIR), time(NULL), r);
        for (int i = 0; i < r->nhour && sv->ndone < DONE_MAX; i++)
            sv->done[sv->ndone++] = r->hour[i];
        free(r);
    }
    return sv;
}

void supervise_stop(struct supervisor *sv)
{
    free(sv);
}
