#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int buf_reserve(struct buf *b, size_t extra)
{
    if (extra > (size_t)-1 / 2 - b->len)
        return -1;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int buf_append(struct buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_puts(struct buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || buf_reserve(b, (size_t)n) < 0)
        return -1;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void buf_reset(struct buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

const char *buf_str(const struct buf *b)
{
    return b->data ? b->data : "";
}

int buf_read_file(struct buf *b, const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char tmp[4096];
    size_t total = 0;
    for (;;) {
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        size_t take = (size_t)n;
        if (total + take > max)
            take = max - total;
        if (buf_append(b, tmp, take) < 0) {
            close(fd);
            errno = ENOMEM;
            return -1;
        }
        total += take;
        if (total >= max)
            break;
    }
    close(fd);
    return 0;
}

void buf_drain_lines(struct buf *b, size_t max, void (*fn)(void *ctx, const char *line, size_t len),
                     void *ctx)
{
    size_t start = 0;
    for (size_t i = 0; i < b->len; i++) {
        if (b->data[i] == '\n' || i - start >= max) {
            size_t end = i;
            if (end > start && b->data[end - 1] == '\r')
                end--;
            fn(ctx, b->data + start, end - start);
            start = i + (b->data[i] == '\n');
        }
    }
    if (start) {
        memmove(b->data, b->data + start, b->len - start);
        b->len -= start;
        b->data[b->len] = '\0';
    }
}

/* The rename to disk: without the directory's fsync a crash can bring back
 * the old name. Best effort: the file is replaced either way, and a
 * directory that cannot be opened for reading must not fail the write.
 * Cuts path at its last '/'. */
static void fsync_parent(char *path)
{
    char *slash = strrchr(path, '/');
    const char *dir = ".";
    if (slash) {
        slash[slash == path ? 1 : 0] = '\0';
        dir = path;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int buf_write_file(const char *path, const char *data, size_t len, mode_t mode)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 16);
    if (!tmp) {
        errno = ENOMEM;
        return -1;
    }
    /* a name of its own (mkstemp: O_EXCL, 0600): two writers, or a link
     * planted beside the file, cannot make it write elsewhere */
    snprintf(tmp, pl + 16, "%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    int rc = fd < 0 ? -1 : 0;
    for (size_t off = 0; rc == 0 && off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    /* the mode as asked, whatever the umask or an older file said */
    if (rc == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
        rc = -1;
    int e = errno;
    if (fd >= 0 && close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -1;
        e = errno;
    }
    if (rc && fd >= 0)
        unlink(tmp);
    if (rc == 0)
        fsync_parent(tmp);
    free(tmp);
    errno = e;
    return rc;
}

int buf_read_small(const char *path, char *dst, size_t sz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, dst, sz - 1);
    close(fd);
    if (n < 0)
        return -1;
    dst[n] = '\0';
    return 0;
}
