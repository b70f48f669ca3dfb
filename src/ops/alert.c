#include "alert.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "events.h"
#include "mono.h"
#include "strv.h"

#define CMD_TIMEOUT_S 30
#define POST_TIMEOUT_S 10

struct pending {
    struct state_event e;
    unsigned suppressed;
    bool hook_done, cmd_done;
    int failures;
    double first, next; /* monotonic: queued, next try */
};

struct alerter {
    struct state *s;
    char *url;          /* a secret: never said */
    bool text;
    struct strv cmd;
    int rate;
    char host[64];
    struct alert_limit limit[EVENT_NKINDS];
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    double stop_by;
    struct pending q[ALERT_QUEUE];
    int nq;
    bool busy; /* q[0] is being delivered, outside the lock: it stays where it is */
    uint64_t sent, failed, dropped;
};

bool alert_limit_take(struct alert_limit *l, int rate, double now)
{
    int k = 0;
    for (int i = 0; i < l->n; i++)
        if (now - l->t[i] < ALERT_WINDOW_S)
            l->t[k++] = l->t[i];
    l->n = k;
    if (rate > ALERT_RATE_MAX)
        rate = ALERT_RATE_MAX;
    if (l->n >= rate)
        return false;
    l->t[l->n++] = now;
    return true;
}

double alert_backoff(int failures)
{
    double d = 1;
    for (int i = 1; i < failures && d < 60; i++)
        d *= 2;
    return d < 60 ? d : 60;
}

static void iso_time(time_t t, char *out, size_t sz)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(out, sz, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

char *alert_json(const struct state_event *e, const char *host, unsigned suppressed)
{
    cJSON *j = cJSON_CreateObject();
    char when[40];
    iso_time(e->t, when, sizeof when);
    cJSON_AddStringToObject(j, "source", "dsv41-top");
    cJSON_AddStringToObject(j, "host", host);
    cJSON_AddStringToObject(j, "time", when);
    cJSON_AddNumberToObject(j, "seq", (double)e->seq);
    cJSON_AddStringToObject(j, "kind", e->kind);
    if (e->node[0])
        cJSON_AddStringToObject(j, "node", e->node);
    else
        cJSON_AddNullToObject(j, "node");
    cJSON_AddStringToObject(j, "what", e->what);
    if (e->incident[0])
        cJSON_AddStringToObject(j, "incident", e->incident);
    else
        cJSON_AddNullToObject(j, "incident");
    cJSON_AddNumberToObject(j, "suppressed", suppressed);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return t;
}

void alert_text(const struct state_event *e, const char *host, unsigned suppressed,
                struct buf *body, char *title, size_t titlesz)
{
    snprintf(title, titlesz, "%s: %s%s%s (dsv41-top)", host, e->kind, e->node[0] ? " on " : "",
             e->node);
    char when[40];
    iso_time(e->t, when, sizeof when);
    buf_printf(body, "%s %s\n", when, e->what);
    if (e->incident[0])
        buf_printf(body, "incident: %s\n", e->incident);
    if (suppressed)
        buf_printf(body, "(%u more of this kind held back in the last %d minutes)\n", suppressed,
                   ALERT_WINDOW_S / 60);
}

/* The alert's urgency for ntfy's Priority header. */
static bool urgent(const char *kind)
{
    return strcmp(kind, "guard-fired") == 0 || strcmp(kind, "wedged") == 0 ||
           strcmp(kind, "rank-exited") == 0 || strcmp(kind, "supervise-stopped") == 0 ||
           strcmp(kind, "node-unreachable") == 0;
}

static size_t discard(char *p, size_t sz, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return sz * n;
}

/* 0, or -1 with why (never the URL: it may hold a token). */
static int post(struct alerter *a, const struct pending *p, char *why, size_t whysz)
{
    struct buf body = BUF_INIT;
    char title[200], hdr[260];
    struct curl_slist *h = NULL;
    if (a->text) {
        alert_text(&p->e, a->host, p->suppressed, &body, title, sizeof title);
        snprintf(hdr, sizeof hdr, "Title: %s", title);
        h = curl_slist_append(h, "Content-Type: text/plain; charset=utf-8");
        h = curl_slist_append(h, hdr);
        if (urgent(p->e.kind))
            h = curl_slist_append(h, "Priority: high");
    } else {
        char *j = alert_json(&p->e, a->host, p->suppressed);
        buf_puts(&body, j ? j : "{}");
        free(j);
        h = curl_slist_append(h, "Content-Type: application/json");
    }
    CURL *c = curl_easy_init();
    int rc = -1;
    if (c) {
        curl_easy_setopt(c, CURLOPT_URL, a->url);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, buf_str(&body));
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body.len);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)POST_TIMEOUT_S);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        CURLcode cc = curl_easy_perform(c);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        if (cc != CURLE_OK)
            snprintf(why, whysz, "ALERT_WEBHOOK: %s", curl_easy_strerror(cc));
        else if (code < 200 || code > 299)
            snprintf(why, whysz, "ALERT_WEBHOOK answered HTTP %ld", code);
        else
            rc = 0;
        curl_easy_cleanup(c);
    } else {
        snprintf(why, whysz, "ALERT_WEBHOOK: out of memory");
    }
    curl_slist_free_all(h);
    buf_free(&body);
    return rc;
}

