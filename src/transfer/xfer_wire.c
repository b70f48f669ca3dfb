/* xfer_wire: see xfer_wire.h. */
#include "xfer_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"
#include "wire.h"

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void xfer_hdr_pack(const struct xfer_hdr *h, unsigned char out[XFER_HDR_LEN])
{
    put32(out, XFER_MAGIC);
    put32(out + 4, h->type);
    put32(out + 8, h->id);
    put32(out + 12, h->gen);
    put32(out + 16, (uint32_t)((uint64_t)h->off >> 32));
    put32(out + 20, (uint32_t)h->off);
    put32(out + 24, (uint32_t)((uint64_t)h->len >> 32));
    put32(out + 28, (uint32_t)h->len);
}

bool xfer_hdr_unpack(const unsigned char in[XFER_HDR_LEN], struct xfer_hdr *h)
{
    if (get32(in) != XFER_MAGIC)
        return false;
    h->type = get32(in + 4);
    h->id = get32(in + 8);
    h->gen = get32(in + 12);
    uint64_t off = (uint64_t)get32(in + 16) << 32 | get32(in + 20);
    uint64_t len = (uint64_t)get32(in + 24) << 32 | get32(in + 28);
    if (off > INT64_MAX || len > INT64_MAX)
        return false;
    h->off = (int64_t)off;
    h->len = (int64_t)len;
    return h->type >= XF_DATA && h->type <= XF_BYE;
}

void xfer_plan_format(const struct xfer_plan *p, struct buf *out)
{
    buf_puts(out, "dsv41-copy-plan 2\n");
    for (int i = 0; i < p->n; i++) {
        const struct xfer_file *f = &p->f[i];
        char hex[65] = "-";
        if (f->has_sha) {
            verify_hex(f->sha, hex);
        } else if (f->has_git) {
            memcpy(hex, "git:", 4);
            for (int k = 0; k < 20; k++)
                snprintf(hex + 4 + 2 * k, 3, "%02x", f->git[k]);
        }
        buf_printf(out, "%d %" PRId64 " %" PRId64 " %s ", i, f->size, f->mtime_ns, hex);
        wire_path_put(out, f->path);
        buf_puts(out, "\n");
    }
}

int xfer_plan_add(struct xfer_plan *p, const char *path, int64_t size, int64_t mtime_ns,
                  const unsigned char *sha)
{
    if (p->n >= XFER_MAX_FILES)
        return -1;
    if (p->n % 64 == 0) {
        struct xfer_file *f = realloc(p->f, (size_t)(p->n + 64) * sizeof *f);
        if (!f)
            return -1;
        p->f = f;
    }
    struct xfer_file *f = &p->f[p->n];
    memset(f, 0, sizeof *f);
    if (!(f->path = strdup(path)))
        return -1;
    f->size = size;
    f->mtime_ns = mtime_ns;
    if (sha) {
        f->has_sha = true;
        memcpy(f->sha, sha, 32);
    }
    p->n++;
    return 0;
}

void xfer_plan_free(struct xfer_plan *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->f[i].path);
    free(p->f);
    p->f = NULL;
    p->n = 0;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Why a path from the plan must not be written, or NULL. */
static const char *path_problem(const char *path)
{
    const char *why = verify_path_problem(path);
    if (why)
        return why;
    if (strstr(path, ".dsv41-") || strstr(path, ".incomplete"))
        return "a name of ours";
    /* one spelling per file: "./a" or "a//b" would be a second writer of it */
    if (strstr(path, "//") || strncmp(path, "./", 2) == 0 || strstr(path, "/./") ||
        strcmp(path, ".") == 0 || path[strlen(path) - 1] == '/' ||
        (strlen(path) >= 2 && strcmp(path + strlen(path) - 2, "/.") == 0))
        return "an empty or '.' part";
    if (strlen(path) > 1024)
        return "longer than 1024 bytes";
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return "a control character in the name";
    return NULL;
}

int xfer_plan_parse(const char *text, struct xfer_plan *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    const char *s = text;
    int version = strncmp(s, "dsv41-copy-plan 1\n", 18) == 0   ? 1
                  : strncmp(s, "dsv41-copy-plan 2\n", 18) == 0 ? 2
                                                              : 0;
    if (!version) {
        buf_puts(err, "the plan: not a dsv41-copy-plan 1 or 2");
        return -1;
    }
    s += 18;
    char line[8192], path[4096];
    for (int ln = 2; *s; ln++) {
        size_t n = strcspn(s, "\n");
        if (n >= sizeof line || s[n] != '\n') {
            buf_printf(err, "the plan:%d: too long or not ended", ln);
            goto bad;
        }
        memcpy(line, s, n);
        line[n] = '\0';
        s += n + 1;
        const char *q = line;
        int64_t id, size, mt;
        unsigned char sha[32], git[20];
        bool has = false, has_git = false;
        if (!wire_num(&q, &id, false) || id != p->n || !wire_num(&q, &size, false) || size < 0 ||
            size > XFER_MAX_SIZE || !wire_num(&q, &mt, false)) {
            buf_printf(err, "the plan:%d: malformed", ln);
            goto bad;
        }
        if (q[0] == '-' && q[1] == ' ') {
            q += 2;
        } else if (version >= 2 && strncmp(q, "git:", 4) == 0) {
            q += 4;
            if (!wire_hex(&q, git, 20, false)) {
                buf_printf(err, "the plan:%d: malformed git sha1", ln);
                goto bad;
            }
            has_git = true;
        } else if (wire_hex32(&q, sha, false)) {
            has = true;
        } else {
            buf_printf(err, "the plan:%d: malformed sha256", ln);
            goto bad;
        }
        const char *why = NULL;
        if (!wire_path_get(q, path, sizeof path) || (why = path_problem(path))) {
            buf_printf(err, "the plan:%d: a path refused (%s)", ln, why ? why : "malformed");
            goto bad;
        }
        if (xfer_plan_add(p, path, size, mt, has ? sha : NULL) < 0) {
            buf_printf(err, "the plan:%d: more than %d files", ln, XFER_MAX_FILES);
            goto bad;
        }
        p->f[p->n - 1].has_git = has_git;
        memcpy(p->f[p->n - 1].git, git, has_git ? 20 : 0);
    }
    /* a path twice would be two writers of one file */
    char **names = malloc((size_t)(p->n ? p->n : 1) * sizeof *names);
    if (!names) {
        buf_puts(err, "out of memory");
        goto bad;
    }
    for (int i = 0; i < p->n; i++)
        names[i] = p->f[i].path;
    qsort(names, (size_t)p->n, sizeof *names, cmp_path);
    for (int i = 1; i < p->n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            buf_printf(err, "the plan: %s listed twice", names[i]);
            free(names);
            goto bad;
        }
    free(names);
    return 0;
bad:
    xfer_plan_free(p);
    return -1;
}

