/* faultfs: a directory passed through FUSE with the faults of a real disk
 * on demand, for the tests.
 * - Writes that wait, as an NFS server that stops answering or a writeback
 *   stall does: SIGUSR1 blocks every write, truncate and create until
 *   SIGUSR2 lets them go. For the guard's test (tests/cli/test_guard_stall.sh):
 *   its STATE_DIR lives here, and a floor crossing must still kill while
 *   writes wait.
 * - A power cut (--cut): SIGPWR undoes every write, truncate and fallocate
 *   of each file since its last fsync/fdatasync, as a machine that lost
 *   power comes back with only what was synced (tests/it/test_copy.sh: the
 *   copy helper's state must claim only bytes that were). Names are taken
 *   as durable at once (create, rename, unlink, mkdir): kinder than ext4 or
 *   XFS, where a name may be lost too, and stated so. Files are served with
 *   direct_io and no attribute cache, so no page cache of the kernel's hides
 *   a cut from a reader.
 * usage: faultfs [--cut] BACKING_DIR MOUNTPOINT [fuse options...]   (stays in front) */
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
#include <sys/statvfs.h>
#include <unistd.h>

static char g_back[PATH_MAX];
static int g_cut_mode;
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

/* ---- the power cut: per file, how to undo what was not synced ---------- */

struct undo_rec { /* bytes [off, off + len) as they were before a write */
    off_t off;
    size_t len;
    char *old;
};

struct undo {
    char path[PATH_MAX]; /* the backing file's */
    off_t size0;         /* its size at its last sync */
    struct undo_rec *rec;
    int n, cap;
};

static pthread_mutex_t g_undo_mu = PTHREAD_MUTEX_INITIALIZER;
static struct undo *g_undo;
static int g_nundo;

static struct undo *undo_find(const char *path)
{
    for (int i = 0; i < g_nundo; i++)
        if (strcmp(g_undo[i].path, path) == 0)
            return &g_undo[i];
    return NULL;
}

static void undo_drop(const char *path)
{
    struct undo *u = undo_find(path);
    if (!u)
        return;
    for (int k = 0; k < u->n; k++)
        free(u->rec[k].old);
    free(u->rec);
    *u = g_undo[--g_nundo];
}

/* Before fd (backing file path) changes in [off, off + len): what it holds
 * there now, and its size when this is its first change since a sync. */
static void undo_note(const char *path, int fd, off_t off, size_t len)
{
    if (!g_cut_mode)
        return;
    struct stat sb;
    if (fstat(fd, &sb) < 0)
        return;
    pthread_mutex_lock(&g_undo_mu);
    struct undo *u = undo_find(path);
    if (!u) {
        struct undo *g = realloc(g_undo, (size_t)(g_nundo + 1) * sizeof *g);
        if (!g)
            abort(); /* a test's tool: out of memory ends the test loudly */
        g_undo = g;
        u = &g_undo[g_nundo++];
        memset(u, 0, sizeof *u);
        snprintf(u->path, sizeof u->path, "%s", path);
        u->size0 = sb.st_size;
    }
    /* bytes past the size at the last sync need no copy: the cut truncates */
    off_t end = off + (off_t)len;
    if (end > u->size0)
        end = u->size0;
    if (end > off) {
        if (u->n == u->cap) {
            u->cap = u->cap ? u->cap * 2 : 16;
            u->rec = realloc(u->rec, (size_t)u->cap * sizeof *u->rec);
            if (!u->rec)
                abort();
        }
        struct undo_rec *r = &u->rec[u->n++];
        r->off = off;
        r->len = (size_t)(end - off);
        if (!(r->old = malloc(r->len)))
            abort();
        ssize_t k = pread(fd, r->old, r->len, off);
        if (k < 0)
            k = 0;
        memset(r->old + k, 0, r->len - (size_t)k);
    }
    pthread_mutex_unlock(&g_undo_mu);
}

