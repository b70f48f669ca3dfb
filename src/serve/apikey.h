/* apikey: the API key of the deployment. Created once (32 random bytes from
 * OpenSSL, URL-safe base64 without padding) in a 0600 file and reused; a key
 * file that others can read is refused, never silently fixed. */
#ifndef DSV41_APIKEY_H
#define DSV41_APIKEY_H

#include "buf.h"

/* Reads the key from path. -1 with a reason (missing, mode, empty). */
int apikey_read(const char *path, struct buf *key, struct buf *why);
/* Reads the key, creating it (and its directory, 0700) when missing. */
int apikey_ensure(const char *path, struct buf *key, struct buf *why);
/* Overwrites and frees a buffer that held a secret. */
void apikey_scrub(struct buf *b);

#endif
