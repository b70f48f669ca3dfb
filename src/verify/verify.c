/* verify: see verify.h. */
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hashfile.h"
#include "mono.h"

const char *verify_result_name(enum verify_result r)
{
    switch (r) {
    case VERIFY_OK: return "OK";
    case VERIFY_MISMATCH: return "FAILED";
    case VERIFY_MISSING: return "MISSING";
    case VERIFY_UNREADABLE: return "UNREADABLE";
    case VERIFY_CANCELLED: return "CANCELLED";
    case VERIFY_PENDING: break;
    }
    return "PENDING";
}

const char *verify_error(const struct verify_entry *e)
{
    return e->not_regular ? "not a regular file" : strerror(e->err);
}

void verify_hex(const unsigned char d[32], char out[65])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[64] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

const char *verify_path_problem(const char *p)
{
    if (!*p)
        return "empty path";
    if (*p == '/')
        return "absolute path (must be inside the directory)";
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return "path with a '..' part (must stay inside the directory)";
        s += n;
        s += *s == '/';
    }
    return NULL;
}

/* sha256sum writes a name with '\\' or '\n' in it escaped, and the line
 * then starts with '\\'. */
static char *unescape(const char *s, size_t n, bool escaped)
{
    char *o = malloc(n + 1), *w = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (escaped && s[i] == '\\' && i + 1 < n) {
            i++;
            *w++ = s[i] == 'n' ? '\n' : s[i];
        } else {
            *w++ = s[i];
        }
    }
    *w = '\0';
    return o;
}

static int cmp_path(const void *a, const void *b)
{
    const struct verify_entry *x = *(struct verify_entry *const *)a, *y = *(struct verify_entry *const *)b;
    return strcmp(x->path, y->path);
}

static int check_duplicates(struct verify_manifest *m, const char *name, struct buf *err)
{
    if (m->n < 2)
        return 0;
    struct verify_entry **v = malloc((size_t)m->n * sizeof *v);
    if (!v) {
        buf_printf(err, "%s: out of memory", name);
        return -1;
    }
    for (int i = 0; i < m->n; i++)
        v[i] = &m->e[i];
    qsort(v, (size_t)m->n, sizeof *v, cmp_path);
    int rc = 0;
    for (int i = 1; i < m->n && !rc; i++)
        if (strcmp(v[i - 1]->path, v[i]->path) == 0) {
            const struct verify_entry *later = v[i]->line > v[i - 1]->line ? v[i] : v[i - 1];
            buf_printf(err, "%s:%d: %s is listed twice", name, later->line, later->path);
            rc = -1;
        }
    free(v);
    return rc;
}

static int parse_line(const char *s, size_t len, struct verify_entry *e, struct buf *err,
                      const char *name, int line)
{
    bool escaped = len && s[0] == '\\';
    if (escaped) {
        s++;
        len--;
    }
    for (int i = 0; i < 64; i++) {
        int hi = i < (int)len ? hexval(s[i]) : -1;
        if (hi < 0) {
            buf_printf(err, "%s:%d: expected 64 hex digits of a sha256, then two spaces and a path",
                       name, line);
            return -1;
        }
        if (i % 2 == 0)
            e->want[i / 2] = (unsigned char)(hi << 4);
        else
            e->want[i / 2] |= (unsigned char)hi;
    }
    if (len < 67 || s[64] != ' ' || (s[65] != ' ' && s[65] != '*')) {
        buf_printf(err, "%s:%d: expected two spaces (or ' *') between the sha256 and the path",
                   name, line);
        return -1;
    }
    e->path = unescape(s + 66, len - 66, escaped);
    if (!e->path) {
        buf_printf(err, "%s:%d: out of memory", name, line);
        return -1;
    }
    const char *why = verify_path_problem(e->path);
    if (why) {
        buf_printf(err, "%s:%d: %s", name, line, why);
        free(e->path);
        e->path = NULL;
        return -1;
    }
    e->size = -1;
    e->res = VERIFY_PENDING;
    e->line = line;
    return 0;
}