/* ALERT_CMD with the event's JSON on stdin: 0 when it exits 0 in time. */
static int run_cmd(struct alerter *a, const struct pending *p, char *why, size_t whysz)
{
    char *j = alert_json(&p->e, a->host, p->suppressed);
    int in[2];
    if (!j || pipe2(in, O_CLOEXEC) < 0) {
        free(j);
        snprintf(why, whysz, "ALERT_CMD: cannot start: %s", strerror(errno));
        return -1;
    }
    pid_t pid;
    /* its output goes where ours does (watch's: the journal) */
    int e = child_spawn_in(a->cmd.v[0], true, a->cmd.v, in[0], 2, 2, &pid);
    close(in[0]);
    if (e) {
        close(in[1]);
        free(j);
        snprintf(why, whysz, "ALERT_CMD: cannot run %s: %s", a->cmd.v[0], strerror(e));
        return -1;
    }
    /* a JSON line is far below a pipe's buffer: this write does not wait
     * on the program (and one that exits unread gives EPIPE, ignored) */
    size_t len = strlen(j);
    ssize_t w = write(in[1], j, len);
    (void)w;
    if (write(in[1], "\n", 1) < 0) {
        /* the program did not read: its exit status says whether it failed */
    }
    close(in[1]);
    free(j);
    double end = mono_s() + CMD_TIMEOUT_S;
    int st = 0;
    pid_t r;
    while ((r = waitpid(pid, &st, WNOHANG)) == 0 && mono_s() < end) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (r == 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &st, 0);
        snprintf(why, whysz, "ALERT_CMD: %s took more than %d s (killed)", a->cmd.v[0],
                 CMD_TIMEOUT_S);
        return -1;
    }
    if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(why, whysz, "ALERT_CMD: %s %s %d", a->cmd.v[0],
                 r > 0 && WIFEXITED(st) ? "exited with" : "was killed by signal",
                 r > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : r > 0 ? WTERMSIG(st) : -1);
        return -1;
    }
    return 0;
}

/* Waits on the condition until at (monotonic) or a change; mu held. */
static void wait_until(struct alerter *a, double at)
{
    struct timespec dl;
    double left = at - mono_s();
    if (left <= 0)
        return;
    mono_deadline(&dl, (int)(left * 1000) + 1);
    mono_cond_wait(&a->cv, &a->mu, &dl);
}

