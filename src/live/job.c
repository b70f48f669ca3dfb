#include "job.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "child.h"
#include "mono.h"
#include "text.h"


static struct strv g_base; /* our own copy, under g_mu: set by one thread, read by any */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_threads; /* job threads still running */

struct job_ctx {
    struct state *s;
    unsigned id;
    int fd;
    pid_t pid;
};

void job_set_base_args(char **args, int n)
{
    pthread_mutex_lock(&g_mu);
    strv_free(&g_base);
    for (int i = 0; i < n; i++)
        strv_add(&g_base, args[i]);
    pthread_mutex_unlock(&g_mu);
}

static struct state_job *find(struct state *s, unsigned id)
{
    for (int i = 0; i < STATE_JOBS; i++)
        if (s->jobs[i].id == id)
            return &s->jobs[i];
    return NULL;
}

static void on_line(void *ctx, const char *line, size_t len)
{
    struct job_ctx *j = ctx;
    struct state_job *sj = find(j->s, j->id);
    if (!sj)
        return;
    logbuf_push(&sj->out, line, len);
    if (len)
        text_clean(sj->last, sizeof sj->last, line, len);
}

static void *job_thread(void *arg)
{
    struct job_ctx *j = arg;
    struct buf pending = BUF_INIT;
    char chunk[16384];
    ssize_t n;
    while ((n = read(j->fd, chunk, sizeof chunk)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        buf_append(&pending, chunk, (size_t)n);
        state_lock(j->s);
        buf_drain_lines(&pending, LOGBUF_LINE_MAX * 4, on_line, j);
        state_unlock(j->s);
        state_changed(j->s);
    }
    close(j->fd);
    int st = 0;
    while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR) {
    }
    state_lock(j->s);
    if (pending.len)
        on_line(j, pending.data, pending.len);
    struct state_job *sj = find(j->s, j->id);
    char name[24] = "", last[240] = "";
    enum job_status result = JOB_FAILED;
    j->s->jobs_ended++;
    if (sj) {
        sj->ended = time(NULL);
        sj->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (sj->status == JOB_CANCELLED)
            result = JOB_CANCELLED;
        else
            result = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? JOB_OK : JOB_FAILED;
        sj->status = result;
        sj->pid = 0;
        snprintf(name, sizeof name, "%s", sj->name);
        snprintf(last, sizeof last, "%s", sj->last);
    }
    state_unlock(j->s);
    if (name[0])
        state_say(j->s, "%s %s%s%s", name,
                  result == JOB_OK ? "done" : result == JOB_CANCELLED ? "cancelled" : "FAILED",
                  last[0] ? ": " : "", last);
    buf_free(&pending);
    free(j);
    pthread_mutex_lock(&g_mu);
    g_threads--;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

/* A free slot, else the one of the oldest finished job; NULL when every
 * slot holds a running job. Lock held. */
static struct state_job *take_slot(struct state *s)
{
    struct state_job *best = NULL;
    for (int i = 0; i < STATE_JOBS; i++) {
        struct state_job *sj = &s->jobs[i];
        if (sj->id == 0)
            return sj;
        if (sj->status != JOB_RUNNING && (!best || sj->id < best->id))
            best = sj;
    }
    return best;
}

static int spawn(char *const argv[], int out_fd, pid_t *pid)
{
    /* the program itself through /proc/self/exe: after an upgrade replaced
     * the file, readlink names "PATH (deleted)", which cannot be run, while
     * the kernel still holds the running program's inode. The name is only
     * argv[0]. */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    static const char gone[] = " (deleted)";
    if ((size_t)n > sizeof gone - 1 && strcmp(self + n - (sizeof gone - 1), gone) == 0)
        self[n - (sizeof gone - 1)] = '\0';
    int argc = 0;
    while (argv[argc])
        argc++;
    /* the base words are held while the child is made (child_spawn copies them) */
    pthread_mutex_lock(&g_mu);
    char **full = calloc((size_t)(1 + g_base.n + argc + 1), sizeof *full);
    if (!full) {
        pthread_mutex_unlock(&g_mu);
        return -1;
    }
    int k = 0;
    full[k++] = self;
    for (int i = 0; i < g_base.n; i++)
        full[k++] = g_base.v[i];
    for (int i = 0; i < argc; i++)
        full[k++] = argv[i];
    int rc = child_spawn("/proc/self/exe", false, full, out_fd, out_fd, pid);
    pthread_mutex_unlock(&g_mu);
    free(full);
    errno = rc;
    return rc == 0 ? 0 : -1;
}

unsigned job_start(struct state *s, const char *name, char *const argv[])
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        state_say(s, "%s: cannot start: %s", name, strerror(errno));
        return 0;
    }
    state_lock(s);
    struct state_job *sj = take_slot(s);
    if (!sj) {
        state_unlock(s);
        close(p[0]);
        close(p[1]);
        state_say(s, "%s: not started: %d jobs are running already", name, STATE_JOBS);
        return 0;
    }
    logbuf_free(&sj->out);
    memset(sj, 0, sizeof *sj);
    pid_t pid;
    struct job_ctx *j = calloc(1, sizeof *j);
    if (!j || logbuf_init(&sj->out, 2000, 1 << 20) < 0 || spawn(argv, p[1], &pid) < 0) {
        int e = errno;
        state_unlock(s);
        free(j);
        close(p[0]);
        close(p[1]);
        state_say(s, "%s: cannot start: %s", name, strerror(e));
        return 0;
    }
    close(p[1]);
    sj->id = s->next_job_id++;
    snprintf(sj->name, sizeof sj->name, "%s", name);
    sj->status = JOB_RUNNING;
    sj->pid = pid;
    sj->started = time(NULL);
    s->njobs++;
    *j = (struct job_ctx){s, sj->id, p[0], pid};
    unsigned id = sj->id;
    state_unlock(s);

    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&g_mu);
    g_threads++;
    pthread_mutex_unlock(&g_mu);
    pthread_t th;
    if (pthread_create(&th, &a, job_thread, j) != 0) {
        pthread_mutex_lock(&g_mu);
        g_threads--;
        pthread_mutex_unlock(&g_mu);
        job_thread(j); /* no thread: wait here rather than lose the child */
    }
    pthread_attr_destroy(&a);
    state_say(s, "%s started", name);
    return id;
}

