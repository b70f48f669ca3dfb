/* hashfile: see hashfile.h. */
#include "hashfile.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels say EINVAL: faults then */
#endif

/* One read(): large enough that the syscalls cost nothing beside hashing
 * (~2 GB/s per core), small enough to stay in the core's L2 while it is
 * hashed (4 MiB was ~15 % slower with 2 jobs: make bench). */
#define HF_CHUNK (256u << 10)
/* One mapping, and the unit the way is chosen for: a mapping's own cost
 * (mmap, munmap, the TLB flush) is nothing beside hashing 16 MiB. */
#define HF_WINDOW (16u << 20)
/* Each way is measured over this much before the cheaper is kept: four
 * windows, so that one cold start or one preemption does not decide, and
 * little hashed the dearer way (make bench in a 2-core VM, where mmap is
 * the dearer: 2-5 % slower than read() forced over 3 GB; nothing beside a
 * checkpoint's 150 GB). */
#define HF_TRIAL (64u << 20)
/* A mapping must be this much cheaper to be chosen: read() is the way that
 * has nothing to undo when a file changes under it. */
#define HF_MAP_EDGE 0.95

/* A file cut short under the mapping (hashfile.h) */
#define HF_SHRUNK (-2)

static struct {
    pthread_once_t once;
    _Atomic int way; /* enum hashfile_way */
    _Atomic int turn; /* alternates the ways while measuring */
    _Atomic int64_t ns[2], bytes[2];
    struct sigaction bus_old;
} hf = {.once = PTHREAD_ONCE_INIT, .way = HASHFILE_AUTO};

/* Where this thread's mapped hash resumes on SIGBUS; NULL elsewhere. */
static _Thread_local sigjmp_buf *bus_at;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
    sigjmp_buf *at = bus_at;
    if (at)
        siglongjmp(*at, 1);
    /* not a mapped hash's: what was there before this handler does it */
    const struct sigaction *old = &hf.bus_old;
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, si, uc);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    if (old->sa_handler == SIG_IGN && si->si_code <= 0)
        return; /* sent by kill() and ignored before: still ignored */
    /* the default (a fault is never ignored: the kernel does the same) ends
     * the process: a fault by running the access again, a kill() by sending
     * it again, delivered once this handler returns */
    signal(sig, SIG_DFL);
    if (si->si_code <= 0)
        raise(sig);
}

static void hf_init(void)
{
    const char *io = getenv("DSV41_VERIFY_IO");
    if (io && strcmp(io, "read") == 0)
        atomic_store(&hf.way, HASHFILE_READ);
    else if (io && strcmp(io, "map") == 0)
        atomic_store(&hf.way, HASHFILE_MAP);
}

/* This handler for SIGBUS, before a file is mapped: put back if something
 * installed its own since (the one it replaced is then the one it chains
 * to). Under a lock: two threads must not each save the other's install. */
static void bus_ensure(void)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) == 0 &&
        !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_bus)) {
        struct sigaction sa = {.sa_sigaction = on_bus, .sa_flags = SA_SIGINFO};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, &hf.bus_old);
    }
    pthread_mutex_unlock(&mu);
}

void hashfile_set_way(enum hashfile_way w)
{
    pthread_once(&hf.once, hf_init);
    atomic_store(&hf.way, w);
    for (int i = 0; i < 2; i++)
        atomic_store(&hf.ns[i], 0), atomic_store(&hf.bytes[i], 0);
}

static int64_t thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* CPU seconds per GB a way cost while measured; -1 unmeasured. */
static double cost_s_per_gb(int way)
{
    int64_t b = atomic_load(&hf.bytes[way]);
    return b > 0 ? (double)atomic_load(&hf.ns[way]) / (double)b : -1;
}

/* Adds a measured window; once both ways have HF_TRIAL, keeps the cheaper. */
static void hf_measured(int way, int64_t ns, int64_t bytes)
{
    atomic_fetch_add(&hf.ns[way], ns);
    int64_t b = atomic_fetch_add(&hf.bytes[way], bytes) + bytes;
    if (b < HF_TRIAL || atomic_load(&hf.bytes[!way]) < HF_TRIAL)
        return;
    int keep = cost_s_per_gb(HASHFILE_MAP) < HF_MAP_EDGE * cost_s_per_gb(HASHFILE_READ)
                   ? HASHFILE_MAP
                   : HASHFILE_READ;
    int auto_ = HASHFILE_AUTO;
    atomic_compare_exchange_strong(&hf.way, &auto_, keep);
}

