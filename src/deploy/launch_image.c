/* launch_image: the image on every node - pulled where it is missing, with
 * its progress said, and the ids the nodes have compared. Part of launch
 * (launch_int.h). */
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
#include "fanout.h"
#include "guards.h"
#include "interrupt.h"
#include "mono.h"
#include "ranks.h"
#include "runtime.h"
#include "status.h"
#include "text.h"

/* An image pull, watched: its lines as they come (the runtime's own
 * progress), a line every 30 s while it says nothing, and an interrupt that
 * stops it on the node. */
struct pull_watch {
    pthread_mutex_t mu;
    const char *node;
    long pid; /* the pull's on the node, from the script's first line */
    double last_line;
    bool ended;
};

static void on_pull_line(void *ctx, const char *line, size_t len)
{
    struct pull_watch *w = ctx;
    char clean[240];
    text_clean(clean, sizeof clean, line, len);
    pthread_mutex_lock(&w->mu);
    if (w->pid == 0 && strncmp(clean, "pid ", 4) == 0)
        w->pid = strtol(clean + 4, NULL, 10);
    else if (clean[0])
        printf("  %s: pull: %s\n", w->node, clean);
    w->last_line = mono_s();
    pthread_mutex_unlock(&w->mu);
}

static void on_pull_event(void *ctx, bool up)
{
    struct pull_watch *w = ctx;
    pthread_mutex_lock(&w->mu);
    if (!up)
        w->ended = true;
    pthread_mutex_unlock(&w->mu);
}

int launch_pull_image(const struct config *c, struct lnode *l)
{
    const char *rt = config_str(c, CFG_RUNTIME), *img = config_str(c, CFG_IMG);
    printf("%s: image %s missing: pulling (Ctrl-C stops the pull; nothing else changes)\n",
           l->cn->name, img);
    struct pull_watch w = {.node = l->cn->name, .last_line = mono_s()};
    pthread_mutex_init(&w.mu, NULL);
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "echo \"pid $$\"; exec \"$@\" 2>&1");
    shcmd_arg(&cmd, rt);
    shcmd_arg(&cmd, "pull");
    shcmd_arg(&cmd, "--");
    shcmd_arg(&cmd, img);
    struct node_stream *st = node_stream_open(&l->cn->node, &cmd, on_pull_line, on_pull_event, &w);
    shcmd_free(&cmd);
    if (!st) {
        printf("%s: cannot start the pull (out of memory, or the node is unreachable)\n",
               l->cn->name);
        pthread_mutex_destroy(&w.mu);
        return -1;
    }
    double t0 = mono_s();
    int rc = 0;
    for (;;) {
        usleep(200000);
        pthread_mutex_lock(&w.mu);
        bool ended = w.ended;
        double quiet = mono_s() - w.last_line;
        if (quiet >= 30)
            w.last_line = mono_s();
        pthread_mutex_unlock(&w.mu);
        if (ended)
            break;
        if (interrupt_pending() || mono_s() - t0 > PULL_TIMEOUT_MS / 1000.0) {
            rc = -1;
            break;
        }
        if (quiet >= 30)
            printf("  %s: pull: still pulling after %.0f s\n", l->cn->name, mono_s() - t0);
    }
    node_stream_close(&l->cn->node, st);
    if (rc < 0) {
        /* a remote pull outlives its channel until its next write: stop it */
        if (w.pid > 1 && !l->cn->node.local) {
            struct shcmd k = SHCMD_INIT;
            struct ssh_result res;
            struct buf err = BUF_INIT;
            char pid[32];
            snprintf(pid, sizeof pid, "%ld", w.pid);
            shcmd_exec(&k, "kill", "-TERM", "--", pid, (char *)NULL);
            if (node_run(&l->cn->node, &k, 10000, &res, &err) == 0)
                ssh_result_free(&res);
            shcmd_free(&k);
            buf_free(&err);
        }
        if (interrupt_pending())
            printf("%s: pull stopped by %s after %.0f s; run launch again to pull again\n",
                   l->cn->name, interrupt_name(interrupt_pending()), mono_s() - t0);
        else
            printf("%s: the pull of %s took over %d min: pull it by hand: %s pull %s\n",
                   l->cn->name, img, PULL_TIMEOUT_MS / 60000, rt, img);
    }
    pthread_mutex_destroy(&w.mu);
    return rc;
}

struct image_ids {
    const struct config *c;
    struct lnode *ln;
    char id[CLUSTER_MAX_NODES][80]; /* "" when the node did not say */
};

static int image_id_of(int i, FILE *out, void *ctx)
{
    (void)out;
    struct image_ids *a = ctx;
    if (a->ln[i].image_id[0]) { /* the preflight's: no round trip more (#32) */
        snprintf(a->id[i], sizeof a->id[i], "%s", a->ln[i].image_id);
        return 0;
    }
    struct shcmd s = SHCMD_INIT;
    struct buf err = BUF_INIT;
    shcmd_exec(&s, config_str(a->c, CFG_RUNTIME), "image", "inspect", "-f", "{{.Id}}", "--",
               config_str(a->c, CFG_IMG), (char *)NULL);
    struct ssh_result res;
    if (node_run(&a->ln[i].cn->node, &s, 60000, &res, &err) == 0) {
        text_clean(a->id[i], sizeof a->id[i], buf_str(&res.out), strcspn(buf_str(&res.out), "\n"));
        ssh_result_free(&res);
    }
    shcmd_free(&s);
    buf_free(&err);
    return 0;
}

/* The image id each node will run (asked of every node at once), printed,
 * with a warning when they differ. */
void launch_show_image_ids(const struct config *c, struct lnode *ln, int n)
{
    struct image_ids *a = calloc(1, sizeof *a);
    if (!a)
        return;
    a->c = c;
    a->ln = ln;
    fanout_run(n, image_id_of, a, stdout);
    const char *first = NULL;
    for (int i = 0; i < n && i < CLUSTER_MAX_NODES; i++) {
        if (!a->id[i][0])
            continue;
        printf("  %-8s image id %.24s\n", ln[i].cn->name, a->id[i]);
        if (!first)
            first = a->id[i];
        else if (strcmp(first, a->id[i]) != 0)
            printf("warning: %s has image id %.24s, head has %.24s: the nodes run "
                   "different builds\n",
                   ln[i].cn->name, a->id[i], first);
    }
    free(a);
}