int verify_manifest_parse(const char *text, const char *name, struct verify_manifest *m,
                          struct buf *err)
{
    m->e = NULL;
    m->n = 0;
    int cap = 0, line = 0;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        const char *next = nl ? nl + 1 : s + len;
        line++;
        if (len && s[len - 1] == '\r')
            len--;
        size_t lead = 0;
        while (lead < len && (s[lead] == ' ' || s[lead] == '\t'))
            lead++;
        if (lead == len || s[lead] == '#') {
            s = next;
            continue;
        }
        if (m->n == VERIFY_MAX_FILES) {
            buf_printf(err, "%s:%d: more than %d files", name, line, VERIFY_MAX_FILES);
            goto fail;
        }
        if (m->n == cap) {
            int nc = cap ? cap * 2 : 16;
            struct verify_entry *ne = realloc(m->e, (size_t)nc * sizeof *ne);
            if (!ne) {
                buf_printf(err, "%s: out of memory", name);
                goto fail;
            }
            m->e = ne;
            cap = nc;
        }
        memset(&m->e[m->n], 0, sizeof m->e[m->n]);
        if (parse_line(s, len, &m->e[m->n], err, name, line) < 0)
            goto fail;
        m->n++;
        s = next;
    }
    if (m->n == 0) {
        buf_printf(err, "%s: no files listed", name);
        goto fail;
    }
    if (check_duplicates(m, name, err) == 0)
        return 0;
fail:
    verify_manifest_free(m);
    return -1;
}

void verify_manifest_free(struct verify_manifest *m)
{
    for (int i = 0; i < m->n; i++)
        free(m->e[i].path);
    free(m->e);
    m->e = NULL;
    m->n = 0;
}

void verify_manifest_reset(struct verify_manifest *m)
{
    for (int i = 0; i < m->n; i++) {
        struct verify_entry *e = &m->e[i];
        e->res = VERIFY_PENDING;
        e->size = -1;
        e->err = 0;
        e->not_regular = false;
    }
}

int verify_manifest_select(struct verify_manifest *m, char **paths, int n, struct buf *err)
{
    for (int k = 0; k < n; k++) {
        bool found = false;
        for (int i = 0; i < m->n && !found; i++)
            found = strcmp(m->e[i].path, paths[k]) == 0;
        if (!found) {
            buf_printf(err, "%s is not in the manifest", paths[k]);
            return -1;
        }
    }
    int w = 0;
    for (int i = 0; i < m->n; i++) {
        bool keep = false;
        for (int k = 0; k < n && !keep; k++)
            keep = strcmp(m->e[i].path, paths[k]) == 0;
        if (keep)
            m->e[w++] = m->e[i];
        else
            free(m->e[i].path);
    }
    m->n = w;
    return 0;
}

int verify_sha256_fd(int fd, unsigned char out[32], _Atomic int64_t *done,
                     const atomic_int *cancel)
{
    return hashfile_sha256(fd, out, done, cancel);
}

struct run {
    struct verify_manifest *m;
    int dirfd;
    const atomic_int *cancel;
    struct verify_progress *p;
    verify_done_fn done;
    void *arg;
    int *order; /* the largest files first: the last to end is a small one */
    _Atomic int next;
    pthread_mutex_t mu; /* one done call at a time; guards running */
    pthread_cond_t cv;
    int running;
};

