/* `dsv41-top watch`: the console's engine without the screen, for a systemd
 * unit or a tmux pane. The same monitor samples every node, follows the
 * guards (and guards this node when no daemon does, as the console does),
 * runs the wedge rule and the liveness probe; watch prints one line per
 * change of what an operator alerts on, and exits with a code that names
 * the alarm. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "guardview.h"
#include "interrupt.h"
#include "job.h"
#include "commands.h"
#include "monitor.h"
#include "ops.h"
#include "mono.h"
#include "state.h"
#include "text.h"
#include "units.h"
#include "usage.h"

enum { ALARM_NONE = 0, ALARM_WEDGED = 3, ALARM_FIRED = 4, ALARM_RANK = 5, ALARM_DOWN = 6,
       ALARM_UNGUARDED = 7, ALARM_FABRIC = 8 };

const struct usage_doc watch_doc = {
    "watch", NULL, "the console's checks headless, a line per change",
    "The console's checks without the screen: every node, its memory guard, the ranks, the API, "
    "the wedge rule and the liveness probe (PROBE_IDLE_S, PROBE_DEADLINE_S). One line per change "
    "(--json: one JSON object per line). Runs until SIGINT/SIGTERM, and then exits 0; it exits "
    "with an alarm's code only with --once (the worst alarm of the first full sample) or "
    "--exit-on-alarm (at the first alarm).",
    (const struct usage_exit[]){{ALARM_NONE, "well, or stopped by a signal"},
                                {1, "--unit: the unit could not be made (named)"},
                                {2, "bad usage, or --once had no full sample within 60 s"},
                                {ALARM_WEDGED, "engine wedged"},
                                {ALARM_FIRED, "a memory guard fired"},
                                {ALARM_RANK, "a rank exited"},
                                {ALARM_DOWN, "a node unreachable"},
                                {ALARM_UNGUARDED, "ranks without a fresh memory guard"},
                                {ALARM_FABRIC, "the fabric changed under running ranks (GID "
                                               "index, IPv4, netdev, HCAs)"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--json", NULL, "one JSON object per line"},
        {"--once", NULL, "print the picture after the first full sample and exit"},
        {"--exit-on-alarm", NULL, "exit at the first alarm"},
        {"--interval", "S", "seconds between samples (0.2 to 3600, default 1)"},
        {"--unit", NULL,
         "print dsv41-watch.service filled in for this head (this binary, this account, the "
         "config file, STATE_DIR, the settings from the environment) and exit: dsv41-top watch "
         "--unit | sudo tee /etc/systemd/system/dsv41-watch.service"},
        {NULL, NULL, NULL}}};

#define MAX_FACTS (4 * CLUSTER_MAX_NODES + 5)

struct fact {
    char key[48];
    char value[480];
    int alarm;
};

static struct fact *add(struct fact *f, int *n, int alarm, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static struct fact *add(struct fact *f, int *n, int alarm, const char *key, const char *fmt, ...)
{
    if (*n >= MAX_FACTS)
        return NULL;
    struct fact *x = &f[(*n)++];
    snprintf(x->key, sizeof x->key, "%s", key);
    char raw[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    text_clean(x->value, sizeof x->value, raw, strlen(raw)); /* remote text: no escapes */
    x->alarm = alarm;
    return x;
}

