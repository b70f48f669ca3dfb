#include "incident.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "dirs.h"
#include "events.h"
#include "mono.h"
#include "shcmd.h"
#include "strv.h"
#include "text.h"

#define QUEUE 4

/* What the state held when a trigger was seen, copied under its lock. */
struct capture {
    time_t t;
    char slug[24];    /* guard-fired, wedged, rank-exited (events.h's kinds) */
    char evnode[32];  /* the node it happened on; "" the engine's */
    bool after_launch; /* a rank started since the trigger before: a new deployment's */
    char what[480];   /* one line */
    int nnodes;
    char node[CLUSTER_MAX_NODES][32];
    struct strv log[CLUSTER_MAX_NODES]; /* each rank's last lines */
    struct state_sample recent[CLUSTER_MAX_NODES][STATE_RECENT];
    unsigned nrecent[CLUSTER_MAX_NODES];
    bool have_before;
    struct metrics before;
};

struct incident {
    const struct config *c;
    struct cluster *cl;
    struct state *s;
    /* detection: the monitor's thread only */
    bool primed;
    enum guard_view guard[CLUSTER_MAX_NODES];
    bool running[CLUSTER_MAX_NODES];
    bool launched; /* a rank went from not running to running since the last trigger */
    bool wedged;
    bool have_prev;
    struct metrics prev;
    /* the writer */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    struct capture *q[QUEUE];
    int nq;
    char last_dir[800]; /* the writer's own */
    char last_slug[24];
    time_t last_t;
    uint64_t last_event; /* the event of the incident being recorded */
    /* incident_causes_seen's time, told to the events once the writer has
     * written every capture queued before it (under mu) */
    uint64_t queued, written, causes_after;
    double causes_at; /* 0: none waits */
};

/* A new file in dir, 0600, or NULL (said on stderr: the console's log). */
static FILE *create(const char *dir, const char *name)
{
    char path[900];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* a new directory of its own: nothing there to follow or overwrite */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "incident: cannot write %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return f;
}

/* Remote text line by line, cleaned: the files are read in a terminal. */
static void put_clean(FILE *f, const char *text)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        char line[1024];
        text_clean(line, sizeof line, p, n);
        fprintf(f, "%s\n", line);
        p += n + (p[n] == '\n');
    }
}

static void put_pval(FILE *f, struct pval v, double scale, int prec)
{
    if (v.ok)
        fprintf(f, " %10.*f", prec, v.v * scale);
    else
        fprintf(f, " %10s", "n/a");
}

static void write_samples(FILE *f, const struct capture *cp, time_t since)
{
    fprintf(f, "# the last minute of each node's samples; n/a: not reported\n");
    for (int i = 0; i < cp->nnodes; i++) {
        fprintf(f, "\n## %s\n%-19s %10s %10s %10s %10s %10s %10s %10s %10s\n", cp->node[i], "time",
                "avail_GiB", "free_GiB", "cache_GiB", "psi_full%", "4M_blocks", "gpu_util%",
                "gpu_C", "gpu_W");
        unsigned n = cp->nrecent[i], have = n < STATE_RECENT ? n : STATE_RECENT;
        for (unsigned k = n - have; k < n; k++) {
            const struct state_sample *x = &cp->recent[i][k % STATE_RECENT];
            if (x->t < since)
                continue;
            struct tm tm;
            localtime_r(&x->t, &tm);
            char when[32];
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
            fprintf(f, "%-19s", when);
            if (!x->reachable) {
                fprintf(f, " unreachable\n");
                continue;
            }
            put_pval(f, x->avail_kib, 1 / 1048576.0, 2);
            put_pval(f, x->free_kib, 1 / 1048576.0, 2);
            put_pval(f, x->cached_kib, 1 / 1048576.0, 2);
            put_pval(f, x->psi_full, 1, 2);
            put_pval(f, x->frag_blocks, 1, 0);
            put_pval(f, x->gpu_util, 1, 0);
            put_pval(f, x->gpu_temp, 1, 0);
            put_pval(f, x->gpu_power, 1, 1);
            fputc('\n', f);
        }
    }
}

