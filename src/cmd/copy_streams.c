/* copy_streams: copy-to-peer's default path, the TCP streams to dsv41-xfer
 * (xfer_peer.h), with its output: a line per file, a progress line (every
 * stream's rate), or with --json one JSON object per event. */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "mono.h"
#include "interrupt.h"
#include "peer_cmd.h"
#include "progress.h"
#include "text.h"
#include "xfer_peer.h"

struct xfer_out {
    struct copy_out *o;
    bool dry_run, json;
    int sent_files;
    int64_t sent; /* bytes the streams sent */
    int64_t prev[XFER_MAX_STREAMS];
    double prev_t;
    char streams[128]; /* "8/8 streams, 41.2 MB-57.0 MB/s each" */
    char progress[700]; /* STATE_DIR/copy-progress: the exporter's (opsfiles.h) */
};

/* "PID LANDED NEED EPOCH NODE", replaced whole each second while the copy
 * runs, removed at its end: what the exporter shows of a copy. */
static void progress_file(const struct xfer_out *x, const struct xfer_peer_progress *p)
{
    if (!x->progress[0] || x->dry_run)
        return;
    char node[64], line[200];
    text_clean(node, sizeof node, x->o->node, strlen(x->o->node));
    for (char *q = node; *q; q++)
        if (*q == ' ')
            *q = '_';
    int n = snprintf(line, sizeof line, "%ld %lld %lld %lld %s\n", (long)getpid(),
                     (long long)p->landed, (long long)p->need, (long long)time(NULL), node);
    if (n > 0 && n < (int)sizeof line)
        buf_write_file(x->progress, line, (size_t)n, 0600); /* best effort: a figure only */
}

/* --json: one object per line, {"event": kind, "node": NAME, ...fields} */
static cJSON *json_event(const struct xfer_out *x, const char *kind)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", kind);
    cJSON_AddStringToObject(j, "node", x->o->node);
    return j;
}

static void json_put(cJSON *j)
{
    char *t = cJSON_PrintUnformatted(j);
    if (t)
        printf("%s\n", t);
    fflush(stdout);
    free(t);
    cJSON_Delete(j);
}

static void xfer_text(void *arg, const char *line)
{
    struct xfer_out *x = arg;
    if (x->json) {
        cJSON *j = json_event(x, "text");
        cJSON_AddStringToObject(j, "text", line);
        json_put(j);
        return;
    }
    progress_out_clear(&x->o->out);
    printf("%s: %s\n", x->o->node, line);
    fflush(stdout);
}

static void xfer_file(void *arg, const char *path, int64_t size)
{
    struct xfer_out *x = arg;
    char clean[1024], bytes[32];
    text_clean(clean, sizeof clean, path, strlen(path));
    x->sent_files++;
    if (x->json) {
        cJSON *j = json_event(x, x->dry_run ? "wanted" : "file");
        cJSON_AddStringToObject(j, "path", clean);
        cJSON_AddNumberToObject(j, "size", (double)size);
        json_put(j);
        return;
    }
    progress_bytes(bytes, sizeof bytes, (double)size);
    progress_out_clear(&x->o->out);
    printf("%s: + %s%s%s%s\n", x->o->node, clean, x->dry_run ? " (" : "", x->dry_run ? bytes : "",
           x->dry_run ? ")" : "");
    fflush(stdout);
}

static void xfer_tick(void *arg, const struct xfer_peer_progress *p)
{
    struct xfer_out *x = arg;
    x->sent = p->s.sent;
    /* each stream's rate over the last second or so */
    if (p->elapsed_s - x->prev_t >= 1) {
        progress_file(x, p);
        double dt = p->elapsed_s - x->prev_t, lo = -1, hi = 0;
        cJSON *j = x->json ? json_event(x, "progress") : NULL, *rates = NULL;
        if (j) {
            cJSON_AddNumberToObject(j, "landed", (double)p->landed);
            cJSON_AddNumberToObject(j, "need", (double)p->need);
            cJSON_AddNumberToObject(j, "sent", (double)p->s.sent);
            cJSON_AddNumberToObject(j, "elapsed_s", p->elapsed_s);
            cJSON_AddNumberToObject(j, "streams_up", p->s.streams_up);
            rates = cJSON_AddArrayToObject(j, "stream_bytes_per_s");
        }
        for (int i = 0; i < p->s.streams; i++) {
            double r = (double)(p->s.stream_sent[i] - x->prev[i]) / dt;
            x->prev[i] = p->s.stream_sent[i];
            lo = lo < 0 || r < lo ? r : lo;
            hi = r > hi ? r : hi;
            if (rates)
                cJSON_AddItemToArray(rates, cJSON_CreateNumber(r));
        }
        if (j)
            json_put(j);
        char a[32], b[32];
        progress_bytes(a, sizeof a, lo < 0 ? 0 : lo);
        progress_bytes(b, sizeof b, hi);
        snprintf(x->streams, sizeof x->streams, "%d/%d streams, %s-%s/s each", p->s.streams_up,
                 p->s.streams, a, b);
        x->prev_t = p->elapsed_s;
    }
    if (x->json || !progress_out_due(&x->o->out))
        return;
    struct buf line = BUF_INIT;
    buf_printf(&line, "copy %s%s", x->o->node, x->o->out.tty ? " " : ": ");
    progress_format(&line, p->landed, p->need, p->elapsed_s, x->o->out.tty ? 30 : 0);
    if (x->streams[0])
        buf_printf(&line, "  %s", x->streams);
    progress_out_show(&x->o->out, buf_str(&line));
    buf_free(&line);
}

