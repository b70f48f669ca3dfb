/* ssh: one libssh2 session to one node. Connect with a timeout, strict
 * known_hosts check, agent then identity-file auth, keepalive, and commands on
 * channels driven in non-blocking mode so that a dead peer costs at most the
 * caller's deadline. Not thread-safe: node.c serialises use of a session. */
#ifndef DSV41_SSH_H
#define DSV41_SSH_H

#include "buf.h"
#include "sshconf.h"

struct ssh_conn;

struct ssh_result {
    struct buf out, err;
    int exit_status; /* -1 when the remote side sent none */
};

/* Library-wide init; call once before any thread uses ssh. */
int ssh_global_init(void);
/* name labels messages ("worker"). Returns NULL with a message in err that
 * names the node, what failed and what to do next. */
struct ssh_conn *ssh_connect(const char *name, const struct ssh_target *t, const char *known_hosts,
                             int timeout_ms, struct buf *err);
/* Runs cmd; stdout/stderr are capped at max_bytes each. Returns 0 when the
 * command ran (whatever its exit status), -1 when the session failed (then
 * the connection is unusable and must be closed). */
int ssh_exec(struct ssh_conn *c, const char *cmd, size_t max_bytes, int timeout_ms,
             struct ssh_result *res, struct buf *err);
/* Sends a keepalive if one is due; -1 when the session is dead. */
int ssh_keepalive(struct ssh_conn *c);
void ssh_close(struct ssh_conn *c);
void ssh_result_free(struct ssh_result *r);

#endif
