#include "guardpoll.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mono.h"

#define ASK_TIMEOUT_MS 15000

struct guardpoll {
    const struct config *c;
    struct cluster_node *cn;
    double every_s;
    char dir[512]; /* the thread's */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;      /* under mu */
    atomic_int cancel; /* ends an ask in flight when stopping */
    bool fresh;     /* under mu: an answer not taken yet */
    bool asked;     /* under mu: text is the node's answer, not a reason */
    double asked_at; /* under mu: when that ask began (monotonic s) */
    char text[1200]; /* under mu */
};

/* Asks the node's shell for the three lines (see guardview_parse). */
static void ask(struct guardpoll *p, bool *asked, char *text, size_t sz)
{
    *asked = false;
    struct buf err = BUF_INIT;
    if (!p->dir[0] && cluster_state_dir(p->c, p->cn, p->dir, sizeof p->dir, &err) < 0) {
        p->dir[0] = '\0';
        snprintf(text, sz, "no state directory: %.300s", buf_str(&err));
        buf_free(&err);
        return;
    }
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "cd -- \"$1\" 2>/dev/null || exit 0; "
                       "h=$(cat guard.$(uname -n).heartbeat 2>/dev/null); "
                       "echo \"$(date +%s) $h\"; set -- $h; "
                       "if [ -n \"$2\" ] && kill -0 \"$2\" 2>/dev/null; then echo alive; "
                       "else echo dead; fi; tail -n 1 memguard.log 2>/dev/null");
    shcmd_arg(&cmd, p->dir);
    struct ssh_result res;
    if (node_run_cancel(&p->cn->node, &cmd, ASK_TIMEOUT_MS, &p->cancel, &res, &err) == 0) {
        snprintf(text, sz, "%s", buf_str(&res.out));
        *asked = true;
        ssh_result_free(&res);
    } else {
        snprintf(text, sz, "cannot ask: %.150s", buf_str(&err));
    }
    shcmd_free(&cmd);
    buf_free(&err);
}

static void *poll_main(void *arg)
{
    struct guardpoll *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        pthread_mutex_unlock(&p->mu);
        bool asked;
        char text[sizeof p->text];
        double at = mono_s();
        ask(p, &asked, text, sizeof text);
        pthread_mutex_lock(&p->mu);
        memcpy(p->text, text, sizeof text);
        p->asked = asked;
        p->asked_at = at;
        p->fresh = true;
        struct timespec dl;
        mono_deadline(&dl, (int)(p->every_s * 1000));
        if (!p->stop)
            mono_cond_wait(&p->cv, &p->mu, &dl);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct guardpoll *guardpoll_start(const struct config *c, struct cluster_node *cn,
                                  double every_s)
{
    struct guardpoll *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->c = c;
    p->cn = cn;
    p->every_s = every_s;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->th, NULL, poll_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p);
        return NULL;
    }
    return p;
}

bool guardpoll_take(struct guardpoll *p, bool *asked, double *asked_at, char *text,
                    size_t textsz)
{
    pthread_mutex_lock(&p->mu);
    bool fresh = p->fresh;
    if (fresh) {
        snprintf(text, textsz, "%s", p->text);
        *asked = p->asked;
        *asked_at = p->asked_at;
        p->fresh = false;
    }
    pthread_mutex_unlock(&p->mu);
    return fresh;
}

void guardpoll_cancel(struct guardpoll *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    atomic_store(&p->cancel, 1); /* an ask in flight gives up within ~200 ms */
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void guardpoll_stop(struct guardpoll *p)
{
    if (!p)
        return;
    guardpoll_cancel(p);
    pthread_join(p->th, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}
