/* sshconf: resolves an ssh target ("alias", "user@host", "host:port") the way
 * OpenSSH's client would from ~/.ssh/config: Host and Match blocks (Match
 * host, originalhost, user, all), Include (globs, relative to ~/.ssh, nested),
 * first value wins. Read: HostName, User, Port, IdentityFile, IdentitiesOnly,
 * ProxyJump (one hop), ConnectTimeout, ServerAliveInterval/CountMax,
 * UserKnownHostsFile (its first file, checked beside SSH_KNOWN_HOSTS). Keys that
 * change nothing for us are passed over; any other key in a block that
 * applies is named in notes, once, instead of being ignored silently. */
#ifndef DSV41_SSHCONF_H
#define DSV41_SSHCONF_H

#include <stdbool.h>

#include "buf.h"

#define SSHCONF_MAX_IDS 8

struct ssh_target {
    char alias[256];    /* what the user wrote, without user@ */
    char host[256];     /* address to connect to */
    char user[64];
    int port;
    int nids;
    char ids[SSHCONF_MAX_IDS][512]; /* identity files; defaults when config names none */
    bool identities_only;           /* only those files, not every key of the agent */
    char jump[256];                 /* ProxyJump: [user@]host[:port] or alias; "" none */
    char config[512];               /* the file it came from, to resolve the jump host */
    char known_hosts[512];          /* UserKnownHostsFile: read beside SSH_KNOWN_HOSTS; "" none */
    int connect_timeout_s;          /* ConnectTimeout; 0 unset */
    int alive_interval_s;           /* ServerAliveInterval; 0 unset */
    int alive_count_max;            /* ServerAliveCountMax; 0 unset (OpenSSH: 3) */
    char notes[1024];               /* what the config asks that we do not do */
};

/* config_path may not exist. Returns -1 with a message in err on bad input
 * (err names the file and line). */
int sshconf_resolve(const char *config_path, const char *target, struct ssh_target *out,
                    struct buf *err);

#endif
