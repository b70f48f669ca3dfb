/* http1_unix: the transport for a local AF_UNIX socket. Non-blocking, every
 * wait a poll() bounded by the deadline: a hung engine (one that accepts and
 * never answers, as a wedged dockerd does) costs the caller its deadline and
 * no more. */
#include "http1.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mono.h"

/* ms left until deadline (-1: none), 0 once passed. */
static int left_ms(long long deadline)
{
    if (deadline < 0)
        return -1;
    long long now = mono_ms();
    if (now >= deadline)
        return 0;
    return deadline - now > 60000 ? 60000 : (int)(deadline - now);
}

static int unix_connect(int fd, const char *sock, long long deadline, long timeout_ms,
                        struct buf *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof a.sun_path) {
        buf_printf(err, "%s: the socket's path is longer than %zu bytes", sock,
                   sizeof a.sun_path - 1);
        return -1;
    }
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    for (;;) {
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
            return 0;
        int e = errno;
        if (e == EINTR)
            continue;
        if (e == EAGAIN) {
            /* the listener's backlog is full: a busy or hung engine */
            if (left_ms(deadline) == 0) {
                buf_printf(err, "%s: no answer: timed out after %ld ms connecting (backlog full)",
                           sock, timeout_ms);
                return -1;
            }
            poll(NULL, 0, 10);
            continue;
        }
        if (e == ENOENT)
            buf_printf(err, "%s: no such socket: is the engine's API service running? (docker: "
                            "systemctl start docker; podman: systemctl enable --now podman.socket)",
                       sock);
        else if (e == EACCES || e == EPERM)
            buf_printf(err, "%s: permission denied: add the user to the docker group, or use the "
                            "user's own podman socket (systemctl --user enable --now podman.socket)",
                       sock);
        else if (e == ECONNREFUSED)
            buf_printf(err, "%s: connection refused: nothing listens there (a stale socket); "
                            "restart the engine's API service",
                       sock);
        else
            buf_printf(err, "%s: cannot connect: %s", sock, strerror(e));
        return -1;
    }
}

static int wait_fd(int fd, short ev, int cancel_fd, long long deadline, const char *sock,
                   long timeout_ms, struct buf *err)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = fd, .events = ev}, {.fd = cancel_fd, .events = POLLIN}};
        int rc = poll(p, cancel_fd >= 0 ? 2 : 1, left_ms(deadline));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0) {
            buf_printf(err, "%s: poll: %s", sock, strerror(errno));
            return -1;
        }
        /* a wait is cut into pieces of at most a minute (left_ms): only
         * the deadline itself is a timeout (a graceful stop waits minutes) */
        if (rc == 0 && deadline >= 0 && mono_ms() < deadline)
            continue;
        if (rc == 0) {
            buf_printf(err, "%s: no answer: timed out after %ld ms", sock, timeout_ms);
            return -1;
        }
        if (cancel_fd >= 0 && p[1].revents)
            return 1;
        return 0;
    }
}

static int exchange(int fd, const char *sock, const char *req, size_t req_len, long timeout_ms,
                    int cancel_fd, struct http1_resp *r, struct buf *err)
{
    long long deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
    if (unix_connect(fd, sock, deadline, timeout_ms, err) < 0)
        return -1;
    for (size_t off = 0; off < req_len;) {
        ssize_t n = send(fd, req + off, req_len - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN) {
            buf_printf(err, "%s: sending the request: %s", sock, strerror(errno));
            return -1;
        }
        int w = wait_fd(fd, POLLOUT, cancel_fd, deadline, sock, timeout_ms, err);
        if (w)
            return w > 0 ? 0 : -1;
    }
    char chunk[16384];
    while (!r->complete) {
        int w = wait_fd(fd, POLLIN, cancel_fd, deadline, sock, timeout_ms, err);
        if (w)
            return w > 0 ? 0 : -1;
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            buf_printf(err, "%s: reading the answer: %s", sock, strerror(errno));
            return -1;
        }
        int rc = n ? http1_feed(r, chunk, (size_t)n) : http1_eof(r);
        if (rc == 1)
            return 0;
        if (rc < 0) {
            buf_printf(err, "%s: a malformed answer: %s", sock, r->error);
            return -1;
        }
        if (!n)
            break;
    }
    return 0;
}

int http1_unix(const char *sock, const char *req, size_t req_len, long timeout_ms, int cancel_fd,
               struct http1_resp *r, struct buf *err)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        buf_printf(err, "%s: socket: %s", sock, strerror(errno));
        return -1;
    }
    int rc = exchange(fd, sock, req, req_len, timeout_ms, cancel_fd, r, err);
    close(fd);
    return rc;
}