/* What an operator alerts on, from the state (held locked). */
static int facts(const struct state *s, struct fact *f)
{
    int n = 0;
    char key[48];
    for (int i = 0; i < s->nnodes; i++) {
        const struct state_node *sn = &s->nodes[i];
        if (!sn->configured || !sn->have)
            continue;
        snprintf(key, sizeof key, "node.%s", sn->name);
        if (!sn->snap.reachable) {
            add(f, &n, ALARM_DOWN, key, "UNREACHABLE: %s", sn->snap.error);
            continue;
        }
        /* a second count would print a line a second: said once */
        add(f, &n, ALARM_NONE, key, "%s",
            sn->snap.late_s >= 3 ? "NO ANSWER to the last sample (its sshd hung, or the link cut)" : "reachable");
        const struct container_info *ct = snapshot_rank_container(&sn->snap, i);
        snprintf(key, sizeof key, "rank.%s", sn->name);
        if (!sn->snap.ct_sampled)
            add(f, &n, ALARM_NONE, key, "n/a (its containers not sampled yet)");
        else if (ct && ct->running)
            add(f, &n, ALARM_NONE, key, "%s running", ct->name);
        else if (ct)
            add(f, &n, ALARM_RANK, key, "%s exited with code %d%s", ct->name, ct->exit_code,
                ct->oom_killed ? ", OOM-killed" : "");
        else
            add(f, &n, ALARM_NONE, key, "none");
        snprintf(key, sizeof key, "fabric.%s", sn->name);
        if (sn->fabric_drift[0])
            add(f, &n, ALARM_FABRIC, key, "CHANGED since the rank started: %s", sn->fabric_drift);
        else if (sn->snap.fabric.ok)
            add(f, &n, ALARM_NONE, key, "%s %s GID %d", sn->snap.fabric.ifname,
                sn->snap.fabric.ipv4, sn->snap.fabric.gid_index);
        else
            add(f, &n, ALARM_NONE, key, "none: %s", sn->snap.fabric.why);
        snprintf(key, sizeof key, "guard.%s", sn->name);
        bool ranks = ct && ct->running;
        int ga = sn->guard == GUARD_VIEW_FIRED ? ALARM_FIRED
                 : ranks && (sn->guard == GUARD_VIEW_STALE || sn->guard == GUARD_VIEW_NONE)
                     ? ALARM_UNGUARDED
                     : ALARM_NONE;
        /* the state word and the last event: the heartbeat's age changes every poll */
        add(f, &n, ga, key, "%s%s%s", guardview_word(sn->guard),
            sn->guard_event[0] ? ": " : "", sn->guard_event);
    }
    const struct state_server *sv = &s->server;
    if (sv->have) {
        if (sv->api.health_code == 200 && sv->api.models_code == 200)
            add(f, &n, ALARM_NONE, "api", "healthy: %s", sv->api.model_id);
        else if (sv->api.health_code == 200)
            add(f, &n, ALARM_NONE, "api", "/health 200, /v1/models %ld", sv->api.models_code);
        else
            add(f, &n, ALARM_NONE, "api", "down: %s",
                sv->api.health_code ? "/health not 200" : sv->api.error);
        add(f, &n, sv->wedged[0] ? ALARM_WEDGED : ALARM_NONE, "wedged", "%s",
            sv->wedged[0] ? sv->wedged : "no");
        const struct liveness *lv = &sv->live;
        if (lv->have && lv->ok)
            add(f, &n, ALARM_NONE, "probe", "token in %.3f s (probe at %.0f)", lv->latency_s,
                lv->at);
        else if (lv->have)
            add(f, &n, ALARM_NONE, "probe", "FAILED: %s", lv->why);
        /* status' warning of a bench below the accepted baseline (benchhist.h) */
        const char *bench = "no regression against the accepted baseline";
        for (int i = 0; i < sv->nwarnings; i++)
            if (strncmp(sv->warnings[i], "bench of ", 9) == 0)
                bench = sv->warnings[i];
        add(f, &n, ALARM_NONE, "bench", "%s", bench);
    }
    return n;
}

static void print_fact(const struct fact *x, bool json)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", &tm);
    if (json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "time", when);
        cJSON_AddStringToObject(j, "key", x->key);
        cJSON_AddStringToObject(j, "value", x->value);
        cJSON_AddNumberToObject(j, "alarm", x->alarm);
        char *t = cJSON_PrintUnformatted(j);
        if (t)
            printf("%s\n", t);
        free(t);
        cJSON_Delete(j);
    } else {
        printf("%s %-14s %s%s\n", when, x->key, x->alarm ? "ALARM " : "", x->value);
    }
}

/* Ready once every configured node and the server were sampled, with the
 * nodes' containers, and the guards read (they are polled every 2 s; give
 * up waiting on them after 10 s: what could not be asked is then what is
 * shown). */
static bool complete(const struct state *s, double waited_s)
{
    for (int i = 0; i < s->nnodes; i++) {
        const struct state_node *sn = &s->nodes[i];
        bool partial = sn->snap.reachable &&
                       (sn->guard == GUARD_VIEW_UNKNOWN || !sn->snap.ct_sampled);
        if (sn->configured && (!sn->have || (partial && waited_s < 10)))
            return false;
    }
    return s->server.have;
}

/* The alarm that names the state: the most urgent first. */
static int worst(const struct fact *f, int n)
{
    static const int order[] = {ALARM_FIRED, ALARM_WEDGED, ALARM_RANK, ALARM_DOWN,
                                ALARM_FABRIC, ALARM_UNGUARDED};
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        for (int i = 0; i < n; i++)
            if (f[i].alarm == order[k])
                return order[k];
    return ALARM_NONE;
}

int cmd_print_head_unit(const struct config *c, const char *unit, const char *cmd)
{
    struct buf text = BUF_INIT, err = BUF_INIT;
    int rc = units_head_text(c, unit, &text, &err);
    if (rc == 0 && geteuid() == 0)
        fprintf(stderr, "dsv41-top %s --unit: User=root: it will run as root, with root's ssh "
                        "keys; run this as the operator whose keys reach the workers (then pipe "
                        "it into sudo tee) unless root is the one\n", cmd);
    if (rc == 0)
        fputs(buf_str(&text), stdout);
    else
        fprintf(stderr, "dsv41-top %s --unit: %s\n", cmd, buf_str(&err));
    buf_free(&text);
    buf_free(&err);
    return rc == 0 && fflush(stdout) == 0 ? 0 : 1;
}

