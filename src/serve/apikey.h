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
/* What is shown instead of the key: "SHA256:" and the unpadded standard
 * base64 of the key's SHA-256, as ssh-keygen -l shows a key's. The key is
 * the file's text without its trailing newline, what vLLM compares; on a
 * laptop: printf %s "$DSV41_API_KEY" | openssl dgst -sha256 -binary | base64 | tr -d =
 * "n/a" should OpenSSL fail. */
#define APIKEY_FP_SIZE 56
void apikey_fingerprint(const char *key, size_t len, char out[APIKEY_FP_SIZE]);

/* What rotate did with the old key file. */
enum apikey_old {
    APIKEY_OLD_NONE,     /* there was none */
    APIKEY_OLD_WIPED,    /* overwritten with zeros and truncated, then gone */
    APIKEY_OLD_UNLINKED, /* its name replaced; its bytes not overwritten (not ours to open,
                            or another name shares the file) */
};
/* Writes a new key to path: a 0600 temporary beside it, fsync, rename, the
 * directory fsynced (buf_write_file), so a crash leaves the old key or the
 * new. A symbolic link or a non-file at path is refused, never followed or
 * replaced. fp gets the new key's fingerprint. -1 with why; the old key is
 * untouched then. */
int apikey_rotate(const char *path, char fp[APIKEY_FP_SIZE], enum apikey_old *old, struct buf *why);
/* Overwrites and frees a buffer that held a secret. */
void apikey_scrub(struct buf *b);

#endif