/* Up to n bytes from off into the hash; *got what there was (less at EOF). */
static int hash_read(int fd, int64_t off, int64_t n, EVP_MD_CTX *ctx, unsigned char *chunk,
                     int64_t *got)
{
    *got = 0;
    while (*got < n) {
        size_t want = n - *got < HF_CHUNK ? (size_t)(n - *got) : HF_CHUNK;
        ssize_t r = pread(fd, chunk, want, off + *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            break;
        if (EVP_DigestUpdate(ctx, chunk, (size_t)r) != 1)
            return EIO;
        *got += r;
    }
    return 0;
}

/* n bytes at off (within the size fstat gave) hashed from a mapping: 0,
 * HF_SHRUNK when the file no longer has them, 1 when it cannot be mapped
 * (the caller reads), or an errno. */
static int hash_mapped(int fd, int64_t off, size_t n, EVP_MD_CTX *ctx)
{
    void *p = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, off);
    if (p == MAP_FAILED)
        return 1;
    /* the pages in one call rather than a fault per 16 of them; errors
     * (EFAULT past a new end) show as SIGBUS below */
    (void)madvise(p, n, MADV_POPULATE_READ);
    sigjmp_buf jb;
    volatile int rc = 0;
    if (sigsetjmp(jb, 1) == 0) {
        bus_at = &jb;
        if (EVP_DigestUpdate(ctx, p, n) != 1)
            rc = EIO;
    } else {
        rc = HF_SHRUNK;
    }
    bus_at = NULL;
    munmap(p, n);
    return rc;
}

/* The way for the next window: the chosen one, or by turns while measuring. */
static int next_way(bool *measuring)
{
    int w = atomic_load(&hf.way);
    *measuring = w == HASHFILE_AUTO;
    return *measuring ? atomic_fetch_add(&hf.turn, 1) & 1 : w;
}

/* The file from its start into ctx: mapped or read window by window up to
 * the size fstat gave, then read on to the end (a file that grew). */
static int hash_all(int fd, int64_t size, EVP_MD_CTX *ctx, unsigned char *chunk,
                    _Atomic int64_t *done, int64_t *added, const atomic_int *cancel, bool may_map)
{
    int64_t off = 0;
    for (;;) {
        if (cancel && atomic_load(cancel))
            return ECANCELED;
        int64_t n = size - off > HF_WINDOW ? HF_WINDOW : size - off;
        bool measuring = false;
        int way = n > 0 && may_map ? next_way(&measuring) : HASHFILE_READ;
        if (n <= 0)
            n = HF_WINDOW; /* past the size seen: read until the end */
        int64_t t0 = measuring ? thread_ns() : 0, got = n;
        int rc = way == HASHFILE_MAP ? hash_mapped(fd, off, (size_t)n, ctx) : 1;
        if (rc == 1) /* read, or a mapping refused */
            rc = hash_read(fd, off, n, ctx, chunk, &got), way = HASHFILE_READ;
        if (rc)
            return rc;
        if (measuring && got == n)
            hf_measured(way, thread_ns() - t0, n);
        if (done)
            atomic_fetch_add(done, got);
        *added += got;
        off += got;
        if (got < n)
            return 0; /* the end */
    }
}

int hashfile_sha256(int fd, unsigned char out[32], _Atomic int64_t *done,
                    const atomic_int *cancel)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return errno;
    return hashfile_sha256_seen(fd, S_ISREG(st.st_mode) ? st.st_size : -1, out, done, cancel);
}

int hashfile_sha256_seen(int fd, int64_t size, unsigned char out[32], _Atomic int64_t *done,
                         const atomic_int *cancel)
{
    pthread_once(&hf.once, hf_init);
    unsigned char *chunk = malloc(HF_CHUNK);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = 0;
    if (!chunk || !ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        rc = ENOMEM;
        goto out;
    }
    /* the kernel reads ahead further for a file read once, in order */
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    int64_t added = 0;
    if (size > 0 && atomic_load(&hf.way) != HASHFILE_READ)
        bus_ensure();
    rc = hash_all(fd, size > 0 ? size : 0, ctx, chunk, done, &added, cancel, size > 0);
    if (rc == HF_SHRUNK) {
        /* cut short under the mapping: all again by read(), whose answer is
         * the one to give (the shorter file's hash) */
        if (done)
            atomic_fetch_sub(done, added);
        added = 0;
        rc = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1
                 ? hash_all(fd, 0, ctx, chunk, done, &added, cancel, false)
                 : ENOMEM;
    }
    unsigned int len = 32;
    if (rc == 0 && (EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != 32))
        rc = EIO;
out:
    EVP_MD_CTX_free(ctx);
    free(chunk);
    return rc;
}

void hashfile_describe(char *out, size_t sz)
{
    pthread_once(&hf.once, hf_init);
    int w = atomic_load(&hf.way);
    const char *name = w == HASHFILE_MAP ? "mmap" : w == HASHFILE_READ ? "read()" : "read()/mmap";
    double r = cost_s_per_gb(HASHFILE_READ), m = cost_s_per_gb(HASHFILE_MAP);
    if (r > 0 && m > 0)
        snprintf(out, sz, "%s (CPU per GB: read() %.2f s, mmap %.2f s)", name, r, m);
    else
        snprintf(out, sz, "%s", name);
}
