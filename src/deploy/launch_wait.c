/* launch_wait: the ranks watched after they start - each rank's log
 * followed, its phase said as it changes, a guard's firing or a rank's exit
 * named with both ranks' last lines - until the API answers. Part of
 * launch (launch_int.h). */
#include "launch_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "apikey.h"
#include "guards.h"
#include "interrupt.h"
#include "mono.h"
#include "ranks.h"
#include "runtime.h"
#include "status.h"
#include "text.h"

/* A phase change wakes the wait at once: "Application startup complete"
 * is followed by a look at the API then, not up to a poll's 200 ms later. */
static pthread_mutex_t wake_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cv = PTHREAD_COND_INITIALIZER;
static unsigned wake_n; /* phase changes seen; guarded by wake_mu */

static void on_log_line(void *ctx, const char *line, size_t len)
{
    struct lnode *l = ctx;
    pthread_mutex_lock(&l->mu);
    phase_feed(&l->ph, line, len);
    /* every phase is shown, also two that arrive between two looks */
    bool changed = l->ph.phase != l->shown || l->ph.failed;
    if (l->ph.phase != l->shown) {
        l->shown = l->ph.phase;
        strv_addf(&l->transitions, "[%7.1fs] r%d %-7s %-22s %.90s", mono_s() - l->t0, l->cn->rank,
                  l->cn->name, phase_name(l->ph.phase), l->ph.detail);
    }
    text_clean(l->tail[l->ntail % TAIL_LINES], sizeof l->tail[0], line, len);
    l->ntail++;
    pthread_mutex_unlock(&l->mu);
    if (changed) {
        pthread_mutex_lock(&wake_mu);
        wake_n++;
        pthread_cond_broadcast(&wake_cv);
        pthread_mutex_unlock(&wake_mu);
    }
}

/* Up to ms, less when a phase changes meanwhile. */
static void wait_poll(unsigned *seen, int ms)
{
    pthread_mutex_lock(&wake_mu);
    if (wake_n == *seen) {
        struct timespec dl;
        mono_deadline(&dl, ms);
        mono_cond_wait(&wake_cv, &wake_mu, &dl);
    }
    *seen = wake_n;
    pthread_mutex_unlock(&wake_mu);
}

/* The rank's last lines as the runtime stored them (a stream may not have
 * delivered the last ones of a rank that just died); the watched lines when
 * the node cannot be asked. */
static void print_tail(const struct config *c, struct lnode *l)
{
    struct strv lines = STRV_INIT;
    struct buf err = BUF_INIT;
    if (ranks_tail(&l->cn->node, config_str(c, CFG_RUNTIME), l->cn->rank, TAIL_LINES, &lines,
                   &err) == 0 &&
        lines.n) {
        printf("---- last %d lines of dsv41-r%d on %s ----\n", lines.n, l->cn->rank, l->cn->name);
        for (int i = 0; i < lines.n; i++)
            printf("  %s\n", lines.v[i]);
    } else {
        pthread_mutex_lock(&l->mu);
        int n = l->ntail < TAIL_LINES ? l->ntail : TAIL_LINES;
        printf("---- last %d lines of dsv41-r%d on %s (as watched) ----\n", n, l->cn->rank,
               l->cn->name);
        for (int i = l->ntail - n; i < l->ntail; i++)
            printf("  %s\n", l->tail[i % TAIL_LINES]);
        pthread_mutex_unlock(&l->mu);
    }
    strv_free(&lines);
    buf_free(&err);
}

/* The phase and first fatal line of a rank that stopped, from the log the
 * runtime stored: the stream may not have delivered its last lines yet. */
static void postmortem(const struct config *c, struct lnode *l, struct phase_state *ph)
{
    struct strv lines = STRV_INIT;
    struct buf err = BUF_INIT;
    phase_init(ph);
    pthread_mutex_lock(&l->mu);
    *ph = l->ph;
    pthread_mutex_unlock(&l->mu);
    if (ranks_tail(&l->cn->node, config_str(c, CFG_RUNTIME), l->cn->rank, 2000, &lines, &err) ==
        0) {
        phase_init(ph);
        for (int i = 0; i < lines.n; i++)
            if (!strstr(lines.v[i], "Traceback")) /* the line that says why comes after */
                phase_feed(ph, lines.v[i], strlen(lines.v[i]));
    }
    strv_free(&lines);
    buf_free(&err);
}

