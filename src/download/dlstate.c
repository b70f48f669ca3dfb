/* dlstate: see dlstate.h. */
#include "dlstate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procid.h"

void dl_boot_id(char out[64])
{
    procid_boot("/proc", out, 64);
}

/* Sizes beyond this are no file of a checkpoint (2^50: a PiB); it keeps
 * every sum of them far from int64's end. */
#define STATE_MAX_SIZE ((double)(1LL << 50))
/* ranges per file: a download leaves a few per connection; more is damage
 * (and would make merging them slow) */
#define STATE_MAX_RANGES 100000

/* A hash's lowercase hex of exactly n digits into out; "" when it is not
 * one (a state file is not trusted to name a sum). */
static void load_hex(const cJSON *v, char *out, size_t n)
{
    out[0] = '\0';
    if (!cJSON_IsString(v) || strlen(v->valuestring) != n ||
        strspn(v->valuestring, "0123456789abcdef") != n)
        return;
    memcpy(out, v->valuestring, n + 1);
}

static int load_ranges(const cJSON *arr, int64_t size, struct ranges *r)
{
    const cJSON *e;
    if (cJSON_GetArraySize(arr) > STATE_MAX_RANGES)
        return -1;
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1);
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) || a->valuedouble < 0 ||
            b->valuedouble < a->valuedouble || b->valuedouble > (double)size)
            return -1;
        if (ranges_add(r, (int64_t)a->valuedouble, (int64_t)b->valuedouble) < 0)
            return -1;
    }
    return 0;
}

int dl_state_load(const char *dir, struct dl_state *s, struct buf *err)
{
    memset(s, 0, sizeof *s);
    struct buf path = BUF_INIT, text = BUF_INIT;
    buf_printf(&path, "%s/%s", dir, DL_STATE_NAME);
    int got = buf_read_file(&text, buf_str(&path), 64u << 20);
    if (got < 0 || text.len == 0) {
        int e = got < 0 ? errno : ENOENT;
        buf_free(&text);
        /* none, or empty: a power cut after a rename whose data never reached
         * the disk (a non-durable save); complete files are checked again */
        if (e == ENOENT) {
            buf_free(&path);
            return 1;
        }
        buf_printf(err, "cannot read %s: %s", buf_str(&path), strerror(e));
        buf_free(&path);
        return -1;
    }
    cJSON *j = cJSON_Parse(buf_str(&text));
    const cJSON *repo = cJSON_GetObjectItemCaseSensitive(j, "repo");
    const cJSON *commit = cJSON_GetObjectItemCaseSensitive(j, "commit");
    const cJSON *boot = cJSON_GetObjectItemCaseSensitive(j, "boot_id");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(j, "files");
    int rc = -1;
    if (!cJSON_IsString(repo) || !cJSON_IsString(commit) || strlen(commit->valuestring) != 40 ||
        strspn(commit->valuestring, "0123456789abcdef") != 40 || !cJSON_IsArray(files))
        goto bad;
    snprintf(s->repo, sizeof s->repo, "%s", repo->valuestring);
    snprintf(s->commit, sizeof s->commit, "%s", commit->valuestring);
    snprintf(s->boot_id, sizeof s->boot_id, "%s", cJSON_IsString(boot) ? boot->valuestring : "");
    const cJSON *f;
    int nfiles = 0;
    cJSON_ArrayForEach(f, files)
    {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(f, "path");
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(f, "size");
        if (!cJSON_IsString(p) || !cJSON_IsNumber(sz) || sz->valuedouble < 0 ||
            sz->valuedouble > STATE_MAX_SIZE || ++nfiles > 1000000)
            goto bad;
        struct dl_state_file *e = dl_state_get(s, p->valuestring, (int64_t)sz->valuedouble);
        if (!e)
            goto bad;
        e->verified = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "verified"));
        const cJSON *parts = cJSON_GetObjectItemCaseSensitive(f, "parts");
        e->parts = cJSON_IsNumber(parts) && parts->valuedouble >= 0 && parts->valuedouble < 1e4
                       ? (int)parts->valuedouble
                       : 0;
        load_hex(cJSON_GetObjectItemCaseSensitive(f, "sha256"), e->sha256, 64);
        load_hex(cJSON_GetObjectItemCaseSensitive(f, "sha1"), e->sha1, 40);
        /* a string: nanoseconds since 1970 are past a double's 2^53 */
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(f, "mtime_ns");
        char *end = NULL;
        errno = 0;
        e->mtime_ns = cJSON_IsString(mt) ? strtoll(mt->valuestring, &end, 10) : -1;
        if (!cJSON_IsString(mt) || end == mt->valuestring || *end || errno || e->mtime_ns < 0)
            e->mtime_ns = -1;
        if (load_ranges(cJSON_GetObjectItemCaseSensitive(f, "landed"), e->size, &e->landed) < 0 ||
            load_ranges(cJSON_GetObjectItemCaseSensitive(f, "durable"), e->size, &e->durable) <
                0)
            goto bad;
    }
    rc = 0;
bad:
    if (rc < 0) {
        buf_printf(err, "%s is damaged: remove it to start over (complete files are kept and "
                        "checked again)",
                   buf_str(&path));
        dl_state_free(s);
    }
    cJSON_Delete(j);
    buf_free(&text);
    buf_free(&path);
    return rc;
}

static cJSON *ranges_json(const struct ranges *r)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < r->n; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber((double)r->r[i].a));
        cJSON_AddItemToArray(p, cJSON_CreateNumber((double)r->r[i].b));
        cJSON_AddItemToArray(a, p);
    }
    return a;
}

