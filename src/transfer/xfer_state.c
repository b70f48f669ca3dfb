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

#include "procid.h"
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

void xfer_state_forget(struct xfer_state_file *f)
{
    ranges_clear(&f->landed);
    ranges_clear(&f->synced);
}

void xfer_state_boot(char out[XFER_BOOT_LEN])
{
    procid_boot("/proc", out, XFER_BOOT_LEN);
}

void xfer_state_free(struct xfer_state *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->f[i].path);
        ranges_free(&s->f[i].landed);
        ranges_free(&s->f[i].synced);
    }
    free(s->f);
    s->f = NULL;
    s->n = 0;
}

void xfer_state_format(struct xfer_state *s, bool durable, struct buf *out)
{
    if (!s->boot_read) { /* once: the boot does not change while we run */
        xfer_state_boot(s->boot_now);
        s->boot_read = true;
    }
    buf_printf(out, "dsv41-copy-state 2\nboot %s %" PRIu64 "\n", s->boot_now[0] ? s->boot_now : "-",
               ++s->seq);
    for (int i = 0; i < s->n; i++) {
        const struct xfer_state_file *f = &s->f[i];
        const struct ranges *rs = durable ? &f->synced : &f->landed;
        char hex[65] = "-";
        if (f->has_sha)
            verify_hex(f->sha, hex);
        int nr = f->verified ? 0 : rs->n;
        buf_printf(out, "file %" PRId64 " %" PRId64 " %s %d %d ", f->size, f->mtime_ns, hex,
                   f->verified ? 1 : 0, nr);
        wire_path_put(out, f->path);
        buf_puts(out, "\n");
        for (int k = 0; k < nr; k++)
            buf_printf(out, "range %" PRId64 " %" PRId64 "\n", rs->r[k].a, rs->r[k].b);
    }
}

/* fd's data on the disk; 0 or errno. */
static int sync_fd(int fd)
{
    return fsync(fd) < 0 ? errno : 0;
}

int xfer_state_write(const char *dir, const char *name, const struct buf *text, bool durable,
                     struct buf *err)
{
    char tmp[4300], path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp); /* whatever is in its place (a link) is not written through */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        buf_printf(err, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t off = 0;
    int e = 0;
    while (off < text->len && !e) {
        ssize_t w = write(fd, text->data + off, text->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            e = w < 0 ? errno : EIO;
        else
            off += (size_t)w;
    }
    /* durable: the text on the disk before its name is (else a power cut
     * may leave the name on an empty file), and the name after */
    if (!e && durable)
        e = sync_fd(fd);
    if (close(fd) < 0 && !e)
        e = errno;
    if (e) {
        buf_printf(err, "%s: %s", tmp, strerror(e));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        buf_printf(err, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    int dfd = durable ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) {
        e = sync_fd(dfd);
        close(dfd);
    } else if (durable) {
        e = errno;
    }
    if (e) {
        buf_printf(err, "%s: %s", dir, strerror(e));
        return -1;
    }
    return 0;
}

static int damaged(struct xfer_state *s, struct buf *err, int line, const char *why)
{
    buf_printf(err, "line %d: %s", line, why);
    xfer_state_free(s);
    return -1;
}

/* "boot ID SEQ" (version 2's second line) into s; false when malformed. */
static bool boot_line(const char *line, struct xfer_state *s)
{
    if (strncmp(line, "boot ", 5) != 0)
        return false;
    size_t l = strcspn(line + 5, " ");
    const char *q = line + 5 + l;
    int64_t seq;
    if (l == 0 || l >= XFER_BOOT_LEN || *q != ' ')
        return false;
    q++;
    /* a write a second for 30 million years: a larger one is no state of ours */
    if (!wire_num(&q, &seq, true) || seq < 0 || seq > XFER_STATE_MAX_SEQ)
        return false;
    memcpy(s->boot, line + 5, l);
    s->boot[l] = '\0';
    if (strcmp(s->boot, "-") == 0) /* written where the boot was not known */
        s->boot[0] = '\0';
    s->seq = (uint64_t)seq;
    return true;
}

int xfer_state_load(const char *dir, const char *name_of, struct xfer_state *s, struct buf *err)
{
    memset(s, 0, sizeof *s);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name_of);
    struct buf text = BUF_INIT;
    /* never blocks on a FIFO, never follows a link: a regular file or an error */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 1;
    struct stat sb;
    /* ours alone: another user's file (planted in a shared directory) or a
     * hard link to one vouches for nothing */
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > (64 << 20) ||
        sb.st_uid != geteuid() || sb.st_nlink != 1) {
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
    int version = strncmp(p, "dsv41-copy-state 1\n", 19) == 0   ? 1
                  : strncmp(p, "dsv41-copy-state 2\n", 19) == 0 ? 2
                                                               : 0;
    if (!version) {
        buf_free(&text);
        return damaged(s, err, 1, "not a dsv41-copy-state 1 or 2");
    }
    p += 19;
    if (version == 2) {
        size_t n = strcspn(p, "\n");
        ln++;
        if (n >= sizeof line || p[n] != '\n') {
            buf_free(&text);
            return damaged(s, err, ln, "no boot line");
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + 1;
        if (!boot_line(line, s)) {
            buf_free(&text);
            return damaged(s, err, ln, "a malformed boot line");
        }
    }
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

int xfer_state_resume(const char *dir, struct xfer_state *s, struct buf *note)
{
    struct xfer_state d, l;
    struct buf ed = BUF_INIT, el = BUF_INIT;
    int rd = xfer_state_load(dir, XFER_STATE_NAME, &d, &ed);
    int rl = xfer_state_load(dir, XFER_STATE_LIVE, &l, &el);
    char boot[XFER_BOOT_LEN];
    xfer_state_boot(boot);
    /* the live file speaks for the page cache of the boot that wrote it */
    bool live = rl == 0 && boot[0] && strcmp(l.boot, boot) == 0 && (rd != 0 || l.seq > d.seq);
    if (rd < 0)
        buf_printf(note, "%s is damaged (%s)%s", XFER_STATE_NAME, buf_str(&ed),
                   live ? "" : ": starting over");
    else if (rl == 0 && !live && l.seq > d.seq && (!boot[0] || strcmp(l.boot, boot) != 0))
        buf_printf(note, "this node restarted since the copy's last state: only what had reached "
                         "its disk counts, the rest is sent again");
    uint64_t seq = (rd == 0 && d.seq > l.seq) || rl != 0 ? d.seq : l.seq;
    int rc = 1;
    if (live) {
        *s = l; /* synced stays empty: the first sync of this run says what is on the disk */
        memset(&l, 0, sizeof l);
        rc = 0;
    } else if (rd == 0) {
        *s = d;
        memset(&d, 0, sizeof d);
        for (int i = 0; i < s->n; i++)
            if (ranges_copy(&s->f[i].synced, &s->f[i].landed) < 0)
                ranges_clear(&s->f[i].landed); /* out of memory: vouches for nothing */
        rc = 0;
    } else {
        memset(s, 0, sizeof *s);
        rc = rd < 0 ? -1 : 1;
    }
    if (rd == 0 || rl == 0)
        s->seq = seq > s->seq ? seq : s->seq;
    if (rd == 0)
        xfer_state_free(&d);
    if (rl == 0)
        xfer_state_free(&l);
    buf_free(&ed);
    buf_free(&el);
    return rc;
}