bool job_running(struct state *s, const char *name)
{
    bool r = false;
    state_lock(s);
    for (int i = 0; i < STATE_JOBS; i++)
        r |= s->jobs[i].id && s->jobs[i].status == JOB_RUNNING && strcmp(s->jobs[i].name, name) == 0;
    state_unlock(s);
    return r;
}

enum job_status job_result(struct state *s, unsigned id, int *exit_code, struct strv *tail,
                           int lines)
{
    state_lock(s);
    struct state_job *sj = find(s, id);
    enum job_status st = sj ? sj->status : JOB_FAILED;
    if (exit_code)
        *exit_code = sj ? sj->exit_code : -1;
    if (sj && tail && st != JOB_RUNNING) {
        uint64_t from = sj->out.end > (uint64_t)lines ? sj->out.end - (uint64_t)lines : 0;
        if (from < sj->out.first)
            from = sj->out.first;
        for (uint64_t k = from; k < sj->out.end; k++) {
            const struct logline *l = logbuf_get(&sj->out, k);
            if (l)
                strv_addf(tail, "%.*s", (int)l->len, l->text);
        }
    }
    state_unlock(s);
    return st;
}

unsigned job_newest_running(struct state *s, char *name, size_t sz)
{
    unsigned id = 0;
    state_lock(s);
    for (int i = 0; i < STATE_JOBS; i++) {
        const struct state_job *j = &s->jobs[i];
        if (j->id > id && j->status == JOB_RUNNING) {
            id = j->id;
            snprintf(name, sz, "%s", j->name);
        }
    }
    state_unlock(s);
    return id;
}

int job_cancel(struct state *s, unsigned id)
{
    state_lock(s);
    struct state_job *sj = find(s, id);
    pid_t pid = sj && sj->status == JOB_RUNNING ? sj->pid : 0;
    if (pid > 0)
        sj->status = JOB_CANCELLED;
    state_unlock(s);
    if (pid <= 0)
        return -1;
    return kill(-pid, SIGTERM);
}

int job_shutdown(struct state *s)
{
    pid_t pids[STATE_JOBS];
    int n = 0, left = 0;
    state_lock(s);
    for (int i = 0; i < STATE_JOBS; i++)
        if (s->jobs[i].id && s->jobs[i].status == JOB_RUNNING && s->jobs[i].pid > 0) {
            /* an acceptance runs its window to the end (promoted or rolled
             * back, its report written) without us: cut, it could leave
             * nothing serving. Its process group is its own; it ignores
             * the closed pipe. Not waited for. */
            if (strcmp(s->jobs[i].name, "accept") == 0) {
                left++;
                continue;
            }
            s->jobs[i].status = JOB_CANCELLED;
            pids[n++] = s->jobs[i].pid;
        }
    state_unlock(s);
    for (int i = 0; i < n; i++)
        kill(-pids[i], SIGTERM);
    struct timespec dl;
    mono_deadline(&dl, 5000);
    pthread_mutex_lock(&g_mu);
    while (g_threads > left)
        if (mono_cond_wait(&g_cv, &g_mu, &dl) == ETIMEDOUT) {
            for (int i = 0; i < n; i++)
                kill(-pids[i], SIGKILL);
            dl.tv_sec += 5;
        }
    pthread_mutex_unlock(&g_mu);
    return left;
}
