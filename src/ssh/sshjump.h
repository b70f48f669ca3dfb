/* sshjump: ProxyJump, one hop. A session to the jump host (checked and
 * authenticated like any other), a direct-tcpip channel from it to the
 * target, and a thread that pumps bytes between that channel and one end of
 * a socketpair. The target's session runs over the other end as if it were
 * the TCP socket, so nothing above notices the hop. */
#ifndef DSV41_SSHJUMP_H
#define DSV41_SSHJUMP_H

#include "buf.h"
#include "sshconf.h"

struct ssh_jump;

/* Reaches t's host:port through t->jump (resolved with t->config). NULL with
 * a message that names the jump host and what failed. */
struct ssh_jump *sshjump_open(const char *name, const struct ssh_target *t,
                              const char *known_hosts, int timeout_ms, struct buf *err);
/* The descriptor the target's session reads and writes. */
int sshjump_fd(const struct ssh_jump *j);
/* Stops the pump, closes the channel and the jump host's session. */
void sshjump_close(struct ssh_jump *j);

#endif