/* A worker's log comes over its ssh session and may trail the API's
 * readiness by a moment (a busy machine): up to 3 s for every node's memory
 * figures (weights, CUDA graphs) before the logs close and what came is
 * recorded for the next budget. Their lines change a phase, which wakes the
 * look at once. */
static void await_figures(struct lnode *ln, int n)
{
    pthread_mutex_lock(&wake_mu);
    unsigned seen = wake_n;
    pthread_mutex_unlock(&wake_mu);
    for (double end = mono_s() + 3.0; mono_s() < end;) {
        bool all = true;
        for (int i = 0; i < n; i++) {
            pthread_mutex_lock(&ln[i].mu);
            all = all && ln[i].ph.weights_gib >= 0 && ln[i].ph.graphs_gib >= 0;
            pthread_mutex_unlock(&ln[i].mu);
        }
        if (all)
            return;
        wait_poll(&seen, 100);
    }
}

static void close_logs(struct lnode *ln, int n)
{
    for (int i = 0; i < n; i++) {
        logstream_close(&ln[i].cn->node, ln[i].logs);
        ln[i].logs = NULL;
    }
}

/* A guard that fired during this launch is the likely cause: say so. */
static void say_guard_fired(struct lnode *ln, int n, double t0)
{
    char since[32];
    time_t start = time(NULL) - (time_t)(mono_s() - t0) - 1;
    struct tm tm;
    localtime_r(&start, &tm);
    strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", &tm);
    for (int i = 0; i < n; i++) {
        struct shcmd cmd = SHCMD_INIT;
        struct buf err = BUF_INIT;
        shcmd_script(&cmd, "grep FIRED -- \"$1/memguard.log\" 2>/dev/null | tail -n 1");
        shcmd_arg(&cmd, ln[i].state_dir);
        struct ssh_result res;
        if (node_run(&ln[i].cn->node, &cmd, 30000, &res, &err) == 0) {
            char line[300];
            text_clean(line, sizeof line, buf_str(&res.out), strcspn(buf_str(&res.out), "\n"));
            if (line[0] && strncmp(line, since, strlen(since)) >= 0)
                printf("the memory guard fired on %s: %s\n", ln[i].cn->name, line);
            ssh_result_free(&res);
        }
        shcmd_free(&cmd);
        buf_free(&err);
    }
}

