/* node_engine: a remote node's engine API socket through its ssh session:
 * where the socket is (the setting, or found there once and kept on the
 * node, for the sampler and the rank verbs alike) and one exchange with it
 * (direct-streamlocal, sshio_unix), which a cancel fd may cut short. */
#include "node.h"

#include <stdio.h>
#include <string.h>

#include "engine_at.h"
#include "interrupt.h"
#include "mono.h"

/* how often a cancellable exchange looks at its cancel fd */
#define EXCHANGE_SLICE_MS 100

int node_unix_exchange(struct node *n, const char *sock, const char *req, size_t len, size_t max,
                       int timeout_ms, int cancel_fd, struct buf *out, struct buf *err)
{
    struct sshio *io = node_io(n);
    if (!io) {
        buf_printf(err, "%s: %s", n->name,
                   n->local ? "a local socket is asked directly (engine.c)" : "out of memory");
        return -1;
    }
    if (cancel_fd < 0)
        return sshio_unix(io, sock, req, len, max, timeout_ms, out, err);
    struct sshio_unix *u = sshio_unix_start(io, sock, req, len, max, timeout_ms, err);
    if (!u)
        return -1;
    long long until = mono_ms() + timeout_ms;
    int rc = 1;
    while (rc == 1 && !cancel_fd_set(cancel_fd)) {
        long long slice = mono_ms() + EXCHANGE_SLICE_MS;
        rc = sshio_unix_wait(io, u, slice < until ? slice : until);
        if (rc == 1 && mono_ms() >= until)
            break;
    }
    if (rc == 1 && cancel_fd_set(cancel_fd)) {
        /* abandoned: the I/O thread finishes and frees it; what the far
         * end was asked (a stop) goes on there */
        struct buf drop = BUF_INIT, why = BUF_INIT;
        sshio_unix_end(io, u, &drop, &why);
        buf_free(&drop);
        buf_free(&why);
        buf_printf(err, "%s: %s: interrupted", n->name, sock);
        return ENGINE_CANCELLED;
    }
    return sshio_unix_end(io, u, out, err);
}

int node_engine_exchange(void *ctx, const char *sock, const char *req, size_t len, size_t max,
                         long timeout_ms, int cancel_fd, struct buf *out, struct buf *err)
{
    int rc = node_unix_exchange(ctx, sock, req, len, max, timeout_ms < 0 ? 30000 : (int)timeout_ms,
                                cancel_fd, out, err);
    /* sshio's codes would read as the engine's (NOSUCH, NOT_RUNNING) to
     * engine_at's callers: a socket that could not be asked is no answer */
    return rc == SSHIO_UNIX_REFUSED || rc == SSHIO_UNIX_SILENT ? ENGINE_NO_ANSWER : rc;
}

/* The node's socket, as the engine_socket rules would find it there: the
 * first of $DOCKER_HOST / $CONTAINER_HOST (unix:// only) and the runtime's
 * default path that is a socket. Nothing printed: none. */
#define FIND_SH                                                                                    \
    "case $1 in docker) h=${DOCKER_HOST:-}; d=/var/run/docker.sock ;;\n"                           \
    "*) h=${CONTAINER_HOST:-}; if [ \"$(id -u)\" = 0 ]; then d=/run/podman/podman.sock;\n"         \
    "   else d=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/podman/podman.sock; fi ;; esac\n"            \
    "c=; case $h in unix://*) c=${h#unix://} ;; esac\n"                                            \
    "for p in \"$c\" \"$d\"; do [ -n \"$p\" ] && [ -S \"$p\" ] && { printf '%s\\n' \"$p\"; exit "  \
    "0; }; done\n"                                                                                 \
    "exit 0\n"

/* The remote text: one absolute path of printable bytes, or "" for none. */
static void found_path(const struct buf *o, char *path, size_t sz)
{
    const char *s = buf_str(o);
    size_t len = strcspn(s, "\n");
    bool ok = s[0] == '/' && len < sz;
    for (size_t i = 0; ok && i < len; i++)
        ok = (unsigned char)s[i] > 0x20 && s[i] != 0x7f;
    snprintf(path, sz, "%.*s", ok ? (int)len : 0, s);
}

/* node_engine_sock without asking the node: -1 while it is still to be
 * found there (or again: a search that found none is a minute old). */
static int sock_known(struct node *n, char *out, size_t sz)
{
    out[0] = '\0';
    if (n->local)
        return 0;
    pthread_mutex_lock(&n->mu);
    bool find = n->worker_sock_find;
    long long none_at = n->worker_sock_none_at;
    snprintf(out, sz, "%s", n->worker_sock);
    pthread_mutex_unlock(&n->mu);
    if (find && none_at && mono_ms() - none_at < NODE_SOCK_AGAIN_MS)
        return 0;
    return find ? -1 : out[0] ? 1 : 0;
}

int node_engine_sock(struct node *n, const char *runtime, const atomic_int *cancel, char *out,
                     size_t sz)
{
    int known = sock_known(n, out, sz);
    if (known >= 0 || n->local)
        return known;
    /* two threads asking at once both ask: harmless, the answer is the same */
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, FIND_SH);
    shcmd_arg(&cmd, runtime);
    struct ssh_result res;
    struct buf err = BUF_INIT;
    int rc = cmd.failed ? -1 : node_run_cancel(n, &cmd, n->timeout_ms + 5000, cancel, &res, &err);
    shcmd_free(&cmd);
    buf_free(&err);
    if (rc < 0 || res.exit_status != 0) {
        if (rc == 0)
            ssh_result_free(&res);
        return -1;
    }
    char path[sizeof n->worker_sock];
    found_path(&res.out, path, sizeof path);
    ssh_result_free(&res);
    pthread_mutex_lock(&n->mu);
    snprintf(n->worker_sock, sizeof n->worker_sock, "%s", path);
    n->worker_sock_find = !path[0]; /* none: looked for again later */
    n->worker_sock_none_at = path[0] ? 0 : mono_ms();
    pthread_mutex_unlock(&n->mu);
    snprintf(out, sz, "%s", path);
    return path[0] ? 1 : 0;
}
