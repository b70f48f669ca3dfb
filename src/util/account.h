/* account: this machine's password database, safe beside other threads. */
#ifndef DSV41_ACCOUNT_H
#define DSV41_ACCOUNT_H

#include <stddef.h>
#include <sys/types.h>

/* An account's name and home (either out may be NULL). getpwuid's one static
 * record is shared by every thread, and the console's node samplers, ssh
 * config resolution and the units probe read it at once (TSan caught it):
 * this is getpwuid_r. Its own file: the static helpers, which never ask,
 * link nothing of NSS. 0; -1 when uid has no entry or a field does not fit. */
int account_lookup(uid_t uid, char *name, size_t nsz, char *home, size_t hsz);

#endif