static void *sender(void *arg)
{
    struct alerter *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        if (a->stop && (!a->nq || mono_s() >= a->stop_by))
            break;
        if (!a->nq) {
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        struct pending p = a->q[0];
        if (mono_s() < p.next) {
            wait_until(a, a->stop ? (p.next < a->stop_by ? p.next : a->stop_by) : p.next);
            continue;
        }
        a->busy = true;
        pthread_mutex_unlock(&a->mu);
        char why[300] = "";
        if (a->url && !p.hook_done)
            p.hook_done = post(a, &p, why, sizeof why) == 0;
        if (a->cmd.n && !p.cmd_done)
            p.cmd_done = run_cmd(a, &p, why, sizeof why) == 0;
        bool done = (!a->url || p.hook_done) && (!a->cmd.n || p.cmd_done);
        double now = mono_s();
        if (!done) {
            p.failures++;
            p.next = now + alert_backoff(p.failures);
            if (now - p.first >= ALERT_GIVE_UP_S)
                state_say(a->s, "alert %s dropped after %d tries in %d minutes: %s", p.e.kind,
                          p.failures, ALERT_GIVE_UP_S / 60, why);
            else
                state_say(a->s, "alert %s not delivered (%s); again in %.0f s", p.e.kind, why,
                          p.next - now);
        }
        pthread_mutex_lock(&a->mu);
        a->busy = false;
        if (done || now - p.first >= ALERT_GIVE_UP_S) {
            if (done)
                a->sent++;
            else
                a->failed++;
            memmove(a->q, a->q + 1, sizeof a->q[0] * (size_t)--a->nq);
        } else {
            a->q[0] = p;
        }
    }
    int left = a->nq;
    a->dropped += (uint64_t)left;
    pthread_mutex_unlock(&a->mu);
    if (left)
        fprintf(stderr, "dsv41-top: %d alert(s) not delivered at exit\n", left);
    return NULL;
}

int alert_start(const struct config *c, struct state *s, struct alerter **out, struct buf *err)
{
    *out = NULL;
    const char *url = config_str(c, CFG_ALERT_WEBHOOK), *cmd = config_str(c, CFG_ALERT_CMD),
               *fmt = config_str(c, CFG_ALERT_FORMAT);
    if (!url[0] && !cmd[0])
        return 0;
    if (strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0) {
        buf_printf(err, "ALERT_FORMAT=%s: expected json or text", fmt);
        return -1;
    }
    struct alerter *a = calloc(1, sizeof *a);
    if (!a) {
        buf_puts(err, "out of memory");
        return -1;
    }
    a->s = s;
    a->text = strcmp(fmt, "text") == 0;
    long rate = 5;
    if (config_get_long(c, CFG_ALERT_RATE, &rate, err) < 0) {
        free(a);
        return -1;
    }
    a->rate = (int)rate;
    if (url[0] && !(a->url = strdup(url))) {
        free(a);
        buf_puts(err, "out of memory");
        return -1;
    }
    struct buf why = BUF_INIT;
    if (cmd[0] && (strv_add_shell_words(&a->cmd, cmd, &why) < 0 || !a->cmd.n)) {
        buf_printf(err, "ALERT_CMD: %s", why.len ? buf_str(&why) : "no program named");
        buf_free(&why);
        strv_free(&a->cmd);
        free(a->url);
        free(a);
        return -1;
    }
    buf_free(&why);
    if (gethostname(a->host, sizeof a->host) < 0)
        snprintf(a->host, sizeof a->host, "head");
    a->host[sizeof a->host - 1] = '\0';
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->th, NULL, sender, a) != 0) {
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        strv_free(&a->cmd);
        free(a->url);
        free(a);
        buf_puts(err, "cannot start the alerts' thread");
        return -1;
    }
    *out = a;
    return 0;
}

void alert_post(struct alerter *a, const struct state_event *e)
{
    if (!a)
        return;
    int k = events_kind_index(e->kind);
    double now = mono_s();
    pthread_mutex_lock(&a->mu);
    struct alert_limit *l = &a->limit[k >= 0 ? k : 0];
    if (!alert_limit_take(l, a->rate, now)) {
        l->held++;
        pthread_mutex_unlock(&a->mu);
        return;
    }
    if (a->nq == ALERT_QUEUE) { /* a receiver down for long: the oldest waiting goes */
        int drop = a->busy ? 1 : 0;
        memmove(a->q + drop, a->q + drop + 1, sizeof a->q[0] * (size_t)(ALERT_QUEUE - drop - 1));
        a->nq--;
        a->dropped++;
    }
    a->q[a->nq++] = (struct pending){*e, l->held, false, false, 0, now, now};
    l->held = 0;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

void alert_stats(struct alerter *a, uint64_t *sent, uint64_t *failed, uint64_t *dropped)
{
    *sent = *failed = *dropped = 0;
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    *sent = a->sent;
    *failed = a->failed;
    *dropped = a->dropped;
    pthread_mutex_unlock(&a->mu);
}

void alert_stop(struct alerter *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    a->stop_by = mono_s() + 3;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    strv_free(&a->cmd);
    free(a->url);
    free(a);
}
