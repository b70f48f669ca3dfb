/* sshjump: see sshjump.h. */
#include "sshjump.h"

#include <errno.h>
#include <fcntl.h>
#include <libssh2.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ssh.h"

#define PUMP_BUF 32768

struct ssh_jump {
    struct ssh_conn *conn; /* the jump host's session: the pump thread's alone */
    LIBSSH2_CHANNEL *ch;
    int sp[2];   /* [0] the target's session, [1] the pump's */
    int stop[2]; /* a byte here ends the pump */
    pthread_t th;
    bool running;
};

/* Moves what is waiting in one direction; true when a byte moved. -1 in
 * *dead when that side is gone. */
static bool chan_to_socket(struct ssh_jump *j, char *b, size_t *len, size_t *off, bool *dead)
{
    bool moved = false;
    if (*len == *off) {
        *len = *off = 0;
        ssize_t n = libssh2_channel_read(j->ch, b, PUMP_BUF);
        if (n > 0) {
            *len = (size_t)n;
            moved = true;
        } else if ((n == 0 && libssh2_channel_eof(j->ch)) ||
                   (n < 0 && n != LIBSSH2_ERROR_EAGAIN)) {
            *dead = true; /* the target closed, or the jump session broke */
            return moved;
        }
    }
    while (*off < *len) {
        ssize_t w = write(j->sp[1], b + *off, *len - *off);
        if (w < 0) {
            if (errno != EAGAIN && errno != EINTR)
                *dead = true;
            break;
        }
        *off += (size_t)w;
        moved = true;
    }
    return moved;
}

static bool socket_to_chan(struct ssh_jump *j, char *b, size_t *len, size_t *off, bool *dead)
{
    bool moved = false;
    if (*len == *off) {
        *len = *off = 0;
        ssize_t n = read(j->sp[1], b, PUMP_BUF);
        if (n > 0) {
            *len = (size_t)n;
            moved = true;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            *dead = true; /* our session closed its end */
            return moved;
        }
    }
    while (*off < *len) {
        ssize_t w = libssh2_channel_write(j->ch, b + *off, *len - *off);
        if (w == LIBSSH2_ERROR_EAGAIN)
            break;
        if (w < 0) {
            *dead = true;
            break;
        }
        *off += (size_t)w;
        moved = true;
    }
    return moved;
}

static void *pump_main(void *arg)
{
    struct ssh_jump *j = arg;
    char *down = malloc(PUMP_BUF), *up = malloc(PUMP_BUF);
    size_t dl = 0, doff = 0, ul = 0, uoff = 0;
    bool dead = !down || !up;
    while (!dead) {
        bool moved = chan_to_socket(j, down, &dl, &doff, &dead);
        if (!dead)
            moved |= socket_to_chan(j, up, &ul, &uoff, &dead);
        if (dead || moved)
            continue;
        if (ssh_keepalive(j->conn) < 0)
            break;
        struct pollfd p[3] = {{ssh_fd(j->conn), ssh_poll_events(j->conn), 0},
                              {j->sp[1], (short)(ul == uoff ? POLLIN : 0), 0},
                              {j->stop[0], POLLIN, 0}};
        if (doff < dl)
            p[1].events |= POLLOUT;
        if (poll(p, 3, 1000) < 0 && errno != EINTR)
            break;
        if (p[2].revents)
            break;
    }
    free(down);
    free(up);
    /* the target's session sees its socket end */
    shutdown(j->sp[1], SHUT_RDWR);
    return NULL;
}

struct ssh_jump *sshjump_open(const char *name, const struct ssh_target *t,
                              const char *known_hosts, int timeout_ms, struct buf *err)
{
    struct ssh_target jt;
    struct buf why = BUF_INIT;
    if (sshconf_resolve(t->config[0] ? t->config : NULL, t->jump, &jt, &why) < 0) {
        buf_printf(err, "%s: ProxyJump %s: %s", name, t->jump, buf_str(&why));
        buf_free(&why);
        return NULL;
    }
    if (jt.jump[0]) {
        buf_printf(err, "%s: ProxyJump %s has a ProxyJump of its own (%s): dsv41-top goes "
                        "through one hop",
                   name, t->jump, jt.jump);
        return NULL;
    }
    struct ssh_jump *j = calloc(1, sizeof *j);
    if (!j) {
        buf_printf(err, "%s: out of memory", name);
        return NULL;
    }
    j->sp[0] = j->sp[1] = j->stop[0] = j->stop[1] = -1;
    char jname[400];
    snprintf(jname, sizeof jname, "%s (jump host %s)", name, t->jump);
    j->conn = ssh_connect(jname, &jt, known_hosts, timeout_ms, err);
    if (!j->conn)
        goto fail;
    j->ch = ssh_direct_tcpip(j->conn, t->host, t->port, timeout_ms, &why);
    if (!j->ch) {
        buf_printf(err, "%s: the jump host %s cannot reach %s port %d: %s (is AllowTcpForwarding "
                        "on there, and the node up?)",
                   name, t->jump, t->host, t->port, buf_str(&why));
        goto fail;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, j->sp) < 0 ||
        pipe2(j->stop, O_CLOEXEC) < 0) {
        buf_printf(err, "%s: %s", name, strerror(errno));
        goto fail;
    }
    if (pthread_create(&j->th, NULL, pump_main, j) != 0) {
        buf_printf(err, "%s: cannot start the jump host's pump", name);
        goto fail;
    }
    j->running = true;
    buf_free(&why);
    return j;
fail:
    buf_free(&why);
    sshjump_close(j);
    return NULL;
}

int sshjump_fd(const struct ssh_jump *j)
{
    return j->sp[0];
}

void sshjump_close(struct ssh_jump *j)
{
    if (!j)
        return;
    if (j->running) {
        char c = 1;
        if (write(j->stop[1], &c, 1) < 0) {
            /* the pump also ends when its socket does */
        }
        pthread_join(j->th, NULL);
    }
    if (j->ch)
        libssh2_channel_free(j->ch);
    ssh_close(j->conn);
    for (int i = 0; i < 2; i++) {
        if (j->sp[i] >= 0)
            close(j->sp[i]);
        if (j->stop[i] >= 0)
            close(j->stop[i]);
    }
    free(j);
}
