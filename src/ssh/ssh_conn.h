/* ssh_conn: what ssh.c, ssh_sftp.c and ssh_unix.c share inside src/ssh -
 * the session's struct and the few steps all three take. Not for other
 * folders: they see struct ssh_conn only through ssh.h. */
#ifndef DSV41_SSH_CONN_H
#define DSV41_SSH_CONN_H

#include <libssh2.h>
#include <libssh2_sftp.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "ssh.h"

/* What could not be freed at once (non-blocking libssh2 said EAGAIN): freed
 * on later passes (ssh_keepalive), so a channel or an sftp session is never
 * left open on the node, nor leaked here. */
#define GRAVE_MAX 16
struct grave {
    LIBSSH2_CHANNEL *ch;
    LIBSSH2_SFTP *sftp;
    LIBSSH2_SFTP_HANDLE *h;
};

struct ssh_conn {
    long long last_rx;
    unsigned long long rx_bytes; /* every byte read from the node, for ssh_rx_bytes */
    struct grave grave[GRAVE_MAX];
    int ngrave;
    int fd;
    LIBSSH2_SESSION *s;
    struct ssh_jump *jump; /* the hop the session runs through (it owns fd), or NULL */
    char name[400];
    char host[256];
};

/* libssh2's last error of the session, as words. */
const char *ssh_last_error(LIBSSH2_SESSION *s);
/* Keeps what could not be freed yet (EAGAIN) for later passes. */
void ssh_bury(struct ssh_conn *c, struct grave g);
/* The session's last call would block. */
bool ssh_again(struct ssh_conn *c);
/* Reads what a channel's stream has into b (at most max bytes in all); see ssh.c. */
int ssh_read_stream(LIBSSH2_CHANNEL *ch, int stream, struct buf *b, size_t max, bool *full);

#endif
