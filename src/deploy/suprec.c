#include "suprec.h"

#include <errno.h>
#include <fcntl.h>
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

void suprec_load(const char *state_dir, time_t now, struct suprec *r)
{
    struct buf path = BUF_INIT, b = BUF_INIT;
    buf_printf(&path, "%s/%s", state_dir, SUPREC_FILE);
    if (buf_read_file(&b, buf_str(&path), 1 << 20) == 0)
        suprec_parse(buf_str(&b), now, r);
    else
        memset(r, 0, sizeof *r);
    buf_free(&path);
    buf_free(&b);
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