/* Watches the ranks until the API answers with the key. */
int launch_wait_ready(const struct config *c, struct lnode *ln, int n, int timeout_s, double t0)
{
    const char *rt = config_str(c, CFG_RUNTIME);
    struct buf base = BUF_INIT, key = BUF_INIT, why = BUF_INIT;
    api_base_url(c, &base);
    api_load_key(c, &key, &why);
    for (int i = 0; i < n; i++) {
        char name[32];
        ln[i].t0 = t0;
        snprintf(name, sizeof name, "dsv41-r%d", ln[i].cn->rank);
        ln[i].logs = logstream_open(&ln[i].cn->node, rt, name, true, -1, on_log_line, NULL, &ln[i]);
    }
    pthread_mutex_lock(&wake_mu);
    unsigned seen = wake_n;
    pthread_mutex_unlock(&wake_mu);
    int rc = 1;
    double next_state = 0;
    bool near = false;     /* rank 0 past its CUDA graphs: the API is seconds away */
    bool answered = false; /* the API gave an HTTP answer (not 200: a 401, a 503) */
    const char *failure = NULL;
    char failbuf[512] = "";
    while (!interrupt_pending()) {
        double t = mono_s();
        char fatal_msg[512] = "";
        for (int i = 0; i < n; i++) {
            pthread_mutex_lock(&ln[i].mu);
            for (int k = 0; k < ln[i].transitions.n; k++)
                printf("%s\n", ln[i].transitions.v[k]);
            fflush(stdout);
            strv_free(&ln[i].transitions);
            if (ln[i].cn->rank == 0 && ln[i].ph.phase >= PHASE_ENGINE)
                near = true;
            if (ln[i].ph.failed && !fatal_msg[0])
                snprintf(fatal_msg, sizeof fatal_msg, "r%d on %s logged a fatal line during %s: %s",
                         ln[i].cn->rank, ln[i].cn->name, phase_name(ln[i].ph.phase),
                         ln[i].ph.fatal);
            pthread_mutex_unlock(&ln[i].mu);
        }
        if (!fatal_msg[0]) {
            struct buf body = BUF_INIT, err = BUF_INIT;
            long code = api_get(buf_str(&base), "/v1/models", buf_str(&key), 1000, &body, &err);
            answered |= code > 0;
            buf_free(&body);
            buf_free(&err);
            if (code == 200) {
                rc = 0;
                break;
            }
        }
        /* a fatal line checks the containers at once: a rank that exited is
         * the cause, the other rank's complaints are its consequence */
        if (t >= next_state || fatal_msg[0]) {
            next_state = t + 1.0;
            if (fatal_msg[0])
                usleep(300000); /* let the runtime record an exit in flight */
            for (int i = 0; i < n && !failure; i++) {
                struct container_info ct;
                struct buf e = BUF_INIT;
                int have = ranks_inspect(&ln[i].cn->node, rt, ln[i].cn->rank, &ct, &e);
                if (have == 0 || (have == 1 && !ct.running)) {
                    struct phase_state ph;
                    postmortem(c, &ln[i], &ph);
                    snprintf(failbuf, sizeof failbuf, "r%d on %s %s during %s", ln[i].cn->rank,
                             ln[i].cn->name, have ? "exited" : "disappeared",
                             phase_name(ph.phase));
                    if (have)
                        snprintf(failbuf + strlen(failbuf), sizeof failbuf - strlen(failbuf),
                                 " (exit code %d%s)", ct.exit_code,
                                 ct.oom_killed ? ", OOM-killed" : "");
                    if (ph.failed)
                        snprintf(failbuf + strlen(failbuf), sizeof failbuf - strlen(failbuf),
                                 ": %s", ph.fatal);
                    failure = failbuf;
                }
                buf_free(&e);
            }
            if (!failure && fatal_msg[0]) {
                snprintf(failbuf, sizeof failbuf, "%s", fatal_msg);
                failure = failbuf;
            }
            if (failure)
                break;
        }
        if (t - t0 > timeout_s) {
            snprintf(failbuf, sizeof failbuf,
                     "the API did not answer within %d s (READY_TIMEOUT; first boot takes "
                     "~12 min)",
                     timeout_s);
            failure = failbuf;
            break;
        }
        /* 200 ms while the ranks load (minutes on a Spark); 25 ms once rank
         * 0 is past its graphs, so that ready is said within a look of the
         * API's first answer - a podman log stream hands lines over in
         * batches (~250 ms here), so its READY line comes later than that.
         * Only while no HTTP answer came: one that is not 200 (a wrong
         * key's 401) would put 40 lines a second into vLLM's access log.
         * Before uvicorn listens, a look is a refused connect on loopback:
         * vLLM binds its socket before the engine is built but listens only
         * when it serves (create_server_socket: bind, no listen; in
         * vllm/entrypoints/openai/api_server.py of 0.11, moved to
         * vllm/utils/network_utils.py later). */
        wait_poll(&seen, near && !answered ? 25 : 200);
    }
    if (interrupt_pending() && rc) {
        snprintf(failbuf, sizeof failbuf, "interrupted by %s", interrupt_name(interrupt_pending()));
        failure = failbuf;
    }
    if (rc == 0)
        await_figures(ln, n);
    close_logs(ln, n);
    if (rc == 0) {
        long kv = -1;
        for (int i = 0; i < n; i++)
            if (ln[i].ph.kv_tokens > 0)
                kv = ln[i].ph.kv_tokens;
        printf("ready after %.1f s: %s/v1, model %s", mono_s() - t0, buf_str(&base),
               DEPLOY_SERVED_NAME);
        if (kv > 0)
            printf(", KV cache %ld tokens", kv);
        printf("\n");
    } else {
        printf("launch failed: %s\n", failure ? failure : "unknown");
        if (!interrupt_pending()) {
            say_guard_fired(ln, n, t0);
            for (int i = 0; i < n; i++)
                print_tail(c, &ln[i]);
            printf("stopping the other ranks (they would wait in NCCL for the dead one)\n");
        } else {
            printf("stopping the ranks this launch started\n");
        }
        if (launch_kill_all(c, ln, n) == 0 && interrupt_pending())
            printf("stopped: no rank of this launch runs\n");
    }
    apikey_scrub(&key);
    buf_free(&base);
    buf_free(&why);
    return rc;
}
