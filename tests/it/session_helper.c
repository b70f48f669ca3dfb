/* Holds one cluster (and so one ssh session to the worker) across commands
 * read from stdin, so a test can cut the session under it: each "status" line
 * prints the status JSON on one line; "killed" runs a command that SIGKILLs
 * its own shell and prints the exit status the node reported. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "cluster.h"
#include "status_out.h"

struct collect {
    pthread_mutex_t mu;
    int lines, in_order, longest;
    size_t bytes;
};

static void on_line(void *ctx, const char *line, size_t len)
{
    struct collect *c = ctx;
    pthread_mutex_lock(&c->mu);
    char want[32];
    snprintf(want, sizeof want, "line%d", c->lines);
    if (len < 100 && (len != strlen(want) || memcmp(line, want, len) != 0))
        c->in_order = 0;
    if (len < 100)
        c->lines++;
    if ((int)len > c->longest)
        c->longest = (int)len;
    c->bytes += len;
    pthread_mutex_unlock(&c->mu);
}

struct runner {
    struct node *n;
    int ok;
};

static void *run_commands(void *arg)
{
    struct runner *r = arg;
    for (int i = 0; i < 5; i++) {
        struct ssh_result res;
        struct buf err = BUF_INIT;
        char want[64];
        struct shcmd cmd = SHCMD_INIT;
        shcmd_script(&cmd, "echo \"hi-$1\"");
        shcmd_argf(&cmd, "%d", i);
        snprintf(want, sizeof want, "hi-%d\n", i);
        if (node_run(r->n, &cmd, 10000, &res, &err) == 0) {
            r->ok += strcmp(buf_str(&res.out), want) == 0;
            ssh_result_free(&res);
        }
        shcmd_free(&cmd);
        buf_free(&err);
    }
    return NULL;
}

/* A log-like stream (200 numbered lines, then a 2.5 MB line), short commands
 * from two threads and snapshots, all at once on the worker's one session. */
static void multiplex(const struct config *c, struct cluster *cl, struct status_report *r)
{
    struct node *w = &cl->nodes[1].node;
    struct collect col = {PTHREAD_MUTEX_INITIALIZER, 0, 1, 0, 0};
    struct sshio_stream *st = sshio_stream_open(
        node_io(w),
        "i=0; while [ $i -lt 200 ]; do echo line$i; i=$((i+1)); [ $((i % 20)) = 0 ] && sleep 0.05; "
        "done; head -c 2500000 /dev/zero | tr '\\0' x; echo; sleep 30",
        false, on_line, NULL, &col);
    struct runner r1 = {w, 0}, r2 = {w, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, run_commands, &r1);
    pthread_create(&t2, NULL, run_commands, &r2);
    int status_ok = 0;
    for (int i = 0; i < 3; i++) {
        status_collect(c, cl, r);
        status_ok += r->nodes[1].snap.reachable;
    }
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&col.mu);
        bool done = col.lines >= 200 && col.bytes >= 2500000 + 200 * 4;
        pthread_mutex_unlock(&col.mu);
        if (done)
            break;
        usleep(100000);
    }
    sshio_stream_close(node_io(w), st);
    pthread_mutex_lock(&col.mu);
    printf("{\"lines\":%d,\"in_order\":%s,\"longest\":%d,\"bytes\":%zu,\"runs_ok\":%d,"
           "\"status_ok\":%d}\n",
           col.lines, col.in_order ? "true" : "false", col.longest, col.bytes, r1.ok + r2.ok,
           status_ok);
    pthread_mutex_unlock(&col.mu);
}

/* 400,000 numbered lines (4.3 MB) at once: more than a stream's buffer
 * holds, so the channel must wait for the reader instead of dropping. */
static void flood(struct cluster *cl)
{
    struct node *w = &cl->nodes[1].node;
    struct collect col = {PTHREAD_MUTEX_INITIALIZER, 0, 1, 0, 0};
    struct sshio_stream *st = sshio_stream_open(
        node_io(w), "seq -f line%.0f 0 399999; sleep 30", false, on_line, NULL, &col);
    for (int i = 0; i < 300; i++) {
        pthread_mutex_lock(&col.mu);
        bool done = col.lines >= 400000;
        pthread_mutex_unlock(&col.mu);
        if (done)
            break;
        usleep(100000);
    }
    sshio_stream_close(node_io(w), st);
    pthread_mutex_lock(&col.mu);
    printf("{\"lines\":%d,\"in_order\":%s}\n", col.lines, col.in_order ? "true" : "false");
    pthread_mutex_unlock(&col.mu);
}

