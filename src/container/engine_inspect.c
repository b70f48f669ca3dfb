/* engine_inspect: the inspect document (GET /containers/NAME/json) into the
 * struct the CLI's inspect line fills (probe.c), so a snapshot reads the
 * same whichever way it came. */
#include "engine.h"
#include "text.h"

#include <string.h>

#include "jscan.h"

struct doc {
    const char *json;
    size_t len;
    const char *why;
};

static int get(struct doc *d, const char *const *path, int n, struct jscan_val *v)
{
    return jscan_get(d->json, d->len, path, n, v, &d->why);
}

/* A string field copied through text_copy_field (remote text); absent or
 * null leaves dst empty. */
static int get_text(struct doc *d, const char *const *path, int n, char *dst, size_t sz,
                    const char *skip)
{
    struct jscan_val v;
    if (get(d, path, n, &v) < 0)
        return -1;
    dst[0] = '\0';
    if (v.type != JSCAN_STRING)
        return 0;
    struct buf s = BUF_INIT;
    if (jscan_string(&v, &s) < 0) {
        buf_free(&s);
        d->why = "out of memory";
        return -1;
    }
    const char *p = buf_str(&s);
    size_t len = s.len;
    if (skip && strncmp(p, skip, strlen(skip)) == 0)
        p += strlen(skip), len -= strlen(skip);
    text_copy_field(dst, sz, p, len);
    buf_free(&s);
    return 0;
}

static int need(struct doc *d, const char *const *path, enum jscan_type t, struct jscan_val *v,
                const char *missing)
{
    if (get(d, path, 2, v) < 0)
        return -1;
    if (v->type != t) {
        d->why = missing;
        return -1;
    }
    return 0;
}

int engine_parse_inspect(const char *json, size_t len, struct container_info *c, bool *tty,
                         const char **why)
{
    memset(c, 0, sizeof *c);
    if (tty)
        *tty = false;
    struct doc d = {json, len, NULL};
    static const char *const name[] = {"Name"}, *const image[] = {"Image"}, *const idp[] = {"Id"};
    static const char *const running[] = {"State", "Running"}, *const pid[] = {"State", "Pid"};
    static const char *const started[] = {"State", "StartedAt"};
    static const char *const code[] = {"State", "ExitCode"}, *const oom[] = {"State", "OOMKilled"};
    static const char *const label[] = {"Config", "Labels", "dsv41-top.managed"};
    static const char *const ttyp[] = {"Config", "Tty"};
    struct jscan_val v;
    long n;
    int rc = -1;
    /* docker and podman both write the name with a leading '/' */
    if (get_text(&d, name, 1, c->name, sizeof c->name, "/") < 0)
        goto out;
    if (!c->name[0]) {
        d.why = "no Name";
        goto out;
    }
    if (need(&d, running, JSCAN_BOOL, &v, "no State.Running") < 0)
        goto out;
    c->running = v.b;
    if (need(&d, pid, JSCAN_NUMBER, &v, "no State.Pid") < 0 || jscan_long(&v, &c->pid) < 0) {
        d.why = d.why ? d.why : "State.Pid is no integer";
        goto out;
    }
    if (need(&d, code, JSCAN_NUMBER, &v, "no State.ExitCode") < 0 || jscan_long(&v, &n) < 0 ||
        n < -1000000 || n > 1000000) {
        d.why = d.why ? d.why : "State.ExitCode is no small integer";
        goto out;
    }
    c->exit_code = (int)n;
    if (need(&d, oom, JSCAN_BOOL, &v, "no State.OOMKilled") < 0)
        goto out;
    c->oom_killed = v.b;
    if (get_text(&d, started, 2, c->started, sizeof c->started, NULL) < 0 ||
        get_text(&d, image, 1, c->image, sizeof c->image, "sha256:") < 0 ||
        get_text(&d, idp, 1, c->id, sizeof c->id, NULL) < 0)
        goto out;
    char managed[8];
    if (get_text(&d, label, 3, managed, sizeof managed, NULL) < 0)
        goto out;
    c->managed = strcmp(managed, "1") == 0;
    if (get(&d, ttyp, 2, &v) < 0)
        goto out;
    if (tty)
        *tty = v.type == JSCAN_BOOL && v.b;
    rc = 0;
out:
    if (rc < 0) {
        memset(c, 0, sizeof *c);
        if (why)
            *why = d.why ? d.why : "malformed";
    }
    return rc;
}
