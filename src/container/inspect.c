#include "inspect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static bool parse_long_field(const char *s, size_t len, long *out)
{
    char tmp[32];
    if (!len || len >= sizeof tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    errno = 0;
    long v = strtol(tmp, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

static bool parse_bool_field(const char *s, size_t len, bool *out)
{
    if (len == 4 && memcmp(s, "true", 4) == 0)
        *out = true;
    else if (len == 5 && memcmp(s, "false", 5) == 0)
        *out = false;
    else
        return false;
    return true;
}

int inspect_parse_line(const char *line, struct container_info *c)
{
    memset(c, 0, sizeof *c);
    enum { NF = 8 };
    const char *f[NF];
    size_t fl[NF];
    const char *p = line;
    const char *end = line + strcspn(line, "\r\n");
    for (int i = 0; i < NF; i++) {
        const char *bar = i < NF - 1 ? memchr(p, '|', (size_t)(end - p)) : end;
        if (!bar)
            return -1;
        f[i] = p;
        fl[i] = (size_t)(bar - p);
        p = bar + 1;
    }
    if (memchr(f[NF - 1], '|', fl[NF - 1]))
        return -1;
    /* docker prints the name with a leading '/'; podman does not. */
    if (fl[0] && f[0][0] == '/') {
        f[0]++;
        fl[0]--;
    }
    if (!fl[0])
        return -1;
    text_copy_field(c->name, sizeof c->name, f[0], fl[0]);
    long code;
    if (!parse_bool_field(f[1], fl[1], &c->running) || !parse_long_field(f[2], fl[2], &c->pid) ||
        !parse_long_field(f[4], fl[4], &code) || !parse_bool_field(f[5], fl[5], &c->oom_killed))
        return -1;
    c->exit_code = (int)code;
    text_copy_field(c->started, sizeof c->started, f[3], fl[3]);
    /* docker's CLI prints the id as sha256:HEX, podman's and the API path
     * (engine.c) as HEX: one form, so that nodes compare */
    if (fl[6] > 7 && memcmp(f[6], "sha256:", 7) == 0) {
        f[6] += 7;
        fl[6] -= 7;
    }
    text_copy_field(c->image, sizeof c->image, f[6], fl[6]);
    /* docker prints "<no value>" for a missing label, podman "" */
    c->managed = fl[7] == 1 && f[7][0] == '1';
    return 0;
}

/* A field with no '|' of its own (it would shift the ones after it). */
static void bar_free(struct buf *out, const char *s)
{
    for (; *s; s++)
        buf_append(out, *s == '|' ? "?" : s, 1);
}

void inspect_format_line(struct buf *out, const struct container_info *c)
{
    bar_free(out, c->name);
    buf_printf(out, "|%s|%ld|", c->running ? "true" : "false", c->pid);
    bar_free(out, c->started);
    buf_printf(out, "|%d|%s|", c->exit_code, c->oom_killed ? "true" : "false");
    bar_free(out, c->image);
    buf_printf(out, "|%s\n", c->managed ? "1" : "");
}

int inspect_parse_started(const char *s, time_t *out)
{
    struct tm tm = {0};
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2d%*1[T ]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 || tm.tm_year < 1970)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    const char *p = s + n;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    if (*p == 'Z' || !*p) {
        *out = t;
        return 0;
    }
    int hh, mm;
    char sign;
    if (sscanf(p, " %c%2d%2d", &sign, &hh, &mm) == 3 && (sign == '+' || sign == '-')) {
        long off = (long)hh * 3600 + (long)mm * 60;
        *out = sign == '+' ? t - off : t + off;
        return 0;
    }
    return -1;
}