static bool id_ok(int64_t id, int nfiles)
{
    return id >= 0 && id < nfiles;
}

void xfer_report_parse(const char *line, int nfiles, struct xfer_report *r)
{
    memset(r, 0, sizeof *r);
    r->kind = XR_TEXT;
    const char *s = line;
    int64_t a = 0, b = 0, c = 0;
    if (strncmp(s, "need ", 5) == 0) {
        s += 5;
        if (wire_num(&s, &a, false) && wire_num(&s, &b, false) && wire_num(&s, &c, true) &&
            id_ok(a, nfiles) && b >= 0 && c > b)
            *r = (struct xfer_report){.kind = XR_NEED, .id = a, .a = b, .b = c};
    } else if (strncmp(s, "ok ", 3) == 0) {
        s += 3;
        if (wire_num(&s, &a, true) && id_ok(a, nfiles))
            *r = (struct xfer_report){.kind = XR_OK, .id = a};
    } else if (strncmp(s, "bad ", 4) == 0 || strncmp(s, "fail ", 5) == 0) {
        bool bad = s[0] == 'b';
        s += bad ? 4 : 5;
        if (wire_num(&s, &a, false) && wire_num(&s, &b, true) && id_ok(a, nfiles) && b >= 0 &&
            b <= UINT32_MAX)
            *r = (struct xfer_report){.kind = bad ? XR_BAD : XR_FAIL, .id = a, .a = b};
    } else if (strncmp(s, "cores ", 6) == 0) {
        s += 6;
        if (wire_num(&s, &a, true) && a >= 1 && a <= 4096)
            *r = (struct xfer_report){.kind = XR_CORES, .a = a};
    } else if (strncmp(s, "progress ", 9) == 0) {
        s += 9;
        if (wire_num(&s, &a, true) && a >= 0)
            *r = (struct xfer_report){.kind = XR_PROGRESS, .a = a};
    } else if (strncmp(s, "end ", 4) == 0) {
        s += 4;
        if (wire_num(&s, &a, false) && wire_num(&s, &b, true) && a >= 0 && b >= 0)
            *r = (struct xfer_report){.kind = XR_END, .a = a, .b = b};
    } else if (strncmp(s, "listen ", 7) == 0 || strncmp(s, "refused ", 8) == 0) {
        bool listen = s[0] == 'l';
        s += listen ? 7 : 8;
        size_t n = strcspn(s, " ");
        if (n == 0 || n >= sizeof r->addr || strspn(s, "0123456789abcdefABCDEF.:") < n)
            return;
        struct xfer_report x = {.kind = listen ? XR_LISTEN : XR_REFUSED};
        memcpy(x.addr, s, n);
        s += n;
        if (listen) {
            if (*s != ' ')
                return;
            s++;
            if (!wire_num(&s, &a, true) || a < 1 || a > 65535)
                return;
            x.port = (int)a;
        } else if (*s) {
            return;
        }
        *r = x;
    }
}

const struct usage_doc xferd_doc = {
    "dsv41-xfer",
    "--dir DIR --plan FILE --token-file FILE --listen ADDR|ssh [--jobs N] [--dry-run]",
    "the receiving end of copy-to-peer, on a worker",
    "The helper dsv41-top copy-to-peer runs on a worker over ssh: it listens on ADDR (ssh: the "
    "address this ssh session came in on, from SSH_CONNECTION) for the head's streams, takes "
    "only those that present the token (the file is read and removed), writes each file into "
    "DIR, checks it against the plan's sums and reports in lines for the head (need, listen, "
    "ok, bad, fail, progress, end). What landed is kept in DIR/.dsv41-copy.live and "
    "DIR/.dsv41-copy.state, so a copy that is cut resumes. dsv41-top puts it into the "
    "worker's STATE_DIR/bin over sftp; it is static.",
    (const struct usage_exit[]){{0, "every file of the plan landed and matched"},
                                {1, "a file failed or the copy was interrupted (the next run "
                                    "resumes)"},
                                {2, "a usage error; the token, the plan or DIR could not be "
                                    "read or made"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--dir", "DIR", "where the files go (needed)"},
        {"--plan", "FILE", "the files, their sizes and sums, as the head wrote them (needed)"},
        {"--token-file", "FILE", "the one-time token the head's streams present (needed)"},
        {"--listen", "ADDR", "the address to listen on, or ssh (needed)"},
        {"--jobs", "N", "files found in place hashed at once (1 to 64, default 4)"},
        {"--dry-run", NULL, "report what is missing (need lines) and whether it fits, then exit"},
        {NULL, NULL, NULL}}};
