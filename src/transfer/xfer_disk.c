/* xfer_disk: the receiving end's files on the disk - their directories
 * (nothing followed through a symlink), NAME.incomplete, and the writes.
 *
 * The bytes of a copy go to the disk without the page cache where the
 * filesystem lets them (O_DIRECT, #32): a buffered write copies every byte
 * once more into the cache, and writing it back and reclaiming it later
 * cost the worker more CPU than the copy itself (2.8 CPU-s per GB here,
 * 1.4 without). The hash does not need the cache: a piece that continues
 * the hashed prefix is hashed from the stream's buffer (xfer_recv.c), the
 * rest read back later, direct too (a buffered read would fill the cache
 * the worker then pays to reclaim once memory is full; no gain measured
 * here beside the bench's noise). Whatever is not whole aligned blocks (a range's
 * ends, a filesystem that refuses: tmpfs, some FUSE) is written buffered
 * through the file's first fd; both fds name the same inode. */
#include "xfer_recv_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"

int xfer_recv_open_parent(const char *dir, const char *path, bool make, const char **base)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *p = path;
    for (const char *slash; fd >= 0 && (slash = strchr(p, '/'));) {
        char name[256];
        size_t n = (size_t)(slash - p);
        if (n == 0 || n >= sizeof name) {
            close(fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        if (make && mkdirat(fd, name, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(fd);
        errno = e;
        fd = next;
        p = slash + 1;
    }
    *base = p;
    return fd;
}

/* A second fd on fd's own inode, for direct writes and reads; -1 when the
 * filesystem has none. Opened through /proc/self/fd (never the name again: it may have
 * been swapped meanwhile), and checked to be the same inode. */
static int open_direct(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int d = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
    struct stat a, b;
    if (d >= 0 && (fstat(fd, &a) < 0 || fstat(d, &b) < 0 || a.st_dev != b.st_dev ||
                   a.st_ino != b.st_ino)) {
        close(d);
        d = -1;
    }
    return d;
}

int xfer_recv_open_incomplete(struct recv *r, struct rfile *f)
{
    const char *base;
    int dfd = xfer_recv_open_parent(r->o->dir, f->f->path, true, &base);
    if (dfd < 0)
        return errno;
    char name[300];
    snprintf(name, sizeof name, "%s.incomplete", base);
    int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
                    sb.st_nlink != 1)) {
        /* not a file of ours alone (planted by another user, or a hard link
         * into somewhere else): removed, and made anew */
        close(fd);
        unlinkat(dfd, name, 0);
        fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        xfer_state_forget(f->st); /* what it held counts for nothing */
        r->durable_dirty = true;
    }
    /* its name reaches the disk in the syncer's next round, before the
     * durable state names its bytes (not here: the lock is held) */
    f->dir_unsynced = fd >= 0;
    int e = fd < 0 ? errno : 0;
    close(dfd);
    if (fd < 0)
        return e;
    if (f->f->size > 0 && (e = posix_fallocate(fd, 0, f->f->size)) != 0) {
        close(fd);
        return e;
    }
    f->fd = fd;
    f->dio_fd = open_direct(fd);
    return 0;
}

size_t xfer_dio_align(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 4096 ? (size_t)page : 4096;
}

void xfer_recv_close_file(struct rfile *f)
{
    if (f->dio_fd >= 0)
        close(f->dio_fd);
    if (f->fd >= 0)
        close(f->fd);
    f->fd = f->dio_fd = -1;
}

int xfer_recv_write(int fd, int dio_fd, const char *p, int64_t off, int64_t n, bool *dio_refused)
{
    const int64_t blk = (int64_t)xfer_dio_align();
    int64_t a = (off + blk - 1) / blk * blk, b = (off + n) / blk * blk;
    /* the whole blocks inside, when the buffer lines up with them too */
    if (dio_fd < 0 || b <= a || (uintptr_t)(p + (a - off)) % (uintptr_t)blk != 0)
        return fdio_pwrite_all(fd, p, (size_t)n, off);
    int e = fdio_pwrite_all(fd, p, (size_t)(a - off), off);
    if (!e) {
        e = fdio_pwrite_all(dio_fd, p + (a - off), (size_t)(b - a), a);
        if (e == EINVAL) { /* the filesystem's blocks are larger, or it has no direct I/O */
            *dio_refused = true;
            e = fdio_pwrite_all(fd, p + (a - off), (size_t)(b - a), a);
        }
    }
    return e ? e : fdio_pwrite_all(fd, p + (b - off), (size_t)(off + n - b), b);
}

ssize_t xfer_recv_read(int fd, int dio_fd, char *buf, size_t n, int64_t off, bool *dio_refused)
{
    const int64_t blk = (int64_t)xfer_dio_align();
    if (dio_fd >= 0 && off % blk == 0 && (uintptr_t)buf % (uintptr_t)blk == 0) {
        /* whole blocks: the bytes past n (not landed yet, or past the end)
         * are read and not used */
        size_t whole = (n + (size_t)blk - 1) / (size_t)blk * (size_t)blk;
        ssize_t k;
        do
            k = pread(dio_fd, buf, whole, off);
        while (k < 0 && errno == EINTR);
        if (k >= 0)
            return k < (ssize_t)n ? k : (ssize_t)n;
        if (errno != EINVAL)
            return -1;
        *dio_refused = true;
    }
    ssize_t k;
    do
        k = pread(fd, buf, n, off);
    while (k < 0 && errno == EINTR);
    return k;
}