/* "late" while another channel on the session keeps sending: the close of
 * the late command reads the other channel's packets while it waits for
 * the node's CLOSE, and the exit status must still be the one it sent. */
static void late_busy(struct cluster *cl)
{
    struct node *w = &cl->nodes[1].node;
    struct collect col = {PTHREAD_MUTEX_INITIALIZER, 0, 1, 0, 0};
    struct sshio_stream *st = sshio_stream_open(
        node_io(w), "while :; do echo tick; sleep 0.002; done", false, on_line, NULL, &col);
    printf("{\"exits\":[");
    for (int i = 0; i < 4; i++) {
        struct shcmd cmd = SHCMD_INIT;
        struct ssh_result res;
        struct buf err = BUF_INIT;
        shcmd_script(&cmd, "exec >/dev/null 2>&1; sleep 0.3; exit 3");
        int rc = node_run(w, &cmd, 10000, &res, &err);
        printf("%s%d", i ? "," : "", rc == 0 ? res.exit_status : -100);
        if (rc == 0)
            ssh_result_free(&res);
        shcmd_free(&cmd);
        buf_free(&err);
    }
    sshio_stream_close(node_io(w), st);
    pthread_mutex_lock(&col.mu);
    printf("],\"ticks\":%d}\n", col.lines);
    pthread_mutex_unlock(&col.mu);
}

int main(void)
{
    struct config c;
    struct cluster cl;
    harness_open(&c, &cl);
    setvbuf(stdout, NULL, _IOLBF, 0);
    char line[1024];
    struct status_report *r = malloc(sizeof *r);
    while (r && fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "flood", 5) == 0) {
            flood(&cl);
            continue;
        }
        if (strncmp(line, "multiplex", 9) == 0 && r) {
            multiplex(&c, &cl, r);
            continue;
        }
        if (strncmp(line, "late busy", 9) == 0) {
            late_busy(&cl);
            continue;
        }
        /* "killed": a remote command a signal ends; "late": one that closes
         * its output and exits 3 a moment later (the EOF before the status);
         * "linger": one that closes its output and lives on (no status) */
        bool late = strncmp(line, "late", 4) == 0, linger = strncmp(line, "linger", 6) == 0;
        if (strncmp(line, "killed", 6) == 0 || late || linger) {
            struct shcmd cmd = SHCMD_INIT;
            struct ssh_result res;
            struct buf err = BUF_INIT;
            if (late)
                shcmd_script(&cmd, "exec >/dev/null 2>&1; sleep 0.5; exit 3");
            else if (linger)
                shcmd_script(&cmd, "exec >/dev/null 2>&1; sleep 20; exit 0");
            else
                shcmd_script(&cmd, "kill -9 $$");
            if (node_run(&cl.nodes[1].node, &cmd, 10000, &res, &err) == 0) {
                printf("{\"exit\":%d}\n", res.exit_status);
                ssh_result_free(&res);
            } else {
                printf("err: %s\n", buf_str(&err));
            }
            shcmd_free(&cmd);
            buf_free(&err);
            continue;
        }
        if (strncmp(line, "put ", 4) == 0) {
            line[strcspn(line, "\n")] = '\0';
            struct buf err = BUF_INIT;
            const char *text = "hello-put\n";
            if (node_put(&cl.nodes[1].node, line + 4, text, strlen(text), 0600, &err) == 0)
                printf("ok\n");
            else
                printf("err: %s\n", buf_str(&err));
            buf_free(&err);
            continue;
        }
        if (strncmp(line, "status", 6) != 0)
            continue;
        status_collect(&c, &cl, r);
        cJSON *j = status_to_json(r);
        char *s = cJSON_PrintUnformatted(j);
        printf("%s\n", s ? s : "{}");
        free(s);
        cJSON_Delete(j);
    }
    free(r);
    cluster_close(&cl);
    config_free(&c);
    return 0;
}