int cmd_headless_open(const char *cmd, const struct config *c, struct cluster **cl,
                      struct state *st)
{
    *cl = calloc(1, sizeof **cl);
    if (!*cl || state_init(st) < 0) {
        free(*cl);
        fprintf(stderr, "dsv41-top %s: out of memory\n", cmd);
        return 2;
    }
    if (cluster_open_for(cmd, c, *cl) < 0) {
        free(*cl);
        state_free(st);
        return 2;
    }
    interrupt_catch();
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

void cmd_headless_close(struct monitor *m, struct cluster *cl, struct state *st)
{
    job_shutdown(st); /* a stop job a guard's firing started, a relaunch */
    monitor_stop(m);
    cluster_close(cl);
    free(cl);
    state_free(st);
}

int cmd_watch(const struct config *c, int argc, char **argv)
{
    bool json = false, once = false, exit_on_alarm = false, unit = false;
    double interval = 1;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--once") == 0) {
            once = true;
        } else if (strcmp(argv[i], "--exit-on-alarm") == 0) {
            exit_on_alarm = true;
        } else if (strcmp(argv[i], "--unit") == 0) {
            unit = true;
        } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc &&
                   (interval = strtod(argv[i + 1], &end)) >= 0.2 && interval <= 3600 && !*end) {
            i++;
        } else {
            bool help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            usage_print(help ? stdout : stderr, &watch_doc);
            return help ? 0 : 2;
        }
    }
    if (unit)
        return cmd_print_head_unit(c, UNITS_WATCH, "watch");
    setvbuf(stdout, NULL, _IOLBF, 0); /* a line reaches a pipe or journald as it happens */
    struct cluster *cl;
    static struct state st;
    if (cmd_headless_open("watch", c, &cl, &st) != 0)
        return 2;
    struct monitor *m = monitor_start(c, cl, &st, (int)(interval * 1000));
    monitor_take_usr(m);
    int rc = 0;
    struct ops *ops = NULL;
    struct buf oerr = BUF_INIT;
    if (!m) {
        fprintf(stderr, "dsv41-top watch: cannot start sampling (out of memory or threads)\n");
        rc = 2;
    } else if (!once && ops_start(c, &st, true, &ops, &oerr) < 0) {
        /* alerts and supervision only where it runs on: --once is a look */
        fprintf(stderr, "dsv41-top watch: %s\n", buf_str(&oerr));
        rc = 2;
        monitor_take_usr(NULL);
        monitor_stop(m);
        m = NULL;
    }
    buf_free(&oerr);
    static struct fact prev[MAX_FACTS], cur[MAX_FACTS];
    int nprev = 0;
    uint64_t said = 0;
    bool started = false;
    double t0 = mono_s();
    while (m && !interrupt_pending()) {
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
        state_lock(&st);
        /* the engine's own messages (a guard firing, a stop job started),
         * copied under the lock and printed after it: a slow reader of
         * stdout must never hold up the monitor */
        static struct fact msgs[16];
        int nmsg = 0;
        if (said < st.messages.first)
            said = st.messages.first;
        for (; said < st.messages.end && nmsg < 16; said++) {
            const struct logline *l = logbuf_get(&st.messages, said);
            if (l && (started || !once)) {
                msgs[nmsg] = (struct fact){"message", "", ALARM_NONE};
                snprintf(msgs[nmsg++].value, sizeof msgs[0].value, "%.*s", (int)l->len, l->text);
            }
        }
        bool ready = complete(&st, mono_s() - t0);
        int n = ready ? facts(&st, cur) : 0;
        state_unlock(&st);
        for (int k = 0; k < nmsg; k++)
            print_fact(&msgs[k], json);
        if (!ready) {
            if (once && mono_s() - t0 > 60) {
                fprintf(stderr, "dsv41-top watch: no full sample within 60 s\n");
                rc = 2;
                break;
            }
            continue;
        }
        started = true;
        int alarm = 0;
        for (int i = 0; i < n; i++) {
            bool same = false;
            for (int k = 0; k < nprev && !same; k++)
                same = strcmp(prev[k].key, cur[i].key) == 0 &&
                       strcmp(prev[k].value, cur[i].value) == 0;
            if (!same) {
                print_fact(&cur[i], json);
                if (cur[i].alarm && !alarm)
                    alarm = cur[i].alarm;
            }
        }
        memcpy(prev, cur, sizeof cur[0] * (size_t)n);
        nprev = n;
        if (once) {
            rc = worst(cur, n);
            break;
        }
        if (exit_on_alarm && alarm) {
            rc = worst(cur, n);
            break;
        }
    }
    monitor_take_usr(NULL);
    ops_stop(ops); /* before the jobs: it starts them */
    cmd_headless_close(m, cl, &st);
    return rc;
}
