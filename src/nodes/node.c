#include "node.h"

#include "engine_at.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "dirs.h"
#include "text.h"
#include "mono.h"
#include "interrupt.h"

#define NODE_MAX_OUTPUT (8u << 20)

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

struct sshio *node_io(struct node *n)
{
    if (n->local)
        return NULL;
    pthread_mutex_lock(&n->mu);
    if (!n->io)
        n->io = sshio_start(n->name, &n->t, n->known_hosts, n->timeout_ms);
    struct sshio *io = n->io;
    pthread_mutex_unlock(&n->mu);
    return io;
}

int node_run(struct node *n, const struct shcmd *cmd, int timeout_ms, struct ssh_result *res,
             struct buf *err)
{
    return node_run_cancel(n, cmd, timeout_ms, NULL, res, err);
}

int node_run_patient(struct node *n, const struct shcmd *cmd, int timeout_ms, int patience_ms,
                     struct ssh_result *res, struct buf *err)
{
    long long give_up = mono_ms() + patience_ms;
    for (;;) {
        buf_reset(err);
        int rc = node_run(n, cmd, timeout_ms, res, err);
        if (rc == 0 || n->local || mono_ms() >= give_up || interrupt_pending())
            return rc;
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
}

int node_run_cancel(struct node *n, const struct shcmd *cmd, int timeout_ms,
                    const atomic_int *cancel, struct ssh_result *res, struct buf *err)
{
    if (n->local)
        return node_run_local_cancel(cmd, timeout_ms, NODE_MAX_OUTPUT, cancel, res, err);
    memset(res, 0, sizeof *res);
    res->exit_status = -1;
    struct sshio *io = node_io(n);
    if (!io) {
        buf_printf(err, "%s: cannot start its I/O thread", n->name);
        return -1;
    }
    struct buf line = BUF_INIT;
    if (shcmd_line(cmd, &line) < 0) {
        buf_printf(err, "%s: out of memory building a command", n->name);
        return -1;
    }
    bool had_session = sshio_connected(io);
    int rc = sshio_run(io, buf_str(&line), NODE_MAX_OUTPUT, timeout_ms, false, cancel, res, err);
    /* An idle session may have died with the node's sshd: one fresh attempt
     * tells a stale session from a dead node. */
    if (rc < 0 && had_session && !sshio_connected(io) && !(cancel && atomic_load(cancel))) {
        buf_reset(err);
        rc = sshio_run(io, buf_str(&line), NODE_MAX_OUTPUT, timeout_ms, true, cancel, res, err);
    }
    buf_free(&line);
    /* a command that closed its output and did not end (ssh.c's grace):
     * its result is not known, which no caller may read as any answer */
    if (rc == 0 && res->exit_status < 0) {
        buf_printf(err, "%s: a command closed its output and had not ended %d s later: no exit "
                        "status (a process it started keeps running?)",
                   n->name, SSH_CLOSE_GRACE_MS / 1000);
        ssh_result_free(res);
        memset(res, 0, sizeof *res);
        res->exit_status = -1;
        rc = -1;
    }
    return rc;
}

static int put_local(struct node *n, const char *path, const char *data, size_t len, int mode,
                     struct buf *err)
{
    struct buf tmp = BUF_INIT;
    buf_printf(&tmp, "%s.dsv41-tmp-%ld", path, (long)getpid());
    int fd = open(buf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    bool ok = fd >= 0 && fchmod(fd, (mode_t)mode) == 0;
    for (size_t off = 0; ok && off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    ok = ok && fsync(fd) == 0;
    int e = errno;
    if (fd >= 0)
        close(fd);
    /* rename: a crash leaves the old file or the new one, never half */
    if (ok && rename(buf_str(&tmp), path) < 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlink(buf_str(&tmp));
        buf_printf(err, "%s: cannot write %s: %s", n->name, path, strerror(e));
    }
    buf_free(&tmp);
    return ok ? 0 : -1;
}

int node_put(struct node *n, const char *path, const char *data, size_t len, int mode,
             struct buf *err)
{
    if (n->local)
        return put_local(n, path, data, len, mode, err);
    struct sshio *io = node_io(n);
    if (!io) {
        buf_printf(err, "%s: cannot start its I/O thread", n->name);
        return -1;
    }
    bool had_session = sshio_connected(io);
    int rc = sshio_put(io, path, data, len, mode, 30000, false, err);
    if (rc < 0 && had_session && !sshio_connected(io)) {
        buf_reset(err);
        rc = sshio_put(io, path, data, len, mode, 30000, true, err);
    }
    return rc;
}

bool node_reachable(struct node *n, time_t *down_since, char *why, size_t whysz)
{
    if (down_since)
        *down_since = 0;
    if (why && whysz)
        why[0] = '\0';
    if (n->local)
        return true;
    pthread_mutex_lock(&n->mu);
    struct sshio *io = n->io;
    pthread_mutex_unlock(&n->mu);
    return io ? sshio_state(io, down_since, why, whysz) : true;
}

int node_home(struct node *n, char *out, size_t sz, struct buf *err)
{
    pthread_mutex_lock(&n->mu);
    snprintf(out, sz, "%s", n->home);
    pthread_mutex_unlock(&n->mu);
    if (out[0])
        return 0;
    /* two threads asking at once both ask: harmless, the answer is the same */
    struct shcmd cmd = SHCMD_INIT;
    struct ssh_result res;
    struct buf why = BUF_INIT;
    shcmd_script(&cmd, "printf '%s' \"$HOME\"");
    int rc = node_run(n, &cmd, 30000, &res, &why);
    shcmd_free(&cmd);
    if (rc < 0) {
        buf_printf(err, "%s: cannot ask for the home directory of its account (for the \"~/\" "
                        "in its paths): %s",
                   n->name, buf_str(&why));
        buf_free(&why);
        return -1;
    }
    buf_free(&why);
    char home[sizeof n->home];
    text_clean(home, sizeof home, buf_str(&res.out), res.out.len);
    ssh_result_free(&res);
    if (home[0] != '/' || strlen(home) >= sz) {
        buf_printf(err,
                   "%s: its account has no usable home directory (HOME='%s'): set the worker's "
                   "paths (WORKER_MODEL_DIR, WORKER_STATE_DIR) to absolute paths",
                   n->name, home);
        return -1;
    }
    pthread_mutex_lock(&n->mu);
    snprintf(n->home, sizeof n->home, "%s", home);
    pthread_mutex_unlock(&n->mu);
    snprintf(out, sz, "%s", home);
    return 0;
}

int node_expand_path(struct node *n, const char *path, char *out, size_t sz, struct buf *err)
{
    char home[sizeof n->home] = "";
    if (dirs_is_home_relative(path) && node_home(n, home, sizeof home, err) < 0)
        return -1;
    if (dirs_expand_home(home, path, out, sz) < 0) {
        buf_printf(err, "%s: the path %s is too long once its ~ is %s", n->name, path, home);
        return -1;
    }
    return 0;
}

void node_free(struct node *n)
{
    sshio_stop(n->io);
    n->io = NULL;
    pthread_mutex_destroy(&n->mu);
}

/* cmd started as a child (child.h: its own process group, so a timeout
 * kills the whole pipeline): /bin/sh on its script, or the program itself
 * when the script would only exec it. 0, or -1 with errno. */
static int spawn_cmd(const struct shcmd *cmd, int out_fd, int err_fd, pid_t *pid)
{
    if (shcmd_plain_exec(cmd)) {
        int rc = child_spawn(cmd->args.v[0], true, cmd->args.v, out_fd, err_fd, pid);
        errno = rc;
        return rc ? -1 : 0;
    }
    struct strv argv = STRV_INIT;
    int rc = shcmd_argv(cmd, &argv) < 0 ? ENOMEM
                                         : child_spawn(argv.v[0], false, argv.v, out_fd, err_fd, pid);
    strv_free(&argv);
    errno = rc;
    return rc ? -1 : 0;
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

int node_run_local(const struct shcmd *cmd, int timeout_ms, size_t max_bytes,
                   struct ssh_result *res, struct buf *err)
{
    return node_run_local_cancel(cmd, timeout_ms, max_bytes, NULL, res, err);
}

int node_run_local_cancel(const struct shcmd *cmd, int timeout_ms, size_t max_bytes,
                          const atomic_int *cancel, struct ssh_result *res, struct buf *err)
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
    pid_t pid;
    if (spawn_cmd(cmd, po[1], pe[1], &pid) < 0) {
        int e = errno;
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        if (e == ENOENT && shcmd_plain_exec(cmd)) {
            /* as sh says it: the command ran, and was not found */
            buf_printf(&res->err, "%s: not found\n", cmd->args.v[0]);
            res->exit_status = 127;
            return 0;
        }
        errno = e;
        goto fail;
    }
    close(po[1]);
    close(pe[1]);
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    bool oo = true, eo = true, timed_out = false, cancelled = false;
    long long deadline = mono_ms() + timeout_ms;
    while (oo || eo) {
        struct pollfd p[2] = {{oo ? po[0] : -1, POLLIN, 0}, {eo ? pe[0] : -1, POLLIN, 0}};
        long long left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (cancel && atomic_load(cancel)) {
            cancelled = true;
            break;
        }
        if (cancel && left > 200) /* a signal may land just before the poll */
            left = 200;
        if (poll(p, 2, (int)left) < 0 && errno != EINTR)
            break;
        if (oo && p[0].revents)
            drain(po[0], &res->out, max_bytes, &oo);
        if (eo && p[1].revents)
            drain(pe[0], &res->err, max_bytes, &eo);
    }
    close(po[0]);
    close(pe[0]);
    if (timed_out || cancelled)
        kill(-pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out || cancelled) {
        if (cancelled)
            buf_puts(err, "interrupted");
        else
            buf_printf(err, "local command timed out after %d ms", timeout_ms);
        ssh_result_free(res);
        return -1;
    }
    res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
fail:
    buf_printf(err, "cannot run a local command: %s", strerror(errno));
    return -1;
}

struct node_stream {
    struct sshio_stream *remote;
    /* local */
    pthread_t th;
    pid_t pid;
    int out_fd;
    int stop[2];
    sshio_line_fn on_line;
    sshio_event_fn on_event;
    void *ctx;
    struct buf out;
};

static void *local_stream_main(void *arg)
{
    struct node_stream *s = arg;
    if (s->on_event)
        s->on_event(s->ctx, true);
    for (;;) {
        struct pollfd p[2] = {{s->out_fd, POLLIN, 0}, {s->stop[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        char tmp[16384];
        ssize_t r = read(s->out_fd, tmp, sizeof tmp);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (s->out.len) /* the last line had no newline */
                s->on_line(s->ctx, s->out.data, s->out.len);
            buf_reset(&s->out);
            break;
        }
        buf_append(&s->out, tmp, (size_t)r);
        buf_drain_lines(&s->out, 1u << 20, s->on_line, s->ctx);
    }
    if (s->on_event)
        s->on_event(s->ctx, false);
    return NULL;
}

struct node_stream *node_stream_open(struct node *n, const struct shcmd *cmd,
                                     sshio_line_fn on_line, sshio_event_fn on_event, void *ctx)
{
    struct node_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->on_line = on_line;
    s->on_event = on_event;
    s->ctx = ctx;
    if (!n->local) {
        struct sshio *io = node_io(n);
        struct buf line = BUF_INIT;
        s->remote = io && shcmd_line(cmd, &line) == 0
                        ? sshio_stream_open(io, buf_str(&line), false, on_line, on_event, ctx)
                        : NULL;
        buf_free(&line);
        if (!s->remote) {
            free(s);
            return NULL;
        }
        return s;
    }
    int po[2];
    if (pipe2(po, O_CLOEXEC) < 0) {
        free(s);
        return NULL;
    }
    if (pipe2(s->stop, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        free(s);
        return NULL;
    }
    if (spawn_cmd(cmd, po[1], po[1], &s->pid) < 0)
        s->pid = -1;
    close(po[1]);
    s->out_fd = po[0];
    if (s->pid < 0 || pthread_create(&s->th, NULL, local_stream_main, s) != 0) {
        if (s->pid > 0) {
            kill(-s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
        }
        close(po[0]);
        close(s->stop[0]);
        close(s->stop[1]);
        free(s);
        return NULL;
    }
    return s;
}

void node_stream_close(struct node *n, struct node_stream *s)
{
    if (!s)
        return;
    if (s->remote) {
        sshio_stream_close(node_io(n), s->remote);
    } else {
        char c = 1;
        if (write(s->stop[1], &c, 1) < 0) {
            /* the thread also stops when the child's output ends */
        }
        kill(-s->pid, SIGTERM);
        pthread_join(s->th, NULL);
        kill(-s->pid, SIGKILL);
        while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(s->out_fd);
        close(s->stop[0]);
        close(s->stop[1]);
        buf_free(&s->out);
    }
    free(s);
}