static void write_metrics(FILE *f, const struct metrics *m)
{
    fprintf(f, "# the figures of the scrape before, as parsed (vLLM's names as the page had them)\n");
    for (int i = 0; i < METRICS_NFIELDS; i++) {
        struct pval v;
        const char *name = metrics_field(m, i, NULL, &v);
        if (name)
            fprintf(f, "%s %.17g\n", name, v.v);
    }
}

/* The summary's section of what the guards logged when they fired */
#define FIRED_HEAD "  the guards' last FIRED lines:\n"

/* The last FIRED line of a guard log's text, into fired ("" when none). */
static void last_fired(const char *text, const char *node, struct buf *fired)
{
    const char *hit = NULL;
    for (const char *p = text; (p = strstr(p, " FIRED: ")); p++)
        hit = p;
    if (!hit)
        return;
    const char *from = hit;
    while (from > text && from[-1] != '\n')
        from--;
    char line[400];
    text_clean(line, sizeof line, from, strcspn(from, "\n"));
    buf_printf(fired, "  %s: %s\n", node, line);
}

/* Each node's guard log, kernel log and rank env file, asked in one round
 * trip; a guard's last FIRED line also into fired. */
static void write_node(const struct incident *in, int i, const char *dir, struct buf *fired)
{
    struct cluster_node *cn = &in->cl->nodes[i];
    if (!cn->configured)
        return;
    char sd[512], name[96];
    struct buf err = BUF_INIT;
    snprintf(name, sizeof name, "node-%s.txt", cn->name);
    FILE *f = create(dir, name);
    if (!f)
        return;
    if (cluster_state_dir(in->c, cn, sd, sizeof sd, &err) < 0) {
        fprintf(f, "cannot find this node's STATE_DIR: %s\n", buf_str(&err));
        fclose(f);
        buf_free(&err);
        return;
    }
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "cd -- \"$1\" 2>/dev/null || { echo \"no directory $1\"; exit 0; }; "
                       "echo \"== memguard.log, last 200 lines (FIRED, warnings, kernel: lines)\"; "
                       "tail -n 200 memguard.log 2>&1; "
                       "echo; echo \"== the kernel log (dmesg), last 200 lines\"; "
                       "dmesg 2>&1 | tail -n 200; "
                       "echo; echo \"== dsv41-r$2.env (the key has a file; secret-looking values "
                       "hidden)\"; "
                       "cat \"dsv41-r$2.env\" 2>&1");
    shcmd_arg(&cmd, sd);
    shcmd_argf(&cmd, "%d", cn->rank);
    struct ssh_result res;
    if (node_run(&cn->node, &cmd, 20000, &res, &err) == 0) {
        /* bundles are shared: a token EXTRA_ENV put in the env file is not */
        struct buf hid = BUF_INIT;
        text_hide_secrets(buf_str(&res.out), res.out.len, TEXT_HIDE_LINES, &hid);
        put_clean(f, buf_str(&hid));
        buf_free(&hid);
        last_fired(buf_str(&res.out), cn->name, fired);
        ssh_result_free(&res);
    } else {
        fprintf(f, "cannot ask %s: %s\n", cn->name, buf_str(&err));
    }
    shcmd_free(&cmd);
    buf_free(&err);
    fclose(f);
}

