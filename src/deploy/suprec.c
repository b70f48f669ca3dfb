#include "suprec.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

static void count_cause(struct suprec *r, const char *cause)
{
    for (int i = 0; i < r->ncauses; i++)
        if (strcmp(r->causes[i].cause, cause) == 0) {
            r->causes[i].restarts++;
            return;
        }
    if (r->ncauses == SUPREC_CAUSES)
        return;
    text_copy_field(r->causes[r->ncauses].cause, sizeof r->causes[0].cause, cause, strlen(cause));
    r->causes[r->ncauses++].restarts = 1;
}

void suprec_parse(const char *text, time_t now, struct suprec *r)
{
    memset(r, 0, sizeof *r);
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        char line[600];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        p += n + (p[n] == '\n');
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL,
             *t3 = t2 ? strchr(t2 + 1, '\t') : NULL;
        if (!t3)
            continue; /* not a line of ours */
        *t1 = *t2 = *t3 = '\0';
        char *end;
        long long at = strtoll(line, &end, 10);
        if (*end || at <= 0)
            continue;
        const char *action = t1 + 1, *cause = t2 + 1, *what = t3 + 1;
        bool restart = strcmp(action, "restart") == 0;
        if (!restart && strcmp(action, "gave-up") != 0 && strcmp(action, "stopped") != 0)
            continue;
        r->gave_up = !restart;
        r->last_at = (time_t)at;
        if (restart) {
            count_cause(r, cause);
            if (now - (time_t)at < 3600 && r->nhour < SUPREC_HOUR_MAX)
                r->hour[r->nhour++] = (time_t)at;
        }
        time_t tt = (time_t)at;
        struct tm tm;
        localtime_r(&tt, &tm);
        char when[32], raw[700];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        snprintf(raw, sizeof raw, "%s %s: %s", when, action, what);
        text_clean(r->last, sizeof r->last, raw, strlen(raw));
    }
}

/* The file's last max bytes from a line's start: the record only grows,
 * and what counts (the last hour, the newest line) is at its end. */
static int read_tail(const char *path, size_t max, struct buf *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)max ? size - (off_t)max : 0;
    char chunk[65536];
    ssize_t n;
    if (lseek(fd, from, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    while ((n = read(fd, chunk, sizeof chunk)) > 0 && b->len < max)
        buf_append(b, chunk, (size_t)n);
    close(fd);
    if (from > 0) { /* the first line is cut: dropped */
        const char *nl = memchr(buf_str(b), '\n', b->len);
        size_t skip = nl ? (size_t)(nl - buf_str(b)) + 1 : b->len;
        memmove(b->data, b->data + skip, b->len - skip);
        b->len -= skip;
        b->data[b->len] = '\0';
    }
    return 0;
}

void suprec_load(const char *state_dir, time_t now, struct suprec *r)
{
    struct buf path = BUF_INIT, b = BUF_INIT;
    buf_printf(&path, "%s/%s", state_dir, SUPREC_FILE);
    if (read_tail(buf_str(&path), 1 << 20, &b) == 0)
        suprec_parse(buf_str(&b), now, r);
    else
        memset(r, 0, sizeof *r);
    buf_free(&path);
    buf_free(&b);
}

void suprec_mark_stop(const char *state_dir)
{
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/%s", state_dir, SUPREC_STOP_FILE);
    char line[64];
    int n = snprintf(line, sizeof line, "%lld %ld\n", (long long)time(NULL), (long)getppid());
    /* best effort: without it a supervisor may relaunch what was stopped on
     * purpose, which it then says; a stop must not fail for it */
    if (buf_write_file(buf_str(&path), line, (size_t)n, 0600) < 0 && errno != ENOENT)
        fprintf(stderr, "dsv41-top: cannot write %s: %s\n", buf_str(&path), strerror(errno));
    buf_free(&path);
}

bool suprec_last_stop(const char *state_dir, time_t *at, long *ppid)
{
    struct buf path = BUF_INIT, b = BUF_INIT;
    buf_printf(&path, "%s/%s", state_dir, SUPREC_STOP_FILE);
    long long t = 0;
    bool ok = buf_read_file(&b, buf_str(&path), 256) == 0 &&
              sscanf(buf_str(&b), "%lld %ld", &t, ppid) == 2 && t > 0;
    *at = (time_t)t;
    buf_free(&path);
    buf_free(&b);
    return ok;
}

/* One field of a line: no tab, no newline, no escape. */
static void field(char *out, size_t sz, const char *in)
{
    text_clean(out, sz, in, strlen(in));
    for (char *p = out; *p; p++)
        if (*p == '\t')
            *p = ' ';
}

int suprec_append(const char *state_dir, const char *action, const char *cause, const char *what,
                  struct buf *err)
{
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/%s", state_dir, SUPREC_FILE);
    int fd = open(buf_str(&path), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        buf_printf(err, "cannot write %s: %s", buf_str(&path), strerror(errno));
        buf_free(&path);
        return -1;
    }
    fchmod(fd, 0600); /* a file someone made wider is brought back */
    char a[24], c[24], w[480];
    field(a, sizeof a, action);
    field(c, sizeof c, cause);
    field(w, sizeof w, what);
    char line[600];
    int n = snprintf(line, sizeof line, "%lld\t%s\t%s\t%s\n", (long long)time(NULL), a, c, w);
    if (n >= (int)sizeof line) { /* cut: still one line */
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    /* one write: a line is whole or absent */
    bool ok = n > 0 && write(fd, line, (size_t)n) == n;
    if (!ok)
        buf_printf(err, "cannot write %s: %s", buf_str(&path), strerror(errno));
    close(fd);
    buf_free(&path);
    return ok ? 0 : -1;
}