/* The copy's last word: a line, or with --json its end object. */
static void copy_end(const struct xfer_out *x, bool ok, const char *what, double secs)
{
    if (x->json) {
        cJSON *j = json_event(x, "end");
        cJSON_AddBoolToObject(j, "ok", ok);
        cJSON_AddStringToObject(j, "detail", what);
        cJSON_AddNumberToObject(j, "files_sent", x->sent_files);
        cJSON_AddNumberToObject(j, "bytes_sent", (double)x->sent);
        cJSON_AddNumberToObject(j, "seconds", secs);
        json_put(j);
    } else {
        printf("%s: %s\n", x->o->node, what);
        fflush(stdout);
    }
}

int copy_streams(const struct config *c, struct cluster_node *cn, const char *src,
                 const struct xfer_plan *plan, int streams, bool dry_run, bool json,
                 struct copy_out *o)
{
    char dest[512];
    int rc = copy_prepare(cn, false, dest, sizeof dest);
    if (rc)
        return rc;
    if (!json) {
        int sha = 0, git = 0;
        for (int i = 0; i < plan->n; i++) {
            sha += plan->f[i].has_sha;
            git += plan->f[i].has_git;
        }
        printf("copy-to-peer: %s/ to %s:%s/ over TCP streams, each file verified as it "
               "lands%s\n",
               src, cn->name, dest, dry_run ? " (dry run: nothing is copied)" : "");
        /* what the worker checks each file against: an operator sees what a
         * download left (its state names the hub's sums) */
        printf("copy-to-peer: %d file(s) checked against the manifest's or the hub's sha256, "
               "%d against the hub's git sha1 and the head's sum, %d against the head's sum "
               "alone\n",
               sha, git, plan->n - sha - git);
    }
    fflush(stdout);
    o->node = cn->name;
    progress_out_init(&o->out, json ? 0 : o->every_s, stdout);
    struct xfer_out x = {.o = o, .dry_run = dry_run, .json = json};
    snprintf(x.progress, sizeof x.progress, "%s/copy-progress", config_str(c, CFG_STATE_DIR));
    struct xfer_peer_out out = {.text = xfer_text, .file = xfer_file, .tick = xfer_tick, .arg = &x};
    struct buf err = BUF_INIT, what = BUF_INIT;
    double t0 = mono_s();
    int r = xfer_peer_run(c, cn, src, plan, NULL, streams, dry_run, interrupt_token(), &out, &err);
    progress_out_clear(&o->out);
    unlink(x.progress);
    char secs[32], bytes[32];
    progress_duration(secs, sizeof secs, mono_s() - t0);
    progress_bytes(bytes, sizeof bytes, (double)x.sent);
    if (r < 0)
        buf_printf(&what, "copy failed: %s", buf_str(&err));
    else if (atomic_load(interrupt_token()))
        buf_puts(&what, "copy interrupted; run copy-to-peer again to resume");
    else if (dry_run)
        buf_printf(&what, "%d file(s) to send", x.sent_files);
    else if (r)
        buf_puts(&what, "copy failed: a file could not be put in place (above)");
    else
        buf_printf(&what,
                   "copied: %d file(s) sent (%s, %lld bytes, in %s), every file in place "
                   "and verified as it landed",
                   x.sent_files, bytes, (long long)x.sent, secs);
    bool ok = r == 0 && !atomic_load(interrupt_token());
    copy_end(&x, ok, buf_str(&what), mono_s() - t0);
    buf_free(&err);
    buf_free(&what);
    if (!ok || dry_run)
        return ok ? 0 : 1;
    return copy_compare_exl3(cn, src, json ? stderr : stdout);
}
