/* buf: a growable, always NUL-terminated byte buffer. Every other module builds
 * text through this instead of fixed arrays and sprintf. */
#ifndef DSV41_BUF_H
#define DSV41_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

struct buf {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
};

#define BUF_INIT {NULL, 0, 0}

int buf_append(struct buf *b, const char *s, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void buf_reset(struct buf *b);
void buf_free(struct buf *b);
/* Returns the string (never NULL: "" for an empty buffer). */
const char *buf_str(const struct buf *b);
/* Calls fn for each complete line of b (without '\n' and a trailing '\r'; a
 * line longer than max comes in pieces of max bytes) and removes them,
 * keeping an unfinished last line for the next call. */
void buf_drain_lines(struct buf *b, size_t max, void (*fn)(void *ctx, const char *line, size_t len),
                     void *ctx);
/* At most sz - 1 bytes of path into dst, terminated, with no allocation (the
 * guard reads /proc files between a sample and a kill). 0; -1 on an error. */
int buf_read_small(const char *path, char *dst, size_t sz);
/* Reads a whole file, at most max bytes; -1 with errno on failure. */
int buf_read_file(struct buf *b, const char *path, size_t max);
/* Writes a whole file atomically (a temporary beside it, fsync, rename, the
 * directory fsynced) with the given mode; a crash leaves the old file or the
 * new, never half of one. -1 with errno. */
int buf_write_file(const char *path, const char *data, size_t len, mode_t mode);

#endif