static void write_summary(const struct incident *in, const struct capture *cp, const char *dir)
{
    FILE *f = create(dir, "summary.txt");
    if (!f)
        return;
    struct tm tm;
    localtime_r(&cp->t, &tm);
    char when[40];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %z", &tm);
    fprintf(f, "%s at %s\n\n", cp->what, when);
    fprintf(f,
            "image     %s\nmodel     %s\nKV_BYTES  %s   MAX_SEQS %s   GPU_UTIL %s   "
            "guard floor %s GiB\n\n",
            config_str(in->c, CFG_IMG), config_str(in->c, CFG_MODEL_DIR),
            config_str(in->c, CFG_KV_BYTES), config_str(in->c, CFG_MAX_SEQS),
            config_str(in->c, CFG_GPU_UTIL), config_str(in->c, CFG_MEMGUARD_GIB));
    for (int i = 0; i < cp->nnodes; i++) {
        unsigned n = cp->nrecent[i];
        const struct state_sample *x = n ? &cp->recent[i][(n - 1) % STATE_RECENT] : NULL;
        fprintf(f, "%-8s ", cp->node[i]);
        if (!x || !x->reachable) {
            fprintf(f, "unreachable at the last sample\n");
            continue;
        }
        fprintf(f, "MemAvailable");
        put_pval(f, x->avail_kib, 1 / 1048576.0, 1);
        fprintf(f, " GiB  PSI full");
        put_pval(f, x->psi_full, 1, 1);
        fprintf(f, " %%  4 MiB blocks");
        put_pval(f, x->frag_blocks, 1, 0);
        fputc('\n', f);
    }
    fprintf(f, "\nfiles here:\n"
               "  rank-rN.log      each rank's last %d log lines as the console held them\n"
               "  samples.txt      every node's samples of the last minute\n"
               "  metrics-before.txt, metrics-after.txt   the server's figures either side\n"
               "  node-NAME.txt    the guard's log, the kernel log, the rank's env file\n"
               "  config.txt       every setting and where it came from (secrets hidden)\n"
               "\nwhat followed:\n",
            INCIDENT_LOG_LINES);
    fclose(f);
}

/* How much of a cause a trigger is: a guard's firing kills the ranks, a
 * dead rank wedges the engine. The incident is named for its cause. */
static int cause_rank(const char *slug)
{
    return strcmp(slug, "guard-fired") == 0 ? 3 : strcmp(slug, "rank-exited") == 0 ? 2 : 1;
}

/* A trigger within the window of the incident being recorded: one line in
 * its summary - and when it is the likelier cause (the guard's poll came a
 * second after the rank's exit), the incident takes its name and its
 * summary's first line. */
static void coalesce(struct incident *in, const struct capture *cp)
{
    struct tm tm;
    localtime_r(&cp->t, &tm);
    char when[16], path[900];
    strftime(when, sizeof when, "%H:%M:%S", &tm);
    snprintf(path, sizeof path, "%s/summary.txt", in->last_dir);
    struct buf old = BUF_INIT, text = BUF_INIT;
    buf_read_file(&old, path, 1 << 20);
    bool upgraded = cause_rank(cp->slug) > cause_rank(in->last_slug);
    if (upgraded) {
        char dir[800];
        size_t dl = strlen(in->last_dir), sl = strlen(in->last_slug);
        /* "...-rank-exited" becomes "...-guard-fired" (not a "-2" twin: kept) */
        if (dl > sl && strcmp(in->last_dir + dl - sl, in->last_slug) == 0) {
            snprintf(dir, sizeof dir, "%.*s%s", (int)(dl - sl), in->last_dir, cp->slug);
            if (access(dir, F_OK) != 0 && rename(in->last_dir, dir) == 0) {
                state_say(in->s, "incident recorded: %s (%s)", dir, cp->what);
                snprintf(in->last_dir, sizeof in->last_dir, "%s", dir);
                snprintf(path, sizeof path, "%s/summary.txt", dir);
            }
        }
        snprintf(in->last_slug, sizeof in->last_slug, "%s", cp->slug);
        /* its alert and the supervisor see the cause, not the symptom
         * (when the event has not been acted on yet: EVENTS_SETTLE_S) */
        if (!events_update(in->s, in->last_event, cp->slug, cp->evnode, cp->what, in->last_dir))
            in->last_event = events_push(in->s, cp->slug, cp->evnode, in->last_dir, cp->what);
        const char *o = buf_str(&old);
        size_t first = strcspn(o, "\n");
        buf_printf(&text, "%s at %s (first seen as: %.*s)%s", cp->what, when, (int)first, o,
                   o + first);
    } else {
        buf_puts(&text, buf_str(&old));
    }
    buf_printf(&text, "  %s %s\n", when, cp->what);
    /* a guard's firing seen after what it caused (a rank's exit, sampled
     * every second; the guards are read every 2 s): the nodes' files are
     * read again, so they hold the FIRED lines the first capture may have
     * come too early for */
    if (upgraded && strcmp(cp->slug, "guard-fired") == 0) {
        struct buf fired = BUF_INIT;
        for (int i = 0; i < in->cl->n; i++) {
            char node[900]; /* our own 0700 directory: the old file goes, a new one is made */
            snprintf(node, sizeof node, "%s/node-%s.txt", in->last_dir, in->cl->nodes[i].name);
            if (in->cl->nodes[i].configured && unlink(node) == 0)
                write_node(in, i, in->last_dir, &fired);
        }
        if (fired.len)
            buf_printf(&text, "%s%s", FIRED_HEAD, buf_str(&fired));
        buf_free(&fired);
    }
    if (buf_write_file(path, buf_str(&text), text.len, 0600) < 0)
        fprintf(stderr, "incident: cannot write %s: %s\n", path, strerror(errno));
    buf_free(&old);
    buf_free(&text);
}

