/* assemble: see assemble.h. Per chunk, in this order: copy into the shard,
 * fdatasync the shard, record it in the journal (fsync), release the chunk
 * from the part. A crash between two steps leaves a journal that is true:
 * what it counts is on disk; what it does not is copied again. */
#include "assemble.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fdio.h"

#define COPY_BUF (4 << 20)
#define JOURNAL_MAX ((double)(1LL << 50)) /* no part is a PiB: a journal saying so is damaged */

struct jpart {
    char name[600];
    int64_t size, copied;
};

struct journal {
    struct jpart *p;
    int n;
    int64_t written; /* bytes of the shard that are durable */
};

/* "X.partNN": the length of X, NN in *num; 0 when the name is no part. */
static size_t part_name(const char *name, int *num)
{
    const char *p = strrchr(name, '.');
    if (!p || strncmp(p, ".part", 5) != 0 || !isdigit((unsigned char)p[5]))
        return 0;
    for (const char *d = p + 5; *d; d++)
        if (!isdigit((unsigned char)*d))
            return 0;
    *num = atoi(p + 5);
    return (size_t)(p - name);
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int assemble_find(const char *dir, char ***shards, int *n, struct buf *err)
{
    *shards = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        buf_printf(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    size_t jl = strlen(ASSEMBLE_JOURNAL_SUFFIX);
    while ((e = readdir(d))) {
        int num;
        size_t l = part_name(e->d_name, &num), nl = strlen(e->d_name);
        if (!l && nl > jl && strcmp(e->d_name + nl - jl, ASSEMBLE_JOURNAL_SUFFIX) == 0)
            l = nl - jl;
        if (!l)
            continue;
        bool seen = false;
        for (int i = 0; i < *n && !seen; i++)
            seen = strlen((*shards)[i]) == l && strncmp((*shards)[i], e->d_name, l) == 0;
        if (seen)
            continue;
        char **ns = realloc(*shards, sizeof *ns * (size_t)(*n + 1));
        if (!ns || !(ns[*n] = strndup(e->d_name, l))) {
            free(ns);
            closedir(d);
            buf_puts(err, "out of memory");
            return -1;
        }
        *shards = ns;
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(*shards, (size_t)*n, sizeof **shards, by_str);
    return 0;
}

static void path_of(struct buf *b, const char *dir, const char *name, const char *suffix)
{
    buf_reset(b);
    buf_printf(b, "%s/%s%s", dir, name, suffix);
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd >= 0 ? fsync(fd) : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

static int journal_save(const char *dir, const char *shard, const struct journal *j,
                        struct buf *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "written", (double)j->written);
    cJSON *a = cJSON_AddArrayToObject(o, "parts");
    for (int i = 0; i < j->n; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", j->p[i].name);
        cJSON_AddNumberToObject(p, "size", (double)j->p[i].size);
        cJSON_AddNumberToObject(p, "copied", (double)j->p[i].copied);
        cJSON_AddItemToArray(a, p);
    }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    struct buf path = BUF_INIT, tmp = BUF_INIT;
    path_of(&path, dir, shard, ASSEMBLE_JOURNAL_SUFFIX);
    buf_printf(&tmp, "%s.tmp", buf_str(&path));
    int fd = text ? open(buf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)
                  : -1;
    bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) &&
              fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    ok = ok && rename(buf_str(&tmp), buf_str(&path)) == 0 && fsync_dir(dir) == 0;
    if (!ok)
        buf_printf(err, "cannot write %s: %s", buf_str(&path), strerror(errno));
    free(text);
    buf_free(&path);
    buf_free(&tmp);
    return ok ? 0 : -1;
}

/* 1 no journal, 0 loaded, -1 damaged */
static int journal_load(const char *dir, const char *shard, struct journal *j, struct buf *err)
{
    memset(j, 0, sizeof *j);
    struct buf path = BUF_INIT, text = BUF_INIT;
    path_of(&path, dir, shard, ASSEMBLE_JOURNAL_SUFFIX);
    if (buf_read_file(&text, buf_str(&path), 1 << 20) < 0) {
        int e = errno;
        buf_free(&path);
        buf_free(&text);
        return e == ENOENT ? 1 : (buf_printf(err, "cannot read the journal: %s", strerror(e)), -1);
    }
    cJSON *o = cJSON_Parse(buf_str(&text));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "written");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "parts"), *p;
    int rc = cJSON_IsNumber(w) && cJSON_IsArray(a) && w->valuedouble >= 0 &&
                     w->valuedouble <= JOURNAL_MAX
                 ? 0
                 : -1;
    j->written = rc == 0 ? (int64_t)w->valuedouble : 0;
    cJSON_ArrayForEach(p, a)
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(p, "size");
        const cJSON *cp = cJSON_GetObjectItemCaseSensitive(p, "copied");
        struct jpart *np = realloc(j->p, sizeof *np * (size_t)(j->n + 1));
        if (np)
            j->p = np;
        int num;
        /* only this shard's own parts, with sizes a file can have */
        if (!np || !cJSON_IsString(nm) || !cJSON_IsNumber(sz) || !cJSON_IsNumber(cp) ||
            strchr(nm->valuestring, '/') || part_name(nm->valuestring, &num) != strlen(shard) ||
            strncmp(nm->valuestring, shard, strlen(shard)) != 0 || sz->valuedouble < 0 ||
            sz->valuedouble > JOURNAL_MAX || cp->valuedouble < 0 ||
            cp->valuedouble > sz->valuedouble) {
            rc = -1;
            break;
        }
        snprintf(j->p[j->n].name, sizeof j->p[j->n].name, "%s", nm->valuestring);
        j->p[j->n].size = (int64_t)sz->valuedouble;
        j->p[j->n].copied = (int64_t)cp->valuedouble;
        j->n++;
    }
    cJSON_Delete(o);
    int64_t sum = 0;
    for (int i = 0; rc == 0 && i < j->n; i++)
        sum += j->p[i].copied;
    if (rc == 0 && sum != j->written)
        rc = -1; /* what was written is what was copied */
    if (rc < 0) {
        buf_printf(err, "%s is damaged: the shard cannot be continued safely", buf_str(&path));
        free(j->p);
        j->p = NULL;
    }
    buf_free(&path);
    buf_free(&text);
    return rc;
}

