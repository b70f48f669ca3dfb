/* sshconf: resolves an ssh target ("alias", "user@host", "host:port") the way
 * OpenSSH's client would, reading Host blocks of ~/.ssh/config for HostName,
 * User, Port and IdentityFile (first value wins, as in OpenSSH). */
#ifndef DSV41_SSHCONF_H
#define DSV41_SSHCONF_H

#include "buf.h"

#define SSHCONF_MAX_IDS 8

struct ssh_target {
    char alias[256];    /* what the user wrote, without user@ */
    char host[256];     /* address to connect to */
    char user[64];
    int port;
    int nids;
    char ids[SSHCONF_MAX_IDS][512]; /* identity files; defaults when config names none */
};

/* config_path may not exist. Returns -1 with a message in err on bad input. */
int sshconf_resolve(const char *config_path, const char *target, struct ssh_target *out,
                    struct buf *err);

#endif