static void write_capture(struct incident *in, struct capture *cp)
{
    /* what follows within the window belongs to the incident - unless the
     * ranks were launched again in between (a supervisor's relaunch, an
     * operator's): then it is the new deployment's own */
    if (in->last_dir[0] && !cp->after_launch && cp->t - in->last_t <= INCIDENT_COALESCE_S) {
        coalesce(in, cp);
        return;
    }
    char top[600], dir[800], stamp[32];
    struct tm tm;
    localtime_r(&cp->t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(top, sizeof top, "%s/incidents", config_str(in->c, CFG_STATE_DIR));
    /* made exclusively: a console and a watch on the same node both record
     * the incident, each in a directory of its own */
    int made = dirs_make(top, 0700);
    for (int k = 1; made == 0 && k < 100; k++) {
        if (k == 1)
            snprintf(dir, sizeof dir, "%s/%s-%s", top, stamp, cp->slug);
        else
            snprintf(dir, sizeof dir, "%s/%s-%s-%d", top, stamp, cp->slug, k);
        if (mkdir(dir, 0700) == 0)
            break;
        if (errno != EEXIST || k == 99)
            made = -1;
    }
    if (made < 0) {
        state_say(in->s, "cannot record the incident under %s: %s", top, strerror(errno));
        events_push(in->s, cp->slug, cp->evnode, NULL, cp->what);
        return;
    }
    /* the event before the files: an alert names the directory at once */
    in->last_event = events_push(in->s, cp->slug, cp->evnode, dir, cp->what);
    write_summary(in, cp, dir);
    for (int i = 0; i < cp->nnodes; i++) {
        char name[40];
        snprintf(name, sizeof name, "rank-r%d.log", i);
        FILE *f = create(dir, name);
        for (int k = 0; f && k < cp->log[i].n; k++)
            fprintf(f, "%s\n", cp->log[i].v[k]);
        if (f)
            fclose(f);
    }
    FILE *f = create(dir, "samples.txt");
    if (f) {
        write_samples(f, cp, cp->t - 60);
        fclose(f);
    }
    if ((f = create(dir, "metrics-before.txt"))) {
        if (cp->have_before)
            write_metrics(f, &cp->before);
        else
            fprintf(f, "n/a: no scrape before the incident\n");
        fclose(f);
    }
    if ((f = create(dir, "metrics-after.txt"))) {
        struct buf base = BUF_INIT, body = BUF_INIT, err = BUF_INIT;
        api_base_url(in->c, &base);
        long code = api_get(buf_str(&base), "/metrics", NULL, 5000, &body, &err);
        if (code == 200)
            put_clean(f, buf_str(&body));
        else
            fprintf(f, "n/a: /metrics answered %ld %s\n", code, buf_str(&err));
        buf_free(&base);
        buf_free(&body);
        buf_free(&err);
        fclose(f);
    }
    if ((f = create(dir, "config.txt"))) {
        config_dump(in->c, f);
        fclose(f);
    }
    struct buf fired = BUF_INIT;
    for (int i = 0; i < in->cl->n; i++)
        write_node(in, i, dir, &fired);
    if (fired.len) { /* what the guards logged when they fired: the floor, the figure */
        char path[900];
        snprintf(path, sizeof path, "%s/summary.txt", dir);
        FILE *sf = fopen(path, "a");
        if (sf) {
            fprintf(sf, "%s%s", FIRED_HEAD, buf_str(&fired));
            fclose(sf);
        }
    }
    buf_free(&fired);
    snprintf(in->last_dir, sizeof in->last_dir, "%s", dir);
    snprintf(in->last_slug, sizeof in->last_slug, "%s", cp->slug);
    in->last_t = cp->t;
    state_say(in->s, "incident recorded: %s", dir);
    state_changed(in->s);
}

static void capture_free(struct capture *cp)
{
    for (int i = 0; i < CLUSTER_MAX_NODES; i++)
        strv_free(&cp->log[i]);
    free(cp);
}

static void *writer(void *arg)
{
    struct incident *in = arg;
    pthread_mutex_lock(&in->mu);
    for (;;) {
        while (!in->nq && !in->stop)
            pthread_cond_wait(&in->cv, &in->mu);
        if (in->stop)
            break; /* quitting: what is queued is dropped (a down node would hold it up) */
        struct capture *cp = in->q[0];
        memmove(in->q, in->q + 1, sizeof in->q[0] * (size_t)--in->nq);
        pthread_mutex_unlock(&in->mu);
        write_capture(in, cp);
        capture_free(cp);
        pthread_mutex_lock(&in->mu);
        in->written++;
        if (in->causes_at > 0 && in->written >= in->causes_after) {
            double at = in->causes_at;
            in->causes_at = 0;
            pthread_mutex_unlock(&in->mu);
            events_causes_seen(in->s, at);
            pthread_mutex_lock(&in->mu);
        }
    }
    pthread_mutex_unlock(&in->mu);
    return NULL;
}

struct incident *incident_start(const struct config *c, struct cluster *cl, struct state *s)
{
    struct incident *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->c = c;
    in->cl = cl;
    in->s = s;
    pthread_mutex_init(&in->mu, NULL);
    pthread_cond_init(&in->cv, NULL);
    if (pthread_create(&in->th, NULL, writer, in) != 0) {
        pthread_mutex_destroy(&in->mu);
        pthread_cond_destroy(&in->cv);
        free(in);
        return NULL;
    }
    return in;
}

/* The copy, with the state locked. */
static struct capture *capture(struct incident *in, const char *slug, const char *node,
                               const char *what)
{
    const struct state *s = in->s;
    struct capture *cp = calloc(1, sizeof *cp);
    if (!cp)
        return NULL;
    cp->t = time(NULL);
    snprintf(cp->slug, sizeof cp->slug, "%s", slug);
    snprintf(cp->evnode, sizeof cp->evnode, "%s", node);
    snprintf(cp->what, sizeof cp->what, "%s", what);
    cp->nnodes = s->nnodes;
    for (int i = 0; i < s->nnodes && i < CLUSTER_MAX_NODES; i++) {
        snprintf(cp->node[i], sizeof cp->node[i], "%s", s->nodes[i].name);
        memcpy(cp->recent[i], s->nodes[i].recent, sizeof cp->recent[i]);
        cp->nrecent[i] = s->nodes[i].nrecent;
        const struct logbuf *lb = &s->ranks[i].log;
        uint64_t from = lb->end > INCIDENT_LOG_LINES ? lb->end - INCIDENT_LOG_LINES : 0;
        if (from < lb->first)
            from = lb->first;
        for (uint64_t k = from; k < lb->end; k++) {
            const struct logline *l = logbuf_get(lb, k);
            if (l)
                strv_addf(&cp->log[i], "%.*s", (int)l->len, l->text);
        }
    }
    cp->have_before = in->have_prev;
    cp->before = in->prev;
    return cp;
}

static void enqueue(struct incident *in, struct capture *cp)
{
    if (!cp)
        return;
    pthread_mutex_lock(&in->mu);
    if (in->nq < QUEUE) {
        in->q[in->nq++] = cp;
        in->queued++;
        cp = NULL;
        pthread_cond_signal(&in->cv);
    }
    pthread_mutex_unlock(&in->mu);
    if (cp) { /* a storm of triggers: the first ones are kept, the rest told */
        events_push(in->s, cp->slug, cp->evnode, NULL, cp->what);
        capture_free(cp);
    }
}

void incident_check(struct incident *in)
{
    if (!in)
        return;
    struct state *s = in->s;
    struct capture *found[CLUSTER_MAX_NODES * 2 + 1];
    int nf = 0;
    char what[480];
    state_lock(s);
    for (int i = 0; i < s->nnodes && i < CLUSTER_MAX_NODES; i++) {
        const struct state_node *sn = &s->nodes[i];
        if (!sn->configured || !sn->have)
            continue;
        enum guard_view g = sn->guard;
        if (in->primed && g == GUARD_VIEW_FIRED && in->guard[i] != GUARD_VIEW_FIRED) {
            snprintf(what, sizeof what, "memory guard fired on %s: %s", sn->name, sn->guard_event);
            found[nf++] = capture(in, "guard-fired", sn->name, what);
        }
        in->guard[i] = g;
        if (!sn->snap.reachable || !sn->snap.ct_sampled)
            continue; /* the containers were not asked: nothing is known */
        const struct container_info *ct = snapshot_rank_container(&sn->snap, s->ranks[i].rank);
        bool run = ct && ct->running;
        if (in->primed && in->running[i] && ct && !ct->running) {
            snprintf(what, sizeof what, "rank r%d on %s exited with code %d%s", s->ranks[i].rank,
                     sn->name, ct->exit_code, ct->oom_killed ? ", OOM-killed" : "");
            found[nf++] = capture(in, "rank-exited", sn->name, what);
        }
        in->launched |= in->primed && run && !in->running[i];
        in->running[i] = run;
    }
    bool wedged = s->server.wedged[0] != '\0';
    if (in->primed && wedged && !in->wedged) {
        snprintf(what, sizeof what, "engine wedged: %s", s->server.wedged);
        found[nf++] = capture(in, "wedged", "", what);
    }
    in->wedged = wedged;
    if (s->server.have && s->server.metrics_ok) {
        in->prev = s->server.m; /* the "before" of the next incident */
        in->have_prev = true;
    }
    in->primed = true;
    state_unlock(s);
    for (int k = 0; k < nf; k++) {
        if (found[k])
            found[k]->after_launch = in->launched && k == 0;
        enqueue(in, found[k]);
    }
    if (nf)
        in->launched = false;
}

void incident_causes_seen(struct incident *in, double at)
{
    pthread_mutex_lock(&in->mu);
    bool now = in->written == in->queued;
    if (!now && in->causes_at == 0) { /* a later time waits for this one: it comes sooner */
        in->causes_at = at;
        in->causes_after = in->queued;
    }
    pthread_mutex_unlock(&in->mu);
    if (now)
        events_causes_seen(in->s, at);
}

void incident_stop(struct incident *in)
{
    if (!in)
        return;
    pthread_mutex_lock(&in->mu);
    in->stop = true;
    pthread_cond_signal(&in->cv);
    pthread_mutex_unlock(&in->mu);
    pthread_join(in->th, NULL);
    for (int i = 0; i < in->nq; i++)
        capture_free(in->q[i]);
    pthread_mutex_destroy(&in->mu);
    pthread_cond_destroy(&in->cv);
    free(in);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int incident_list(const char *state_dir, FILE *out)
{
    char top[700];
    snprintf(top, sizeof top, "%s/incidents", state_dir);
    struct dirent **names;
    int n = scandir(top, &names, NULL, by_name);
    if (n < 0) {
        fprintf(out, "no incidents in %s\n", top);
        return 0;
    }
    int listed = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char path[1200], first[400] = "";
            snprintf(path, sizeof path, "%s/%s/summary.txt", top, names[i]->d_name);
            FILE *f = fopen(path, "r");
            if (f) {
                if (!fgets(first, sizeof first, f))
                    first[0] = '\0';
                fclose(f);
            }
            first[strcspn(first, "\n")] = '\0';
            char clean[400];
            text_clean(clean, sizeof clean, first, strlen(first));
            fprintf(out, "%s/%s\n    %s\n", top, names[i]->d_name, clean[0] ? clean : "(no summary)");
            listed++;
        }
        free(names[i]);
    }
    free(names);
    if (!listed)
        fprintf(out, "no incidents in %s\n", top);
    return listed;
}
