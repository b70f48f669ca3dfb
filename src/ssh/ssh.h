/* ssh: one libssh2 session to one node. Connect with a timeout, strict
 * known_hosts check, agent then identity-file auth, keepalive, and commands on
 * channels driven in non-blocking mode so that a dead peer costs at most the
 * caller's deadline. Not thread-safe: node.c serialises use of a session. */
#ifndef DSV41_SSH_H
#define DSV41_SSH_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "sshconf.h"

struct ssh_conn;

struct ssh_result {
    struct buf out, err;
    /* -1 when the command did not finish (the session failed or timed
     * out) or closed its output and had not ended SSH_CLOSE_GRACE_MS
     * later; 128+N when signal N ended it. A node that closed the channel
     * without sending a status reads 0: libssh2 cannot tell the two apart
     * (OpenSSH always sends one when the command ends). */
    int exit_status;
};
/* How long a command that closed its output may take to end (its exit
 * status comes when it does): then it reads -1 */
#define SSH_CLOSE_GRACE_MS 5000

/* Library-wide init; call once before any thread uses ssh. */
int ssh_global_init(void);
/* name labels messages ("worker"). Returns NULL with a message in err that
 * names the node, what failed and what to do next. */
struct ssh_conn *ssh_connect(const char *name, const struct ssh_target *t, const char *known_hosts,
                             int timeout_ms, struct buf *err);
/* One command on its own channel, advanced without blocking so that one
 * thread can drive many channels of a session (see sshio.c). */
struct ssh_chan;

struct ssh_chan *ssh_chan_new(const char *cmd);
/* Queues bytes for the command's stdin (written as the channel allows). */
int ssh_chan_write(struct ssh_chan *ch, const char *data, size_t len);
/* Advances the channel: opens it, starts the command, writes pending stdin,
 * appends output to out/err (each capped at max bytes; more is dropped).
 * Returns 1 when the command has ended and the channel is closed, 0 when it
 * must wait for the socket, -1 when the session failed (err says why). Only
 * one channel of a session may be opening at a time: pass may_open=false to
 * the others. */
int ssh_chan_step(struct ssh_conn *c, struct ssh_chan *ch, bool may_open, struct buf *out,
                  struct buf *err, size_t max, struct buf *why);
/* A stream's stdout: stop reading at max (the caller drains and steps
 * again) instead of dropping what does not fit. */
void ssh_chan_hold(struct ssh_chan *ch);
/* True when the last step stopped at max: step again without waiting. */
bool ssh_chan_full(const struct ssh_chan *ch);
bool ssh_chan_opening(const struct ssh_chan *ch);
int ssh_chan_exit_status(const struct ssh_chan *ch);
/* Frees the channel; one still open is closed without waiting. */
/* c: the session the channel is on, NULL when it is gone. */
void ssh_chan_free(struct ssh_conn *c, struct ssh_chan *ch);
/* One file written over sftp (created or truncated, then given mode),
 * advanced without blocking like a channel. */
struct ssh_put;

struct ssh_put *ssh_put_new(const char *path, const char *data, size_t len, int mode);
/* 1 when written and closed, 0 when it must wait, -1 when the session
 * failed, -2 when the node refused the file (why says; the session is fine). */
int ssh_put_step(struct ssh_conn *c, struct ssh_put *p, bool may_open, struct buf *why);
bool ssh_put_opening(const struct ssh_put *p);
void ssh_put_free(struct ssh_conn *c, struct ssh_put *p);

/* A direct-streamlocal@openssh.com channel to a unix socket on the node:
 * req written, then EOF, then the answer read until the far end closes,
 * advanced without blocking like a command's channel. */
struct ssh_unix;

/* The channel's open message (OpenSSH PROTOCOL 2.4): string path, string
 * reserved "", uint32 reserved 0. Appended to out; -1 on an empty or absurd
 * path or out of memory. */
int ssh_streamlocal_msg(struct buf *out, const char *path);
struct ssh_unix *ssh_unix_new(const char *sock, const char *req, size_t len);
/* One whose request is not followed by EOF and whose answer the caller
 * takes from out as it comes (a followed log): it ends when the far end
 * closes. */
struct ssh_unix *ssh_unix_new_stream(const char *sock, const char *req, size_t len);
/* 1 when the answer is in out (whole: the far end closed), 0 when it must
 * wait, -1 when the session failed, -2 when the node's sshd would not open
 * the socket (missing, or forwarding refused: why says), -3 when the answer
 * grew past max. A stream's max is what one step reads at most: it stops
 * there (ssh_unix_full) and the rest waits for the next step. Only one
 * channel of a session may be opening at a time. */
int ssh_unix_step(struct ssh_conn *c, struct ssh_unix *u, bool may_open, struct buf *out,
                  size_t max, struct buf *why);
bool ssh_unix_full(const struct ssh_unix *u);
bool ssh_unix_opening(const struct ssh_unix *u);
/* An open asked of libssh2 and not yet answered: libssh2 1.10 keeps its
 * state in the session, so the next open of any channel would take this
 * one's answer; it must be stepped to its end even when no one waits. */
bool ssh_unix_open_pending(const struct ssh_unix *u);
void ssh_unix_free(struct ssh_conn *c, struct ssh_unix *u);

/* The socket and the poll events libssh2 waits for. */
int ssh_fd(const struct ssh_conn *c);
short ssh_poll_events(struct ssh_conn *c);
/* Monotonic ms of the last byte received on the session (any packet). */
long long ssh_last_rx(const struct ssh_conn *c);
/* Bytes read from the node so far: a call that moved it may have left
 * packets in libssh2 for a channel other than its own, which the socket no
 * longer shows to poll. */
unsigned long long ssh_rx_bytes(const struct ssh_conn *c);
/* One step of a ping: a session channel opened and closed again, which the
 * node's sshd must answer and which runs nothing there. 1 answered, 0
 * waiting (it then holds the session's one channel-opening slot), -1 the
 * session broke. */
int ssh_ping_step(struct ssh_conn *c);

/* A direct-tcpip channel from this session to host:port (ProxyJump), opened
 * within timeout_ms; NULL with a reason. */
struct _LIBSSH2_CHANNEL *ssh_direct_tcpip(struct ssh_conn *c, const char *host, int port,
                                          int timeout_ms, struct buf *why);
/* Sends a keepalive if one is due; -1 when the session is dead. */
int ssh_keepalive(struct ssh_conn *c);
void ssh_close(struct ssh_conn *c);
void ssh_result_free(struct ssh_result *r);

#endif