struct partnum {
    char *name;
    int num;
};

static int by_num(const void *a, const void *b)
{
    return ((const struct partnum *)a)->num - ((const struct partnum *)b)->num;
}

/* A new journal from the parts on disk: in order, none copied. */
static int journal_new(const char *dir, const char *shard, struct journal *j, struct buf *err)
{
    memset(j, 0, sizeof *j);
    DIR *d = opendir(dir);
    if (!d) {
        buf_printf(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    struct partnum *pn = NULL;
    int n = 0;
    struct dirent *e;
    size_t sl = strlen(shard);
    while ((e = readdir(d))) {
        int num;
        size_t l = part_name(e->d_name, &num);
        if (l != sl || strncmp(e->d_name, shard, sl) != 0)
            continue;
        struct partnum *np = realloc(pn, sizeof *np * (size_t)(n + 1));
        if (!np)
            break;
        pn = np;
        pn[n].name = strdup(e->d_name);
        pn[n++].num = num;
    }
    closedir(d);
    qsort(pn, (size_t)n, sizeof *pn, by_num);
    int rc = n ? 0 : -1;
    if (!n)
        buf_printf(err, "%s: no parts (%s.partNN) in %s", shard, shard, dir);
    j->p = calloc((size_t)(n ? n : 1), sizeof *j->p);
    if (n && pn[0].num > 1) { /* the hub's parts count from 01 (split's from 00) */
        buf_printf(err, "%s: its first part is %s: the ones before it are missing", shard,
                   pn[0].name);
        rc = -1;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        if (pn[i].num != pn[0].num + i) {
            buf_printf(err, "%s: part %d is missing (after %s)", shard, pn[0].num + i,
                       pn[i - 1].name);
            rc = -1;
            break;
        }
        struct buf path = BUF_INIT;
        struct stat st;
        path_of(&path, dir, pn[i].name, "");
        if (lstat(buf_str(&path), &st) < 0 || !S_ISREG(st.st_mode)) { /* no symlink */
            buf_printf(err, "%s: not a file", buf_str(&path));
            rc = -1;
        }
        buf_free(&path);
        snprintf(j->p[i].name, sizeof j->p[i].name, "%s", pn[i].name);
        j->p[i].size = st.st_size;
        j->n++;
    }
    for (int i = 0; i < n; i++)
        free(pn[i].name);
    free(pn);
    return rc;
}

static int64_t total_of(const struct journal *j)
{
    int64_t t = 0;
    for (int i = 0; i < j->n; i++)
        t += j->p[i].size;
    return t;
}

int assemble_progress(const char *dir, const char *shard, int64_t *written, int64_t *total)
{
    struct journal j;
    struct buf err = BUF_INIT;
    int rc = journal_load(dir, shard, &j, &err);
    buf_free(&err);
    if (rc == 0) {
        *written = j.written;
        *total = total_of(&j);
        free(j.p);
    }
    return rc;
}

/* Hashes [0, len) of fd into ctx (the part of the shard written before). */
static int hash_prefix(int fd, int64_t len, EVP_MD_CTX *ctx, char *buf)
{
    for (int64_t at = 0; at < len;) {
        size_t n = (size_t)(len - at < COPY_BUF ? len - at : COPY_BUF);
        ssize_t r = pread(fd, buf, n, at);
        if (r <= 0)
            return -1;
        EVP_DigestUpdate(ctx, buf, (size_t)r);
        at += r;
    }
    return 0;
}

/* One part, chunk by chunk, from where the journal says. */
static int copy_part(const char *dir, const char *shard, struct journal *j, int i, int sfd,
                     EVP_MD_CTX *ctx, char *buf, const struct assemble_opts *o, struct buf *err)
{
    struct jpart *p = &j->p[i];
    struct buf path = BUF_INIT;
    path_of(&path, dir, p->name, "");
    int pfd = open(buf_str(&path), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    int rc = 0;
    struct stat st;
    if (pfd >= 0 && (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != p->size)) {
        buf_printf(err, "%s is not the file the journal recorded (%lld bytes): put the part "
                        "back, or remove %s%s to start this shard over",
                   buf_str(&path), (long long)p->size, shard, ASSEMBLE_JOURNAL_SUFFIX);
        rc = -1;
        goto out;
    }
    if (pfd < 0) {
        buf_printf(err, "%s: %s (the journal counts %lld of its %lld bytes copied)",
                   buf_str(&path), strerror(errno), (long long)p->copied, (long long)p->size);
        rc = -1;
        goto out;
    }
    bool can_punch = !o->keep_parts;
    if (can_punch && p->copied > 0 &&
        fallocate(pfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, p->copied) < 0)
        can_punch = false; /* released when the part is deleted */
    while (p->copied < p->size) {
        if (o->cancel && atomic_load(o->cancel)) {
            rc = 1;
            goto out;
        }
        int64_t n = p->size - p->copied < o->chunk ? p->size - p->copied : o->chunk;
        for (int64_t k = 0; k < n;) {
            size_t step = (size_t)(n - k < COPY_BUF ? n - k : COPY_BUF);
            ssize_t r = pread(pfd, buf, step, p->copied + k);
            if (r <= 0) {
                buf_printf(err, "cannot read %s: %s", buf_str(&path), r < 0 ? strerror(errno) : "short");
                rc = -1;
                goto out;
            }
            int e = fdio_pwrite_all(sfd, buf, (size_t)r, (off_t)(j->written + k));
            if (e) {
                buf_printf(err, "cannot write %s.incomplete: %s%s", shard, strerror(e),
                           e == ENOSPC ? " (free space and run assemble again: it continues)" : "");
                rc = -1;
                goto out;
            }
            EVP_DigestUpdate(ctx, buf, (size_t)r);
            k += r;
        }
        if (fdatasync(sfd) < 0) {
            buf_printf(err, "cannot sync %s.incomplete: %s", shard, strerror(errno));
            rc = -1;
            goto out;
        }
        p->copied += n;
        j->written += n;
        if (journal_save(dir, shard, j, err) < 0) {
            rc = -1;
            goto out;
        }
        if (can_punch && fallocate(pfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                   p->copied - n, n) < 0)
            can_punch = false;
        if (o->on_progress)
            o->on_progress(shard, j->written, total_of(j), o->arg);
    }
    if (!o->keep_parts && unlink(buf_str(&path)) < 0 && errno != ENOENT) {
        buf_printf(err, "cannot remove %s: %s", buf_str(&path), strerror(errno));
        rc = -1;
    }
out:
    if (pfd >= 0)
        close(pfd);
    buf_free(&path);
    return rc;
}

/* The shard already under its own name: 2 when that is the end of an
 * earlier run (a crash after the rename, or `download` fetched it again after
 * a failed one) and the stale journal is removed; -1 when parts sit beside a
 * whole shard, which is the operator's to sort out; 0 nothing in place. */
static int shard_placed(const char *dir, const char *shard, bool journal, struct buf *err)
{
    struct buf fin = BUF_INIT, inc = BUF_INIT;
    path_of(&fin, dir, shard, "");
    path_of(&inc, dir, shard, ".incomplete");
    struct stat st;
    int rc = 0;
    if (stat(buf_str(&fin), &st) == 0) {
        if (journal && access(buf_str(&inc), F_OK) < 0) {
            struct buf jp = BUF_INIT;
            path_of(&jp, dir, shard, ASSEMBLE_JOURNAL_SUFFIX);
            unlink(buf_str(&jp));
            buf_free(&jp);
            rc = 2;
        } else {
            buf_printf(err, "%s is already whole beside its parts: `dsv41-top verify` tells "
                            "whether it is good; then remove the parts (or the shard, and run "
                            "assemble again)",
                       buf_str(&fin));
            rc = -1;
        }
    }
    buf_free(&fin);
    buf_free(&inc);
    return rc;
}

int assemble_shard(const char *dir, const char *shard, const char *want_sha256,
                   const struct assemble_opts *o, struct buf *err)
{
    struct journal j;
    int jr = journal_load(dir, shard, &j, err);
    if (jr < 0)
        return -1;
    int placed = shard_placed(dir, shard, jr == 0, err);
    if (placed != 0) {
        free(j.p);
        return placed;
    }
    if (jr == 1) {
        if (journal_new(dir, shard, &j, err) < 0) {
            free(j.p);
            return -1;
        }
        struct statvfs v;
        int64_t need = o->keep_parts ? total_of(&j) : 0;
        for (int i = 0; i < j.n && !o->keep_parts; i++) /* a chunk, at most a part */
            need = j.p[i].size > need ? j.p[i].size : need;
        need = !o->keep_parts && need > o->chunk ? o->chunk : need;
        if (statvfs(dir, &v) == 0 && (int64_t)v.f_bavail * (int64_t)v.f_frsize < need) {
            buf_printf(err, "%s: needs %lld bytes free to rebuild, %s has %lld", shard,
                       (long long)need, dir, (long long)((int64_t)v.f_bavail * (int64_t)v.f_frsize));
            free(j.p);
            return -1;
        }
        if (journal_save(dir, shard, &j, err) < 0) {
            free(j.p);
            return -1;
        }
    }
    struct buf spath = BUF_INIT, fin = BUF_INIT;
    path_of(&spath, dir, shard, ".incomplete");
    path_of(&fin, dir, shard, "");
    int sfd = open(buf_str(&spath), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    char *buf = malloc(COPY_BUF);
    int rc = 0;
    if (sfd < 0 || !ctx || !buf) {
        buf_printf(err, "cannot open %s: %s", buf_str(&spath), strerror(errno));
        rc = -1;
        goto out;
    }
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    /* what was written after the last durable point is copied again */
    if (ftruncate(sfd, j.written) < 0 || hash_prefix(sfd, j.written, ctx, buf) < 0) {
        buf_printf(err, "cannot read back %s: %s", buf_str(&spath), strerror(errno));
        rc = -1;
        goto out;
    }
    for (int i = 0; i < j.n && rc == 0; i++) {
        if (j.p[i].copied == j.p[i].size) { /* done: its file may still be there */
            struct buf pp = BUF_INIT;
            path_of(&pp, dir, j.p[i].name, "");
            if (!o->keep_parts)
                unlink(buf_str(&pp));
            buf_free(&pp);
            continue;
        }
        rc = copy_part(dir, shard, &j, i, sfd, ctx, buf, o, err);
    }
    if (rc)
        goto out;
    unsigned char d[32];
    unsigned int dl = 0;
    char hex[65];
    EVP_DigestFinal_ex(ctx, d, &dl);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    if (want_sha256[0] && strcmp(hex, want_sha256) != 0) {
        buf_printf(err, "%s rebuilt from its parts has sha256 %s, sha256-manifest.txt says %s: a "
                        "part was damaged; `dsv41-top download --include %s` fetches the bad "
                        "parts again",
                   shard, hex, want_sha256, shard);
        rc = -1;
        goto out;
    }
    if (fsync(sfd) < 0 || rename(buf_str(&spath), buf_str(&fin)) < 0) {
        buf_printf(err, "cannot put %s in place: %s", buf_str(&fin), strerror(errno));
        rc = -1;
        goto out;
    }
    struct buf jp = BUF_INIT;
    path_of(&jp, dir, shard, ASSEMBLE_JOURNAL_SUFFIX);
    unlink(buf_str(&jp));
    fsync_dir(dir);
    buf_free(&jp);
out:
    if (sfd >= 0)
        close(sfd);
    EVP_MD_CTX_free(ctx);
    free(buf);
    free(j.p);
    buf_free(&spath);
    buf_free(&fin);
    return rc;
}
