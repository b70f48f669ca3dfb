/* xfer_state: see xfer_state.h. */
#include "xfer_state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verify.h"
#include "wire.h"
#include "xfer_wire.h"

struct xfer_state_file *xfer_state_find(struct xfer_state *s, const char *path)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->f[i].path, path) == 0)
            return &s->f[i];
    return NULL;
}

struct xfer_state_file *xfer_state_get(struct xfer_state *s, const char *path)
{
    struct xfer_state_file *f = xfer_state_find(s, path);
    if (f)
        return f;
    if (s->n >= XFER_MAX_FILES)
        return NULL;
    if (s->n % 64 == 0) {
        struct xfer_state_file *g = realloc(s->f, (size_t)(s->n + 64) * sizeof *g);
        if (!g)
            return NULL;
        s->f = g;
    }
    f = &s->f[s->n];
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(path)))
        return NULL;
    s->n++;
    return f;
}

void xfer_state_free(struct xfer_state *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->f[i].path);
        ranges_free(&s->f[i].landed);
    }
    free(s->f);
    s->f = NULL;
    s->n = 0;
}

void xfer_state_format(const struct xfer_state *s, struct buf *out)
{
    buf_puts(out, "dsv41-copy-state 1\n");
    for (int i = 0; i < s->n; i++) {
        const struct xfer_state_file *f = &s->f[i];
        char hex[65] = "-";
        if (f->has_sha)
            verify_hex(f->sha, hex);
        int nr = f->verified ? 0 : f->landed.n;
        buf_printf(out, "file %" PRId64 " %" PRId64 " %s %d %d ", f->size, f->mtime_ns, hex,
                   f->verified ? 1 : 0, nr);
        wire_path_put(out, f->path);
        buf_puts(out, "\n");
        for (int k = 0; k < nr; k++)
            buf_printf(out, "range %" PRId64 " %" PRId64 "\n", f->landed.r[k].a, f->landed.r[k].b);
    }
}

int xfer_state_write(const char *dir, const struct buf *text, struct buf *err)
{
    char tmp[4300], path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, XFER_STATE_NAME);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp); /* whatever is in its place (a link) is not written through */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        buf_printf(err, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t off = 0;
    while (off < text->len) {
        ssize_t w = write(fd, text->data + off, text->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            buf_printf(err, "%s: %s", tmp, strerror(w < 0 ? errno : EIO));
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        buf_printf(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int damaged(struct xfer_state *s, struct buf *err, int line, const char *why)
{
    buf_printf(err, "%s:%d: %s", XFER_STATE_NAME, line, why);
    xfer_state_free(s);
    return -1;
}

int xfer_state_load(const char *dir, struct xfer_state *s, struct buf *err)
{
    memset(s, 0, sizeof *s);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, XFER_STATE_NAME);
    struct buf text = BUF_INIT;
    /* never blocks on a FIFO, never follows a link: a regular file or an error */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 1;
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > (64 << 20)) {
        buf_printf(err, "%s: %s", path, fd < 0 ? strerror(errno) : "not a regular file of ours");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char chunk[65536];
    for (ssize_t k; (k = read(fd, chunk, sizeof chunk)) != 0;) {
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 || buf_append(&text, chunk, (size_t)k) < 0 || text.len > (64u << 20)) {
            buf_printf(err, "%s: unreadable", path);
            close(fd);
            buf_free(&text);
            return -1;
        }
    }
    close(fd);
    if (text.len == 0) { /* a crash before the first bytes reached the disk */
        buf_free(&text);
        return 1;
    }
    const char *p = buf_str(&text);
    int rc = 0, ln = 1, want_ranges = 0;
    struct xfer_state_file *cur = NULL;
    char line[8192], name[4096];
    if (strncmp(p, "dsv41-copy-state 1\n", 19) != 0) {
        buf_free(&text);
        return damaged(s, err, 1, "not a dsv41-copy-state 1");
    }
    p += 19;
    while (*p && rc == 0) {
        ln++;
        size_t n = strcspn(p, "\n");
        if (n >= sizeof line || p[n] != '\n') {
            rc = damaged(s, err, ln, "a line too long or not ended");
            break;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + 1;
        const char *q = line;
        int64_t a, b, sz, mt, ver, nr;
        if (strncmp(q, "range ", 6) == 0) {
            q += 6;
            if (!cur || want_ranges <= 0 || !wire_num(&q, &a, false) || !wire_num(&q, &b, true) ||
                a < 0 || b <= a || b > cur->size || ranges_add(&cur->landed, a, b) < 0) {
                rc = damaged(s, err, ln, "a range out of place or out of bounds");
                break;
            }
            want_ranges--;
            continue;
        }
        if (strncmp(q, "file ", 5) != 0 || want_ranges) {
            rc = damaged(s, err, ln, "malformed");
            break;
        }
        q += 5;
        unsigned char sha[32];
        bool has = false;
        if (!wire_num(&q, &sz, false) || sz < 0 || sz > XFER_MAX_SIZE ||
            !wire_num(&q, &mt, false)) {
            rc = damaged(s, err, ln, "malformed size or time");
            break;
        }
        if (q[0] == '-' && q[1] == ' ')
            q += 2;
        else if (wire_hex32(&q, sha, false))
            has = true;
        else {
            rc = damaged(s, err, ln, "malformed sha256");
            break;
        }
        if (!wire_num(&q, &ver, false) || (ver != 0 && ver != 1) || !wire_num(&q, &nr, false) ||
            nr < 0 || nr > XFER_STATE_MAX_RANGES || !wire_path_get(q, name, sizeof name) ||
            xfer_state_find(s, name) || !(cur = xfer_state_get(s, name))) {
            rc = damaged(s, err, ln, "malformed, or a file listed twice");
            break;
        }
        cur->size = sz;
        cur->mtime_ns = mt;
        cur->has_sha = has;
        if (has)
            memcpy(cur->sha, sha, 32);
        cur->verified = ver == 1;
        want_ranges = (int)nr;
    }
    if (rc == 0 && want_ranges)
        rc = damaged(s, err, ln, "ranges missing at the end");
    buf_free(&text);
    return rc;
}
