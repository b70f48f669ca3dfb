#include "node.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NODE_MAX_OUTPUT (8u << 20)
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void node_init_local(struct node *n, const char *name, const char *proc_root, const char *sys_root)
{
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->local = true;
    snprintf(n->proc_root, sizeof n->proc_root, "%s", proc_root);
    snprintf(n->sys_root, sizeof n->sys_root, "%s", sys_root);
    pthread_mutex_init(&n->mu, NULL);
}

int node_init_remote(struct node *n, const char *name, const char *target, const char *ssh_config,
                     const char *known_hosts, int timeout_ms, const char *proc_root,
                     const char *sys_root, struct buf *err)
{
    node_init_local(n, name, proc_root, sys_root);
    n->local = false;
    snprintf(n->target, sizeof n->target, "%s", target);
    snprintf(n->known_hosts, sizeof n->known_hosts, "%s", known_hosts);
    n->timeout_ms = timeout_ms;
    if (sshconf_resolve(ssh_config, target, &n->t, err) < 0)
        return -1;
    return 0;
}

static void mark_down(struct node *n, const char *why)
{
    if (!n->down_since)
        n->down_since = time(NULL);
    snprintf(n->last_error, sizeof n->last_error, "%s", why);
    n->backoff_ms = n->backoff_ms ? n->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (n->backoff_ms > BACKOFF_MAX_MS)
        n->backoff_ms = BACKOFF_MAX_MS;
    n->next_try_ms = mono_ms() + n->backoff_ms;
}

static int ensure_conn(struct node *n, bool force, struct buf *err)
{
    if (n->conn)
        return 0;
    if (!force && n->next_try_ms && mono_ms() < n->next_try_ms) {
        buf_printf(err, "%s (retrying in %lld ms)", n->last_error, n->next_try_ms - mono_ms());
        return -1;
    }
    struct buf e = BUF_INIT;
    n->conn = ssh_connect(n->name, &n->t, n->known_hosts, n->timeout_ms, &e);
    if (!n->conn) {
        mark_down(n, buf_str(&e));
        buf_puts(err, buf_str(&e));
        buf_free(&e);
        return -1;
    }
    buf_free(&e);
    n->down_since = 0;
    n->backoff_ms = 0;
    n->next_try_ms = 0;
    n->last_error[0] = '\0';
    return 0;
}

int node_run(struct node *n, const char *cmd, int timeout_ms, struct ssh_result *res,
             struct buf *err)
{
    if (n->local)
        return node_run_local(cmd, timeout_ms, NODE_MAX_OUTPUT, res, err);
    pthread_mutex_lock(&n->mu);
    bool had_session = n->conn != NULL;
    int rc = ensure_conn(n, false, err);
    if (rc == 0) {
        struct buf e = BUF_INIT;
        rc = ssh_exec(n->conn, cmd, NODE_MAX_OUTPUT, timeout_ms, res, &e);
        if (rc < 0) {
            ssh_close(n->conn);
            n->conn = NULL;
            ssh_result_free(res);
            /* A session that sat idle may have died with the peer's sshd;
             * one fresh attempt tells a stale session from a dead node. */
            if (had_session) {
                buf_reset(&e);
                rc = ensure_conn(n, true, &e);
                if (rc == 0)
                    rc = ssh_exec(n->conn, cmd, NODE_MAX_OUTPUT, timeout_ms, res, &e);
                if (rc < 0 && n->conn) {
                    ssh_close(n->conn);
                    n->conn = NULL;
                }
            }
            if (rc < 0) {
                mark_down(n, buf_str(&e));
                buf_puts(err, buf_str(&e));
            }
        }
        buf_free(&e);
    }
    pthread_mutex_unlock(&n->mu);
    return rc;
}

bool node_reachable(struct node *n, time_t *down_since, char *why, size_t whysz)
{
    pthread_mutex_lock(&n->mu);
    bool up = n->local || n->down_since == 0;
    if (down_since)
        *down_since = n->down_since;
    if (why && whysz)
        snprintf(why, whysz, "%s", n->last_error);
    pthread_mutex_unlock(&n->mu);
    return up;
}

void node_free(struct node *n)
{
    if (n->conn)
        ssh_close(n->conn);
    n->conn = NULL;
    pthread_mutex_destroy(&n->mu);
}

static void drain(int fd, struct buf *b, size_t max, bool *open)
{
    char tmp[16384];
    ssize_t r = read(fd, tmp, sizeof tmp);
    if (r > 0) {
        size_t room = b->len < max ? max - b->len : 0;
        buf_append(b, tmp, (size_t)r < room ? (size_t)r : room);
    } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        *open = false;
    }
}

int node_run_local(const char *cmd, int timeout_ms, size_t max_bytes, struct ssh_result *res,
                   struct buf *err)
{
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) < 0)
        goto fail;
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        goto fail;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        goto fail;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    bool oo = true, eo = true, timed_out = false;
    long long deadline = mono_ms() + timeout_ms;
    while (oo || eo) {
        struct pollfd p[2] = {{oo ? po[0] : -1, POLLIN, 0}, {eo ? pe[0] : -1, POLLIN, 0}};
        long long left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (poll(p, 2, (int)left) < 0 && errno != EINTR)
            break;
        if (oo && p[0].revents)
            drain(po[0], &res->out, max_bytes, &oo);
        if (eo && p[1].revents)
            drain(pe[0], &res->err, max_bytes, &eo);
    }
    close(po[0]);
    close(pe[0]);
    if (timed_out)
        kill(-pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        buf_printf(err, "local command timed out after %d ms", timeout_ms);
        return -1;
    }
    res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
fail:
    buf_printf(err, "cannot run a local command: %s", strerror(errno));
    return -1;
}
