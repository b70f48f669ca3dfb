/* knownhosts: which host key types a known_hosts file holds for a host, as
 * OpenSSH reads it (plain and hashed "|1|salt|hash" names, patterns with *
 * and ?, "!" negation, "[host]:port" for a port other than 22, @revoked and
 * @cert-authority lines left out). OpenSSH then asks the server for those
 * types first; libssh2 would take its own order (ECDSA first) and refuse a
 * host whose only known key is the ed25519 key `ssh` stored on first contact. */
#ifndef DSV41_KNOWNHOSTS_H
#define DSV41_KNOWNHOSTS_H

#include "buf.h"

/* The hostkey method preference for libssh2_session_method_pref, from
 * supported (a comma list of libssh2's names): the methods of the key types
 * known for host:port first, then the rest, each group in OpenSSH's order
 * (so an unknown host is asked for the key `ssh` would show). */
int knownhosts_pref(const char *path, const char *host, int port, const char *supported,
                    struct buf *out);
/* The same from the file's text. */
int knownhosts_pref_text(const char *text, const char *host, int port, const char *supported,
                         struct buf *out);

#endif