char *dl_state_json(const struct dl_state *s)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "version", 1);
    cJSON_AddStringToObject(j, "repo", s->repo);
    cJSON_AddStringToObject(j, "commit", s->commit);
    cJSON_AddStringToObject(j, "boot_id", s->boot_id);
    cJSON *files = cJSON_AddArrayToObject(j, "files");
    for (int i = 0; i < s->n; i++) {
        const struct dl_state_file *f = &s->f[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", f->path);
        cJSON_AddNumberToObject(o, "size", (double)f->size);
        cJSON_AddBoolToObject(o, "verified", f->verified);
        if (f->parts)
            cJSON_AddNumberToObject(o, "parts", f->parts);
        if (f->verified && f->sha256[0])
            cJSON_AddStringToObject(o, "sha256", f->sha256);
        if (f->verified && f->sha1[0])
            cJSON_AddStringToObject(o, "sha1", f->sha1);
        if (f->verified && (f->sha256[0] || f->sha1[0])) {
            char mt[24];
            snprintf(mt, sizeof mt, "%lld", (long long)f->mtime_ns);
            cJSON_AddStringToObject(o, "mtime_ns", mt);
        }
        if (!f->verified) {
            cJSON_AddItemToObject(o, "landed", ranges_json(&f->landed));
            cJSON_AddItemToObject(o, "durable", ranges_json(&f->durable));
        }
        cJSON_AddItemToArray(files, o);
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return text;
}

int dl_state_write(const char *dir, const char *text, bool durable, struct buf *err)
{
    struct buf path = BUF_INIT, tmp = BUF_INIT;
    buf_printf(&path, "%s/%s", dir, DL_STATE_NAME);
    buf_printf(&tmp, "%s.tmp", buf_str(&path));
    int rc = -1, e = ENOMEM;
    int fd = text ? open(buf_str(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)
                  : -1;
    if (fd >= 0) {
        size_t len = strlen(text), off = 0;
        while (off < len) {
            ssize_t w = write(fd, text + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        e = errno;
        bool ok = off == len && (!durable || fsync(fd) == 0);
        if (!ok && off == len)
            e = errno;
        close(fd);
        if (ok && rename(buf_str(&tmp), buf_str(&path)) == 0)
            rc = 0;
        else if (ok)
            e = errno;
    } else if (text) {
        e = errno;
    }
    if (rc < 0) {
        buf_printf(err, "cannot write %s: %s", buf_str(&path), strerror(e));
        unlink(buf_str(&tmp));
    }
    buf_free(&path);
    buf_free(&tmp);
    return rc;
}

int dl_state_save(const char *dir, const struct dl_state *s, bool durable, struct buf *err)
{
    char *text = dl_state_json(s);
    int rc = dl_state_write(dir, text, durable, err);
    free(text);
    return rc;
}

struct dl_state_file *dl_state_get(struct dl_state *s, const char *path, int64_t size)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->f[i].path, path) == 0) {
            if (s->f[i].size != size) { /* another file now: from nothing */
                s->f[i].size = size;
                s->f[i].verified = false;
                s->f[i].sha256[0] = s->f[i].sha1[0] = '\0';
                ranges_clear(&s->f[i].landed);
                ranges_clear(&s->f[i].durable);
            }
            return &s->f[i];
        }
    struct dl_state_file *nf = realloc(s->f, sizeof *nf * (size_t)(s->n + 1));
    if (!nf)
        return NULL;
    s->f = nf;
    struct dl_state_file *f = &s->f[s->n];
    memset(f, 0, sizeof *f);
    f->path = strdup(path);
    if (!f->path)
        return NULL;
    f->size = size;
    s->n++;
    return f;
}

void dl_state_free(struct dl_state *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->f[i].path);
        ranges_free(&s->f[i].landed);
        ranges_free(&s->f[i].durable);
    }
    free(s->f);
    memset(s, 0, sizeof *s);
}

int dl_state_lock(const char *dir, struct buf *err)
{
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/%s", dir, DL_LOCK_NAME);
    int fd = open(buf_str(&path), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    int rc = 0;
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
        char pid[32] = "";
        if (fd >= 0 && pread(fd, pid, sizeof pid - 1, 0) > 0)
            pid[strcspn(pid, "\n")] = '\0';
        buf_printf(err, "another download is writing %s%s%s%s: let it finish, or stop it first",
                   dir, pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "");
        rc = -1;
        if (fd >= 0)
            close(fd);
    } else {
        char pid[32];
        int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
            /* the lock holds; only the message would lack the PID */
        }
    }
    buf_free(&path);
    return rc;
}

long dl_state_lock_holder(const char *dir)
{
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/%s", dir, DL_LOCK_NAME);
    struct stat st;
    int ok = stat(buf_str(&path), &st);
    buf_free(&path);
    if (ok < 0)
        return 0;
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    /* "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" */
    char line[256];
    long holder = 0;
    while (!holder && fgets(line, sizeof line, f)) {
        char kind[16], mode[16];
        long pid;
        unsigned maj, min;
        unsigned long long ino;
        if (sscanf(line, "%*[^:]: %15s %*s %15s %ld %x:%x:%llu", kind, mode, &pid, &maj, &min,
                   &ino) == 6 &&
            strcmp(kind, "FLOCK") == 0 && ino == (unsigned long long)st.st_ino &&
            maj == major(st.st_dev) && min == minor(st.st_dev))
            holder = pid;
    }
    fclose(f);
    return holder;
}
