/* blockfs: a directory passed through FUSE whose writes can be made to wait,
 * as an NFS server that stops answering or a writeback stall does. SIGUSR1
 * blocks every write, truncate and create until SIGUSR2 lets them go. For
 * the guard's test (tests/cli/test_guard_stall.sh): its STATE_DIR lives
 * here, and a floor crossing must still kill while writes wait.
 * usage: blockfs BACKING_DIR MOUNTPOINT [fuse options...]   (stays in front) */
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_back[PATH_MAX];
static volatile sig_atomic_t g_blocked;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_waiting; /* writes waiting now (for the log) */

static void on_block(int sig)
{
    g_blocked = sig == SIGUSR1;
}

/* A write waits here while blocked (polled: a signal handler cannot wake a
 * condition variable safely). */
static void gate(void)
{
    if (!g_blocked)
        return;
    pthread_mutex_lock(&g_mu);
    g_waiting++;
    while (g_blocked) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 50000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g_cv, &g_mu, &t);
    }
    g_waiting--;
    pthread_mutex_unlock(&g_mu);
}

static int real(const char *path, char *out)
{
    return snprintf(out, PATH_MAX, "%s%s", g_back, path) >= PATH_MAX ? -ENAMETOOLONG : 0;
}

#define REAL(p)                                                                                    \
    char r[PATH_MAX];                                                                              \
    if (real((p), r) < 0)                                                                          \
        return -ENAMETOOLONG;

static int fs_getattr(const char *p, struct stat *st, struct fuse_file_info *fi)
{
    (void)fi;
    REAL(p);
    return lstat(r, st) < 0 ? -errno : 0;
}

static int fs_readdir(const char *p, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags fl)
{
    (void)off, (void)fi, (void)fl;
    REAL(p);
    DIR *d = opendir(r);
    if (!d)
        return -errno;
    struct dirent *e;
    while ((e = readdir(d)))
        fill(buf, e->d_name, NULL, 0, 0);
    closedir(d);
    return 0;
}

static int fs_mkdir(const char *p, mode_t m)
{
    REAL(p);
    return mkdir(r, m) < 0 ? -errno : 0;
}

static int fs_unlink(const char *p)
{
    REAL(p);
    return unlink(r) < 0 ? -errno : 0;
}

static int fs_rmdir(const char *p)
{
    REAL(p);
    return rmdir(r) < 0 ? -errno : 0;
}

static int fs_rename(const char *a, const char *b, unsigned int flags)
{
    if (flags)
        return -EINVAL;
    char ra[PATH_MAX], rb[PATH_MAX];
    if (real(a, ra) < 0 || real(b, rb) < 0)
        return -ENAMETOOLONG;
    return rename(ra, rb) < 0 ? -errno : 0;
}

static int fs_chmod(const char *p, mode_t m, struct fuse_file_info *fi)
{
    (void)fi;
    REAL(p);
    return chmod(r, m) < 0 ? -errno : 0;
}

static int fs_truncate(const char *p, off_t size, struct fuse_file_info *fi)
{
    gate();
    if (fi)
        return ftruncate((int)fi->fh, size) < 0 ? -errno : 0;
    REAL(p);
    return truncate(r, size) < 0 ? -errno : 0;
}

static int fs_open(const char *p, struct fuse_file_info *fi)
{
    REAL(p);
    int fd = open(r, fi->flags);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int fs_create(const char *p, mode_t m, struct fuse_file_info *fi)
{
    gate();
    REAL(p);
    int fd = open(r, fi->flags, m);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int fs_read(const char *p, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
    (void)p;
    ssize_t k = pread((int)fi->fh, buf, n, off);
    return k < 0 ? -errno : (int)k;
}

static int fs_write(const char *p, const char *buf, size_t n, off_t off,
                    struct fuse_file_info *fi)
{
    (void)p;
    gate();
    ssize_t k = (fi->flags & O_APPEND) ? write((int)fi->fh, buf, n)
                                        : pwrite((int)fi->fh, buf, n, off);
    return k < 0 ? -errno : (int)k;
}

static int fs_release(const char *p, struct fuse_file_info *fi)
{
    (void)p;
    close((int)fi->fh);
    return 0;
}

static int fs_fsync(const char *p, int datasync, struct fuse_file_info *fi)
{
    (void)p;
    gate();
    return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0 ? -errno : 0;
}

static const struct fuse_operations OPS = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .mkdir = fs_mkdir,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .rename = fs_rename,
    .chmod = fs_chmod,
    .truncate = fs_truncate,
    .open = fs_open,
    .create = fs_create,
    .read = fs_read,
    .write = fs_write,
    .release = fs_release,
    .fsync = fs_fsync,
};

int main(int argc, char **argv)
{
    if (argc < 3 || !realpath(argv[1], g_back)) {
        fprintf(stderr, "usage: blockfs BACKING_DIR MOUNTPOINT [fuse options...]\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_block;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    /* fuse's own argv: the program, the mount point, in front, the rest */
    char *fargv[32] = {argv[0], argv[2], "-f", "-o", "default_permissions"};
    int fargc = 5;
    for (int i = 3; i < argc && fargc < 31; i++)
        fargv[fargc++] = argv[i];
    return fuse_main(fargc, fargv, &OPS, NULL);
}
