/* ssh_unix: a unix socket on the node reached through the session
 * (direct-streamlocal@openssh.com; ssh_unix_*, ssh.h). */
#include "ssh_conn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void put_u32(struct buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    buf_append(b, (const char *)x, 4);
}

int ssh_streamlocal_msg(struct buf *out, const char *path)
{
    size_t n = strlen(path);
    if (!n || n > 4096)
        return -1;
    size_t before = out->len;
    put_u32(out, (uint32_t)n);
    buf_append(out, path, n);
    put_u32(out, 0); /* reserved string: "" */
    put_u32(out, 0); /* reserved uint32 */
    return out->len == before + n + 12 ? 0 : -1;
}

#define STREAMLOCAL "direct-streamlocal@openssh.com"

enum unix_state { UX_OPEN, UX_WRITE, UX_EOF, UX_READ, UX_CLOSE, UX_DONE };

struct ssh_unix {
    enum unix_state st;
    LIBSSH2_CHANNEL *ch;
    struct buf msg; /* the open message */
    struct buf req;
    size_t off;
    bool started; /* an open was asked of libssh2: it must be seen through */
    bool stream;  /* no EOF after the request (see ssh_unix_new_stream) */
    bool full;    /* a stream's last step stopped reading at max: more is waiting */
};

struct ssh_unix *ssh_unix_new(const char *sock, const char *req, size_t len)
{
    struct ssh_unix *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    if (ssh_streamlocal_msg(&u->msg, sock) < 0 || buf_append(&u->req, req, len) < 0) {
        ssh_unix_free(NULL, u);
        return NULL;
    }
    return u;
}

struct ssh_unix *ssh_unix_new_stream(const char *sock, const char *req, size_t len)
{
    struct ssh_unix *u = ssh_unix_new(sock, req, len);
    if (u)
        u->stream = true;
    return u;
}

bool ssh_unix_full(const struct ssh_unix *u)
{
    return u && u->full;
}

bool ssh_unix_opening(const struct ssh_unix *u)
{
    return u->st == UX_OPEN;
}

bool ssh_unix_open_pending(const struct ssh_unix *u)
{
    return u->st == UX_OPEN && u->started;
}

int ssh_unix_step(struct ssh_conn *c, struct ssh_unix *u, bool may_open, struct buf *out,
                  size_t max, struct buf *why)
{
    int rc;
    for (;;) {
        switch (u->st) {
        case UX_OPEN:
            if (!may_open)
                return 0;
            u->started = true;
            u->ch = libssh2_channel_open_ex(c->s, STREAMLOCAL, sizeof STREAMLOCAL - 1,
                                            LIBSSH2_CHANNEL_WINDOW_DEFAULT,
                                            LIBSSH2_CHANNEL_PACKET_DEFAULT, u->msg.data,
                                            (unsigned)u->msg.len);
            if (!u->ch) {
                int e = libssh2_session_last_errno(c->s);
                if (e == LIBSSH2_ERROR_EAGAIN)
                    return 0;
                u->started = false;
                u->st = UX_DONE;
                if (e == LIBSSH2_ERROR_CHANNEL_FAILURE) {
                    /* the node's sshd said no: a missing socket and a
                     * forbidden forwarding read alike ("connect failed") */
                    buf_printf(why, "%s: the node's sshd did not open its socket: %s", c->name,
                               ssh_last_error(c->s));
                    return -2;
                }
                goto fail;
            }
            u->started = false;
            u->st = UX_WRITE;
            break;
        case UX_WRITE:
            while (u->off < u->req.len) {
                ssize_t w = libssh2_channel_write(u->ch, u->req.data + u->off,
                                                  u->req.len - u->off);
                if (w == LIBSSH2_ERROR_EAGAIN)
                    return 0;
                if (w < 0)
                    goto fail;
                u->off += (size_t)w;
            }
            /* a stream's server would read the EOF as the client gone (Go's
             * net/http cancels the request: a followed log would end) */
            u->st = u->stream ? UX_READ : UX_EOF;
            break;
        case UX_EOF:
            rc = libssh2_channel_send_eof(u->ch);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return 0;
            if (rc)
                goto fail;
            u->st = UX_READ;
            break;
        case UX_READ: {
            bool full = false;
            /* a stream's max is what one step reads (the rest waits in the
             * channel's window); an answer's is its size, and one byte over
             * it tells "too large" from "exactly max" */
            int a = ssh_read_stream(u->ch, 0, out, u->stream ? max : max + 1, &full);
            u->full = u->stream && full;
            struct buf junk = BUF_INIT;
            int b = ssh_read_stream(u->ch, SSH_EXTENDED_DATA_STDERR, &junk, 4096, NULL);
            buf_free(&junk);
            if (a < 0 || b < 0)
                goto fail;
            if (u->full)
                return 0;
            if (!u->stream && out->len > max) {
                u->st = UX_DONE;
                buf_printf(why, "%s: the answer on the socket is larger than %zu bytes", c->name,
                           max);
                return -3;
            }
            if (!libssh2_channel_eof(u->ch))
                return 0;
            if (ssh_read_stream(u->ch, 0, out, max + 1, &full) < 0)
                goto fail;
            u->st = UX_CLOSE;
            break;
        }
        case UX_CLOSE:
            rc = libssh2_channel_close(u->ch);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return 0;
            u->st = UX_DONE; /* the answer is in whatever the close says */
            return 1;
        case UX_DONE:
            return 1;
        }
    }
fail:
    u->st = UX_DONE;
    buf_printf(why, "%s: ssh session to %s failed: %s", c->name, c->host, ssh_last_error(c->s));
    return -1;
}

void ssh_unix_free(struct ssh_conn *c, struct ssh_unix *u)
{
    if (!u)
        return;
    if (u->ch && libssh2_channel_free(u->ch) == LIBSSH2_ERROR_EAGAIN && c)
        ssh_bury(c, (struct grave){.ch = u->ch});
    buf_free(&u->msg);
    buf_free(&u->req);
    free(u);
}