/* SIGPWR: every file back to what its last sync left (newest change first). */
static void *cut_main(void *arg)
{
    sigset_t *set = arg;
    for (int sig; sigwait(set, &sig) == 0;) {
        long long bytes = 0;
        pthread_mutex_lock(&g_undo_mu);
        int files = g_nundo;
        while (g_nundo) {
            struct undo *u = &g_undo[g_nundo - 1];
            int fd = open(u->path, O_WRONLY | O_CLOEXEC);
            for (int k = u->n - 1; fd >= 0 && k >= 0; k--) {
                if (pwrite(fd, u->rec[k].old, u->rec[k].len, u->rec[k].off) < 0)
                    perror("faultfs: undo");
                bytes += (long long)u->rec[k].len;
            }
            struct stat sb;
            if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > u->size0)
                bytes += (long long)(sb.st_size - u->size0);
            if (fd >= 0 && (ftruncate(fd, u->size0) < 0 || fsync(fd) < 0))
                perror("faultfs: cut back");
            if (fd >= 0)
                close(fd);
            undo_drop(u->path);
        }
        pthread_mutex_unlock(&g_undo_mu);
        fprintf(stderr, "faultfs: power cut: %d file(s) back to their last sync, %lld byte(s) undone\n",
                files, bytes);
    }
    return NULL;
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
    if (unlink(r) < 0)
        return -errno;
    pthread_mutex_lock(&g_undo_mu);
    undo_drop(r);
    pthread_mutex_unlock(&g_undo_mu);
    return 0;
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
    if (rename(ra, rb) < 0)
        return -errno;
    pthread_mutex_lock(&g_undo_mu); /* what was not synced goes with the name */
    undo_drop(rb);
    struct undo *u = undo_find(ra);
    if (u)
        snprintf(u->path, sizeof u->path, "%s", rb);
    pthread_mutex_unlock(&g_undo_mu);
    return 0;
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
    REAL(p);
    int fd = fi ? (int)fi->fh : open(r, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && sb.st_size >= size)
        undo_note(r, fd, size, (size_t)(sb.st_size - size));
    else
        undo_note(r, fd, size, 0);
    int rc = ftruncate(fd, size) < 0 ? -errno : 0;
    if (!fi)
        close(fd);
    return rc;
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
    gate();
    if (g_cut_mode) {
        REAL(p);
        struct stat sb;
        if ((fi->flags & O_APPEND) && fstat((int)fi->fh, &sb) == 0)
            off = sb.st_size;
        undo_note(r, (int)fi->fh, off, n);
    }
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
    gate();
    if ((datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0)
        return -errno;
    REAL(p);
    pthread_mutex_lock(&g_undo_mu); /* synced: a cut keeps it */
    undo_drop(r);
    pthread_mutex_unlock(&g_undo_mu);
    return 0;
}

/* names are durable at once here (see the top) */
static int fs_fsyncdir(const char *p, int datasync, struct fuse_file_info *fi)
{
    (void)p, (void)datasync, (void)fi;
    return 0;
}

static int fs_fallocate(const char *p, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
    gate();
    REAL(p);
    undo_note(r, (int)fi->fh, off, 0); /* a size grown: cut back */
    return fallocate((int)fi->fh, mode, off, len) < 0 ? -errno : 0;
}

static int fs_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi)
{
    if (fi)
        return futimens((int)fi->fh, tv) < 0 ? -errno : 0;
    REAL(p);
    return utimensat(AT_FDCWD, r, tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int fs_statfs(const char *p, struct statvfs *st)
{
    REAL(p);
    return statvfs(r, st) < 0 ? -errno : 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->nullpath_ok = 0; /* the cut keys files by path */
    if (g_cut_mode) { /* what a reader sees is what the backing file holds */
        cfg->direct_io = 1;
        cfg->attr_timeout = 0;
        cfg->entry_timeout = 0;
        cfg->negative_timeout = 0;
    }
    return NULL;
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
    .fsyncdir = fs_fsyncdir,
    .fallocate = fs_fallocate,
    .utimens = fs_utimens,
    .statfs = fs_statfs,
    .init = fs_init,
};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--cut") == 0) {
        g_cut_mode = 1;
        argv[1] = argv[0];
        argv++, argc--;
    }
    if (argc < 3 || !realpath(argv[1], g_back)) {
        fprintf(stderr, "usage: faultfs [--cut] BACKING_DIR MOUNTPOINT [fuse options...]\n");
        return 2;
    }
    /* SIGPWR, the power cut, to one thread of ours (fuse's threads inherit
     * the mask) */
    static sigset_t pwr;
    sigemptyset(&pwr);
    sigaddset(&pwr, SIGPWR);
    pthread_sigmask(SIG_BLOCK, &pwr, NULL);
    pthread_t cut;
    if (g_cut_mode && pthread_create(&cut, NULL, cut_main, &pwr) != 0)
        return 1;
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