static void check_one(struct run *r, struct verify_entry *e)
{
    if (e->res != VERIFY_PENDING) /* missing at the stat pass */
        return;
    if (r->cancel && atomic_load(r->cancel)) {
        e->res = VERIFY_CANCELLED;
        return;
    }
    /* O_NONBLOCK: a FIFO planted in the directory must not hang the open */
    int fd = openat(r->dirfd, e->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        e->err = errno;
        e->res = errno == ENOENT ? VERIFY_MISSING : VERIFY_UNREADABLE;
        return;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        e->err = 0;
        e->not_regular = true;
        e->res = VERIFY_UNREADABLE;
        close(fd);
        return;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int rc = verify_sha256_fd(fd, e->got, &r->p->done_bytes, r->cancel);
    close(fd);
    if (rc == ECANCELED)
        e->res = VERIFY_CANCELLED;
    else if (rc)
        e->res = VERIFY_UNREADABLE, e->err = rc;
    else
        e->res = memcmp(e->got, e->want, 32) == 0 ? VERIFY_OK : VERIFY_MISMATCH;
}

static int cmp_size_desc(const void *a, const void *b, void *arg)
{
    const struct verify_entry *e = arg;
    int64_t x = e[*(const int *)a].size, y = e[*(const int *)b].size;
    return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

static void *worker(void *arg)
{
    struct run *r = arg;
    for (int i; (i = atomic_fetch_add(&r->next, 1)) < r->m->n;) {
        struct verify_entry *e = &r->m->e[r->order[i]];
        check_one(r, e);
        pthread_mutex_lock(&r->mu);
        atomic_fetch_add(&r->p->files_done, 1);
        if (r->done)
            r->done(e, r->arg);
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_lock(&r->mu);
    r->running--;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int verify_run(struct verify_manifest *m, const char *dir, int jobs,
               const atomic_int *cancel, struct verify_progress *p,
               verify_done_fn done, void *arg, verify_tick_fn tick)
{
    struct run r = {.m = m, .cancel = cancel, .p = p, .done = done, .arg = arg};
    r.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (r.dirfd < 0)
        return -1;
    verify_manifest_reset(m);
    /* sizes first, so progress has its total from the start */
    for (int i = 0; i < m->n; i++) {
        struct stat st;
        if (fstatat(r.dirfd, m->e[i].path, &st, 0) == 0) {
            m->e[i].size = st.st_size;
            atomic_fetch_add(&p->total_bytes, (int64_t)st.st_size);
        } else if (errno == ENOENT) {
            m->e[i].res = VERIFY_MISSING;
            m->e[i].err = ENOENT;
        }
    }
    r.order = malloc((size_t)m->n * sizeof *r.order);
    if (!r.order) {
        close(r.dirfd);
        return -1;
    }
    for (int i = 0; i < m->n; i++)
        r.order[i] = i;
    qsort_r(r.order, (size_t)m->n, sizeof *r.order, cmp_size_desc, m->e);
    if (jobs < 1)
        jobs = 1;
    if (jobs > m->n)
        jobs = m->n;
    pthread_t th[VERIFY_MAX_JOBS];
    if (jobs > VERIFY_MAX_JOBS)
        jobs = VERIFY_MAX_JOBS;
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    int started = 0;
    for (; started < jobs; started++) {
        pthread_mutex_lock(&r.mu);
        r.running++;
        pthread_mutex_unlock(&r.mu);
        if (pthread_create(&th[started], NULL, worker, &r) != 0) {
            pthread_mutex_lock(&r.mu);
            r.running--;
            pthread_mutex_unlock(&r.mu);
            break;
        }
    }
    if (started == 0) {
        free(r.order);
        close(r.dirfd);
        pthread_mutex_destroy(&r.mu);
        pthread_cond_destroy(&r.cv);
        return -1;
    }
    pthread_mutex_lock(&r.mu);
    while (r.running > 0) {
        struct timespec ts;
        mono_deadline(&ts, 200);
        mono_cond_wait(&r.cv, &r.mu, &ts);
        if (tick && r.running > 0)
            tick(arg); /* under mu: never beside a done call */
    }
    pthread_mutex_unlock(&r.mu);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(r.order);
    close(r.dirfd);
    pthread_mutex_destroy(&r.mu);
    pthread_cond_destroy(&r.cv);
    int bad = 0;
    for (int i = 0; i < m->n; i++)
        bad += m->e[i].res != VERIFY_OK;
    return bad;
}
