/* ssh_sftp: a file put on a node over sftp, step by step without blocking
 * (ssh_put_*, ssh.h): open, mode, write, close, shut down. */
#include "ssh_conn.h"

#include <stdlib.h>
#include <string.h>

enum put_state { PUT_INIT, PUT_OPEN, PUT_STAT, PUT_WRITE, PUT_CLOSE, PUT_SHUTDOWN, PUT_DONE };

struct ssh_put {
    enum put_state st;
    LIBSSH2_SFTP *sftp;
    LIBSSH2_SFTP_HANDLE *h;
    char *path;
    char *data;
    size_t len, off;
    int mode;
    unsigned long sftp_err; /* remembered across close and shutdown */
};

struct ssh_put *ssh_put_new(const char *path, const char *data, size_t len, int mode)
{
    struct ssh_put *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->path = strdup(path);
    p->data = malloc(len ? len : 1);
    if (!p->path || !p->data) {
        ssh_put_free(NULL, p);
        return NULL;
    }
    memcpy(p->data, data, len);
    p->len = len;
    p->mode = mode;
    return p;
}

bool ssh_put_opening(const struct ssh_put *p)
{
    return p->st == PUT_INIT;
}

void ssh_put_free(struct ssh_conn *c, struct ssh_put *p)
{
    if (!p)
        return;
    /* an upload given up half-way (it timed out) is closed and shut down
     * on the node by later passes; a session that died takes its sftp
     * channel with it (c NULL); a finished one was shut down by the steps */
    if (c && (p->h || p->sftp))
        ssh_bury(c, (struct grave){.sftp = p->sftp, .h = p->h});
    free(p->path);
    if (p->data)
        memset(p->data, 0, p->len); /* env files may hold a secret */
    free(p->data);
    free(p);
}

static const char *sftp_error_name(unsigned long e)
{
    switch (e) {
    case LIBSSH2_FX_NO_SUCH_FILE:
    case LIBSSH2_FX_NO_SUCH_PATH:
        return "no such directory";
    case LIBSSH2_FX_PERMISSION_DENIED:
        return "permission denied";
    case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM:
    case LIBSSH2_FX_QUOTA_EXCEEDED:
        return "no space left";
    case LIBSSH2_FX_WRITE_PROTECT:
        return "read-only file system";
    default:
        return "refused";
    }
}

int ssh_put_step(struct ssh_conn *c, struct ssh_put *p, bool may_open, struct buf *why)
{
    int rc;
    for (;;) {
        switch (p->st) {
        case PUT_INIT:
            if (!may_open)
                return 0;
            p->sftp = libssh2_sftp_init(c->s);
            if (!p->sftp)
                return ssh_again(c) ? 0 : (buf_printf(why, "%s: sftp is not available on %s: %s",
                                                  c->name, c->host, ssh_last_error(c->s)),
                                       -1);
            p->st = PUT_OPEN;
            break;
        case PUT_OPEN:
            p->h = libssh2_sftp_open_ex(p->sftp, p->path, (unsigned)strlen(p->path),
                                        LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC,
                                        p->mode, LIBSSH2_SFTP_OPENFILE);
            if (!p->h) {
                if (ssh_again(c))
                    return 0;
                p->sftp_err = libssh2_sftp_last_error(p->sftp);
                p->st = PUT_SHUTDOWN;
                break;
            }
            p->st = PUT_STAT;
            break;
        case PUT_STAT: {
            /* an existing file keeps its mode on open: set it */
            LIBSSH2_SFTP_ATTRIBUTES a = {0};
            a.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
            a.permissions = (unsigned long)p->mode;
            rc = libssh2_sftp_fsetstat(p->h, &a);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return 0;
            if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL) {
                p->sftp_err = libssh2_sftp_last_error(p->sftp);
                p->st = PUT_CLOSE;
                break;
            }
            if (rc)
                goto fail;
            p->st = PUT_WRITE;
            break;
        }
        case PUT_WRITE:
            while (p->off < p->len) {
                ssize_t w = libssh2_sftp_write(p->h, p->data + p->off, p->len - p->off);
                if (w == LIBSSH2_ERROR_EAGAIN)
                    return 0;
                if (w == LIBSSH2_ERROR_SFTP_PROTOCOL) {
                    p->sftp_err = libssh2_sftp_last_error(p->sftp);
                    break;
                }
                if (w < 0)
                    goto fail;
                p->off += (size_t)w;
            }
            p->st = PUT_CLOSE;
            break;
        case PUT_CLOSE:
            rc = libssh2_sftp_close_handle(p->h);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return 0;
            p->h = NULL; /* freed by libssh2 whatever the answer */
            /* the server's close is where a write-back error shows (sftp-
             * server answers close(2)'s errno: EIO, ENOSPC, EDQUOT on NFS) */
            if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && !p->sftp_err) {
                unsigned long e = libssh2_sftp_last_error(p->sftp);
                p->sftp_err = e ? e : LIBSSH2_FX_FAILURE;
            } else if (rc && rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
                goto fail;
            p->st = PUT_SHUTDOWN;
            break;
        case PUT_SHUTDOWN:
            rc = libssh2_sftp_shutdown(p->sftp);
            if (rc == LIBSSH2_ERROR_EAGAIN)
                return 0;
            p->sftp = NULL;
            p->st = PUT_DONE;
            if (p->sftp_err) {
                buf_printf(why, "%s: cannot write %s: %s (sftp status %lu)", c->name, p->path,
                           sftp_error_name(p->sftp_err), p->sftp_err);
                return -2;
            }
            return 1;
        case PUT_DONE:
            return p->sftp_err ? -2 : 1;
        }
    }
fail:
    buf_printf(why, "%s: ssh session to %s failed: %s", c->name, c->host, ssh_last_error(c->s));
    return -1;
}
