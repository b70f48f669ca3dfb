/* download: see download.h. The transfers' side: libcurl multi, one thread. */
#include "download.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "dlrun.h"
#include "fdio.h"
#include "mono.h"

#define MAX_TRIES 10
#define SAVE_MAX_S 1.0 /* the landed state at least once a second while bytes land */

struct xfer {
    struct dl_run *d;
    CURL *e;
    struct curl_slist *hdr;
    int out, piece;
    int64_t off, len; /* asked for, within the piece */
    int64_t pos;      /* the next byte's offset within the piece */
    bool checked;     /* the status and Content-Range looked at */
    bool usable;      /* ... and the body is bytes of the piece where we think */
    bool whole;       /* a 200 to a Range request: the body is the whole piece */
    bool superseded;  /* so was another's, which writes it: this one stops */
    char content_range[128], retry_after[32];
    char cerr[CURL_ERROR_SIZE];
};

static struct piece_rt *piece(struct dl_run *d, int o, int p)
{
    return &d->out[o].pc[p];
}

/* ---- transfers ---------------------------------------------------------------- */

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = sz * n;
    if (len > 14 && strncasecmp(p, "Content-Range:", 14) == 0)
        snprintf(x->content_range, sizeof x->content_range, "%.*s", (int)(len - 14), p + 14);
    if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
        snprintf(x->retry_after, sizeof x->retry_after, "%.*s", (int)(len - 12), p + 12);
    return len;
}

/* The first bytes of a body: is it what was asked? A 206 must start where
 * asked; a 200 to a Range request is the whole piece from its first byte. */
static bool check_start(struct xfer *x)
{
    long code = 0;
    curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &code);
    struct dl_run *d = x->d;
    const struct hub_file *f = d->out[x->out].o->p[x->piece].f;
    x->checked = true;
    curl_off_t us = 0; /* from the request's start to its first byte */
    if (curl_easy_getinfo(x->e, CURLINFO_STARTTRANSFER_TIME_T, &us) == CURLE_OK && us > 0)
        d->open_s = d->open_s > 0 ? 0.75 * d->open_s + 0.25 * (double)us / 1e6 : (double)us / 1e6;
    if (code == 200) {
        if (x->off != 0 || x->len != f->size) {
            /* the whole piece from its first byte, each byte written where it
             * belongs (never appended twice); one such transfer at a time */
            struct piece_rt *pc = piece(d, x->out, x->piece);
            pthread_mutex_lock(&d->mu);
            pc->no_range = true;
            x->superseded = pc->whole_active;
            pc->whole_active = x->whole = !x->superseded;
            pthread_mutex_unlock(&d->mu);
            x->pos = 0;
        }
        return !x->superseded;
    }
    if (code != 206)
        return false; /* an error page: not written */
    long long a = -1, b = -1, total = -1;
    if (sscanf(x->content_range, " bytes %lld-%lld/%lld", &a, &b, &total) != 3 ||
        a != x->off || total != f->size)
        return false;
    return true;
}

/* n bytes written at off of the output and recorded as landed; -1 (and the
 * run's fatal error set) when the disk refused them. */
static int land(struct dl_run *d, struct out_rt *r, const char *p, size_t n, int64_t off)
{
    int e = fdio_pwrite_all(r->fd, p, n, (off_t)off);
    if (e) {
        pthread_mutex_lock(&d->mu);
        d->fatal = e;
        snprintf(d->fatal_what, sizeof d->fatal_what, "%s.incomplete", r->o->path);
        pthread_mutex_unlock(&d->mu);
        return -1;
    }
    pthread_mutex_lock(&d->mu);
    ranges_add(&r->st->landed, off, off + (int64_t)n);
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = sz * n;
    if (!x->checked)
        x->usable = check_start(x);
    if (!x->usable) /* an error page (read and dropped: the status says what happened), or
                     * a whole piece another transfer writes (stop) */
        return x->superseded ? 0 : len;
    struct dl_run *d = x->d;
    struct out_rt *r = &d->out[x->out];
    pthread_mutex_lock(&d->mu); /* the hasher sets it */
    bool active = r->status == OUT_ACTIVE;
    pthread_mutex_unlock(&d->mu);
    if (!active) /* verified (or failed) meanwhile: nothing more */
        return 0;
    const struct dl_piece *dp = &r->o->p[x->piece];
    /* never past the piece (a server sending more than asked), nor past the
     * range (a second transfer took the rest of it: steal_range) */
    int64_t stop = x->whole ? dp->f->size : x->off + x->len;
    stop = stop < dp->f->size ? stop : dp->f->size;
    size_t take = len;
    if (x->pos + (int64_t)take > stop)
        take = (size_t)(stop > x->pos ? stop - x->pos : 0);
    int64_t at = dp->off + x->pos;
    pthread_mutex_lock(&d->mu);
    d->fetched += (int64_t)take;
    pthread_mutex_unlock(&d->mu);
    if (!x->whole) {
        if (land(d, r, p, take, at) < 0)
            return 0;
    } else { /* the whole piece again: only what has not landed, so bytes already
              * hashed stay the bytes that were hashed */
        for (int64_t a = at, b = at + (int64_t)take, gl = 0; a < b; a += gl) {
            pthread_mutex_lock(&d->mu);
            int64_t g = ranges_gap(&r->st->landed, a, b, &gl);
            pthread_mutex_unlock(&d->mu);
            if (!gl)
                break;
            if (land(d, r, p + (g - at), (size_t)gl, g) < 0)
                return 0;
            gl += g - a;
        }
    }
    x->pos += (int64_t)take;
    return take == len ? len : 0; /* at its end: the rest is another's (or nobody's) */
}

/* Near the end the ranges shrink, so every connection still has one: the
 * bytes no transfer has yet, shared out four times over the connections, but
 * never under this (a request's round trip would cost more than its bytes).
 * Four rounds rather than one: a file's hash can only follow its first range,
 * so with one round each range lasted to the end and the bytes landed behind
 * the first were hashed after the last byte (the bench's download: ~60 MB
 * then, ~25 MB with four); a checkpoint's 64 MiB ranges shrink in its last 4 GB. */
#define MIN_CHUNK (4LL << 20)

static int64_t chunk_now(const struct dl_run *d)
{
    int64_t left = 0;
    for (int i = 0; i < d->nout; i++) {
        const struct out_rt *r = &d->out[i];
        if (r->status != OUT_ACTIVE || r->final_name)
            continue;
        for (int k = 0; k < r->o->np; k++) {
            const struct dl_piece *dp = &r->o->p[k];
            int64_t at = dp->off, end = dp->off + dp->f->size, gl = 0;
            while (at < end) {
                int64_t g = ranges_gap(&r->st->landed, at, end, &gl);
                if (!gl)
                    break;
                left += gl - ranges_count(&r->inflight, g, g + gl);
                at = g + gl;
            }
        }
    }
    int64_t c = left / (4 * (d->o->connections > 0 ? d->o->connections : 1));
    int64_t lo = MIN_CHUNK < d->o->chunk ? MIN_CHUNK : d->o->chunk;
    return c > d->o->chunk ? d->o->chunk : c < lo ? lo : c;
}

/* The next range to fetch: the first gap of an active output's piece that is
 * neither landed nor in flight, at most d->chunk bytes. Lock held. */
static bool next_range(struct dl_run *d, double now, int *o, int *p, int64_t *off, int64_t *len)
{
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        if (r->status != OUT_ACTIVE || r->final_name)
            continue;
        for (int k = 0; k < r->o->np; k++) {
            struct piece_rt *pc = &r->pc[k];
            const struct dl_piece *dp = &r->o->p[k];
            if (pc->not_before > now || !pc->url_ok) /* !url_ok: a resolver is on it */
                continue;
            int64_t end = dp->off + dp->f->size, at = dp->off, gl = 0;
            if (pc->no_range) { /* one transfer of the whole piece at a time */
                if (ranges_count(&r->inflight, dp->off, end) > 0 ||
                    ranges_count(&r->st->landed, dp->off, end) == dp->f->size)
                    continue;
                *o = i, *p = k, *off = 0, *len = dp->f->size;
                return true;
            }
            while (at < end) {
                int64_t g = ranges_gap(&r->st->landed, at, end, &gl);
                if (!gl)
                    break;
                /* the part of that gap no transfer has */
                int64_t fl = 0, f = ranges_gap(&r->inflight, g, g + gl, &fl);
                if (fl) {
                    *o = i, *p = k, *off = f - dp->off;
                    *len = fl < d->chunk ? fl : d->chunk;
                    return true;
                }
                at = g + gl;
            }
        }
    }
    return false;
}

/* Nothing is left to hand out but a connection is idle: the transfer with
 * the most bytes still to come gives up the second half of them (it stops
 * at the midpoint, a new transfer starts there), so the end of a download
 * is not one connection's alone. Only a running 206 body is split, and only
 * where that pays (dl_split_pays: conn_rate, bytes/s, against the opening a
 * new request costs, measured). Lock held. */
static bool steal_range(struct dl_run *d, struct xfer *const *xs, int n, double conn_rate,
                        int *o, int *p, int64_t *off, int64_t *len)
{
    struct xfer *best = NULL;
    int64_t most = 0;
    for (int i = 0; i < n; i++) {
        struct xfer *x = xs[i];
        if (!x->checked || !x->usable || x->whole || d->out[x->out].status != OUT_ACTIVE)
            continue;
        int64_t left = x->off + x->len - x->pos;
        if (left > most) {
            most = left;
            best = x;
        }
    }
    if (!best || !dl_split_pays(most, d->open_s, conn_rate))
        return false;
    int64_t end = best->off + best->len, mid = best->pos + most / 2;
    const struct dl_piece *dp = &d->out[best->out].o->p[best->piece];
    best->len = mid - best->off;
    ranges_sub(&d->out[best->out].inflight, dp->off + mid, dp->off + end);
    *o = best->out, *p = best->piece, *off = mid, *len = end - mid;
    return true;
}

static int start_xfer(struct dl_run *d, CURLM *m, int o, int p, int64_t off, int64_t len,
                      struct xfer **slot, struct buf *err)
{
    struct piece_rt *pc = piece(d, o, p);
    const struct dl_piece *dp = &d->out[o].o->p[p];
    struct xfer *x = calloc(1, sizeof *x);
    if (!x || !(x->e = curl_easy_init())) {
        free(x);
        buf_puts(err, "out of memory");
        return -1;
    }
    x->d = d;
    x->out = o;
    x->piece = p;
    x->off = off;
    x->len = len;
    x->pos = off;
    if (pc->with_token) /* the hub's own host: never a CDN's */
        x->hdr = hub_auth_header(d->hub);
    char range[64];
    snprintf(range, sizeof range, "%lld-%lld", (long long)off, (long long)(off + len - 1));
    curl_easy_setopt(x->e, CURLOPT_URL, buf_str(&pc->url));
    curl_easy_setopt(x->e, CURLOPT_RANGE, range);
    curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->hdr);
    curl_easy_setopt(x->e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(x->e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(x->e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(x->e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(x->e, CURLOPT_ERRORBUFFER, x->cerr);
    curl_easy_setopt(x->e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(x->e, CURLOPT_CONNECTTIMEOUT, 20L);
    /* a stalled connection ends (HF_STALL_S at under 1 KiB/s), and is tried again */
    curl_easy_setopt(x->e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    curl_easy_setopt(x->e, CURLOPT_LOW_SPEED_TIME, d->hub->stall_s > 0 ? d->hub->stall_s : 30L);
    curl_easy_setopt(x->e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(x->e, CURLOPT_USERAGENT, "dsv41-top");
    curl_easy_setopt(x->e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->e, CURLOPT_BUFFERSIZE, 256L * 1024);
    pthread_mutex_lock(&d->mu); /* the syncer finishes an output only when none writes it */
    ranges_add(&d->out[o].inflight, dp->off + off, dp->off + off + len);
    d->out[o].active++;
    pthread_mutex_unlock(&d->mu);
    curl_multi_add_handle(m, x->e);
    *slot = x;
    return 0;
}

/* A transfer that ended: what landed is in the state already; a range that
 * is not done (cut, refused, an error) is fetched again, after a backoff
 * when the server or the network failed. */
static void end_xfer(struct dl_run *d, CURLM *m, CURLcode res, struct xfer *x,
                     const struct dl_opts *o)
{
    long code = 0;
    curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &code);
    struct out_rt *r = &d->out[x->out];
    struct piece_rt *pc = &r->pc[x->piece];
    const struct dl_piece *dp = &r->o->p[x->piece];
    pthread_mutex_lock(&d->mu);
    ranges_sub(&r->inflight, dp->off + x->off, dp->off + x->off + x->len);
    if (--r->active == 0) /* a whole output waits for its last writer: the syncer goes now */
        pthread_cond_signal(&d->sync_cv);
    if (x->whole)
        pc->whole_active = false;
    /* judged by what it delivered, not only by what counts as landed now: a
     * piece whose hash differed started over meanwhile and dropped bytes this
     * transfer did deliver (the ranges come back with it; no fault of this one) */
    bool landed = x->pos >= x->off + x->len ||
                  ranges_count(&r->st->landed, dp->off + x->off, dp->off + x->off + x->len) ==
                      x->len;
    char why[400] = "";
    if (!landed && !d->fatal && res != CURLE_ABORTED_BY_CALLBACK && !x->superseded &&
        r->status == OUT_ACTIVE) {
        if (code == 403 || code == 410) { /* the CDN URL expired: resolve it again */
            pc->url_ok = false;
            pthread_cond_signal(&d->resolve_cv);
            snprintf(why, sizeof why, "%s: HTTP %ld from the CDN, resolving the URL again",
                     dp->f->path, code);
        } else {
            pc->tries++;
            if (res != CURLE_OK && res != CURLE_WRITE_ERROR)
                snprintf(why, sizeof why, "%s: %s", dp->f->path,
                         x->cerr[0] ? x->cerr : curl_easy_strerror(res));
            else if (code == 200 || code == 206)
                snprintf(why, sizeof why, "%s: the connection ended %lld bytes short",
                         dp->f->path, (long long)(x->len - (x->pos - x->off)));
            else
                snprintf(why, sizeof why, "%s: HTTP %ld", dp->f->path, code);
            if (pc->tries >= MAX_TRIES || code == 401 || code == 404) {
                snprintf(r->err, sizeof r->err, "gave up on %s after %d tries: %s", r->o->path,
                         pc->tries, why);
                if (code == 401 || code == 404) {
                    struct buf e = BUF_INIT;
                    hub_explain(d->hub, code, dp->f->path, NULL, &e);
                    snprintf(r->err, sizeof r->err, "%s", buf_str(&e));
                    buf_free(&e);
                }
                r->status = OUT_FAILED;
            }
            /* 0.5 s, 1 s, ... 60 s, jittered; the server's Retry-After wins */
            double wait = 0.5 * (double)(1 << (pc->tries < 8 ? pc->tries - 1 : 7));
            wait = wait > 60 ? 60 : wait;
            wait *= 0.75 + 0.5 * ((double)rand() / RAND_MAX);
            long ra = atol(x->retry_after);
            if (ra > 0)
                wait = (double)(ra < 300 ? ra : 300);
            pc->not_before = mono_s() + wait;
        }
    }
    pthread_mutex_unlock(&d->mu);
    if (why[0] && o->on_event) {
        struct dl_status s = {.path = r->o->path, .detail = why};
        o->on_event(DL_EV_RETRY, &s, o->arg);
    }
    curl_multi_remove_handle(m, x->e);
    curl_easy_cleanup(x->e);
    curl_slist_free_all(x->hdr);
    free(x);
}

/* ---- the run ------------------------------------------------------------------- */

int download_space(const struct dl_plan *p, const struct dl_state *st, const char *dir,
                   bool keep_parts, int64_t *need, int64_t *avail, struct buf *err)
{
    struct statvfs vfs;
    if (statvfs(dir, &vfs) < 0) {
        buf_printf(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    *avail = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
    *need = 0;
    for (int i = 0; i < p->n; i++) {
        const struct dl_output *o = &p->o[i];
        bool verified = false;
        for (int k = 0; k < st->n; k++)
            if (strcmp(st->f[k].path, o->path) == 0 && st->f[k].size == o->size)
                verified = st->f[k].verified;
        struct buf path = BUF_INIT;
        struct stat sb;
        buf_printf(&path, "%s/%s%s", dir, o->path, verified ? "" : ".incomplete");
        int64_t held = stat(buf_str(&path), &sb) == 0 ? (int64_t)sb.st_blocks * 512 : 0;
        buf_free(&path);
        if (verified && held >= o->size)
            continue;
        int64_t more = o->size - held + (keep_parts && o->split ? o->size : 0);
        *need += more > 0 ? more : 0;
    }
    return 0;
}

/* Each output's run-time state, from the plan and what an earlier run did. */
static int prepare(struct dl_run *d, struct buf *err)
{
    char boot[64];
    dl_boot_id(boot);
    bool same_boot = boot[0] && strcmp(boot, d->st->boot_id) == 0;
    snprintf(d->st->boot_id, sizeof d->st->boot_id, "%s", boot);
    /* state entries first: their addresses must not move while we run */
    for (int i = 0; i < d->plan->n; i++)
        if (!dl_state_get(d->st, d->plan->o[i].path, d->plan->o[i].size)) {
            buf_puts(err, "out of memory");
            return -1;
        }
    d->out = d->plan->n > 0 ? calloc((size_t)d->plan->n, sizeof *d->out) : NULL;
    if (d->plan->n > 0 && !d->out) {
        buf_puts(err, "out of memory");
        return -1;
    }
    d->nout = d->plan->n;
    for (int i = 0; i < d->nout; i++) { /* all of it, so a failure below can be undone */
        d->out[i].o = &d->plan->o[i];
        d->out[i].fd = -1;
        d->out[i].status = OUT_FAILED;
    }
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        r->st = dl_state_get(d->st, r->o->path, r->o->size);
        if (r->st)
            r->st->parts = r->o->split ? r->o->np : 0;
        r->pc = calloc((size_t)r->o->np, sizeof *r->pc);
        if (!r->pc) {
            buf_puts(err, "out of memory");
            return -1;
        }
        struct buf path = BUF_INIT;
        struct stat sb;
        dlrun_output_path(d, r, false, &path);
        /* lstat: a symlink in a file's place is not that file (and is replaced) */
        bool present = lstat(buf_str(&path), &sb) == 0 && S_ISREG(sb.st_mode) &&
                       sb.st_size == r->o->size;
        buf_free(&path);
        if (present && r->st->verified && !d->o->verify_all) {
            r->status = OUT_SKIP;
            continue;
        }
        r->status = OUT_ACTIVE;
        if (present) { /* a complete file of an earlier run or another tool: checked */
            r->final_name = true;
            ranges_clear(&r->st->landed);
            ranges_add(&r->st->landed, 0, r->o->size);
        } else {
            r->st->verified = false;
            if (!same_boot) /* after a reboot only what was synced counts */
                ranges_copy(&r->st->landed, &r->st->durable);
        }
        for (int k = 0; k < r->o->np; k++)
            if (dlhash_init(&r->pc[k].h, r->o->p[k].off, r->o->p[k].f->size,
                            !r->o->p[k].f->lfs) < 0) {
                buf_puts(err, "cannot set up the hashes");
                return -1;
            }
        r->has_whole = r->o->split && r->o->whole_sha256[0];
        if (r->has_whole)
            dlhash_init(&r->whole, 0, r->o->size, false);
        if (dlrun_open_output(d, r, err) < 0)
            return -1;
    }
    return 0;
}

static void status_of(struct dl_run *d, struct dl_status *s, double rate, int busy)
{
    memset(s, 0, sizeof *s);
    s->rate = rate;
    s->busy = busy;
    s->files = d->nout;
    s->fetched = d->fetched;
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        s->total += r->o->size;
        if (r->status == OUT_SKIP || r->status == OUT_DONE) {
            s->done += r->o->size;
            s->files_done++;
        } else if (!r->final_name) {
            s->done += ranges_count(&r->st->landed, 0, r->o->size);
        }
    }
}

static void event(struct dl_run *d, enum dl_event_kind k, struct out_rt *r, const char *detail,
                  double rate, int busy)
{
    if (!d->o->on_event)
        return;
    struct dl_status s;
    pthread_mutex_lock(&d->mu);
    status_of(d, &s, rate, busy);
    pthread_mutex_unlock(&d->mu);
    s.path = r ? r->o->path : NULL;
    s.detail = detail;
    d->o->on_event(k, &s, d->o->arg);
}

/* Outputs the hasher finished: in place, or failed; a piece refetched. */
static int settle(struct dl_run *d, double rate, int busy, struct buf *err)
{
    int rc = 0;
    for (int i = 0; i < d->nout; i++) {
        struct out_rt *r = &d->out[i];
        pthread_mutex_lock(&d->mu);
        enum out_status s = r->status;
        bool tell = (s == OUT_DONE || s == OUT_FAILED) && !r->announced;
        r->announced |= tell;
        char why[sizeof r->err] = "";
        if (tell) /* copied: the hasher may still write it */
            memcpy(why, r->err, sizeof why);
        const char *refetched = NULL;
        for (int k = 0; k < r->o->np; k++)
            if (r->pc[k].refetches > r->pc[k].said) {
                r->pc[k].said = r->pc[k].refetches;
                refetched = r->o->p[k].f->path;
            }
        pthread_mutex_unlock(&d->mu);
        if (refetched) {
            char msg[600];
            snprintf(msg, sizeof msg, "%s: its hash differed, fetching it again", refetched);
            event(d, DL_EV_REFETCH, r, msg, rate, busy);
        }
        if (tell && s == OUT_DONE)
            event(d, DL_EV_FILE_OK, r, NULL, rate, busy);
        else if (tell)
            event(d, DL_EV_FAILED, r, why, rate, busy);
    }
    pthread_mutex_lock(&d->mu);
    if (d->save_err[0]) { /* the state cannot be kept: going on would lose its work */
        buf_reset(err);
        buf_puts(err, d->save_err);
        rc = -1;
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

static int run(struct dl_run *d, struct buf *err)
{
    const struct dl_opts *o = d->o;
    CURLM *m = curl_multi_init();
    struct xfer **xs = calloc((size_t)o->connections, sizeof *xs); /* in flight */
    if (!m || !xs) {
        buf_puts(err, "cannot start libcurl");
        free(xs);
        if (m)
            curl_multi_cleanup(m);
        return -1;
    }
    pthread_mutex_lock(&d->mu);
    d->wake = m;
    pthread_mutex_unlock(&d->mu);
    /* one transfer per connection: a CDN caps each connection, not each stream */
    curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    int busy = 0, rc = 0;
    double last_save = mono_s(), last_event = 0, rate = 0;
    int64_t saved_at = d->fetched, rate_at = d->fetched;
    double rate_t = last_save;
    /* a kill loses at most what landed since the last save: 0.1 % of the
     * checkpoint (462 MB of 462 GB), never less than 256 KiB between saves */
    int64_t save_every = d->plan->bytes / 1000 > (256 << 10) ? d->plan->bytes / 1000 : (256 << 10);
    for (;;) {
        double now = mono_s();
        bool cancel = o->cancel && atomic_load(o->cancel);
        if (settle(d, rate, busy, err) < 0 || d->fatal)
            break;
        /* new transfers, up to the limit */
        pthread_mutex_lock(&d->mu);
        int oi, pi;
        int64_t off, len;
        bool more = false;
        if (busy < o->connections)
            d->chunk = chunk_now(d);
        while (!cancel && busy < o->connections &&
               (next_range(d, now, &oi, &pi, &off, &len) ||
                steal_range(d, xs, busy, busy > 0 ? rate / busy : 0, &oi, &pi, &off, &len))) {
            pthread_mutex_unlock(&d->mu);
            struct buf e = BUF_INIT;
            int s = start_xfer(d, m, oi, pi, off, len, &xs[busy], &e);
            pthread_mutex_lock(&d->mu);
            if (s < 0) { /* out of memory: that output fails */
                snprintf(d->out[oi].err, sizeof d->out[oi].err, "%s", buf_str(&e));
                d->out[oi].status = OUT_FAILED;
            } else {
                busy++;
            }
            buf_free(&e);
        }
        /* is anything left to do, now or after a backoff? */
        bool pending = false;
        for (int i = 0; i < d->nout; i++)
            pending |= d->out[i].status == OUT_ACTIVE || d->out[i].status == OUT_READY ||
                       d->out[i].status == OUT_FINISHING;
        more = pending;
        pthread_mutex_unlock(&d->mu);
        if (!more && busy == 0)
            break;
        if (cancel) /* what landed is kept; the transfers in flight end now */
            break;
        int running = 0;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE) {
                struct xfer *x;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
                for (int k = 0; k < busy; k++)
                    if (xs[k] == x) {
                        xs[k] = xs[--busy];
                        break;
                    }
                end_xfer(d, m, msg->data.result, x, o);
            }
        curl_multi_poll(m, NULL, 0, busy ? 100 : 50, NULL);
        now = mono_s();
        if (now - rate_t >= 1.0) { /* smoothed over about 5 s */
            double inst = (double)(d->fetched - rate_at) / (now - rate_t);
            rate = rate > 0 ? 0.8 * rate + 0.2 * inst : inst;
            rate_at = d->fetched;
            rate_t = now;
        }
        if (d->fetched != saved_at &&
            (d->fetched - saved_at >= save_every || now - last_save >= SAVE_MAX_S)) {
            pthread_mutex_lock(&d->mu); /* the syncer writes it */
            d->save_wanted = true;
            pthread_cond_signal(&d->sync_cv);
            pthread_mutex_unlock(&d->mu);
            last_save = now;
            saved_at = d->fetched;
        }
        if (now - last_event >= 0.5) {
            event(d, DL_EV_PROGRESS, NULL, NULL, rate, busy);
            last_event = now;
        }
    }
    /* cancelled or stopped: the transfers in flight end; what landed is kept */
    while (busy > 0)
        end_xfer(d, m, CURLE_ABORTED_BY_CALLBACK, xs[--busy], o);
    free(xs);
    pthread_mutex_lock(&d->mu);
    d->wake = NULL;
    pthread_mutex_unlock(&d->mu);
    curl_multi_cleanup(m);
    if (d->fatal) {
        buf_reset(err);
        if (d->fatal == ENOSPC)
            buf_printf(err, "no space left on %s's filesystem (writing %s): free space and run "
                            "download again to resume",
                       o->dir, d->fatal_what);
        else
            buf_printf(err, "cannot write %s: %s", d->fatal_what, strerror(d->fatal));
        rc = -1;
    }
    return rc;
}

int download_run(struct hub *h, const struct dl_plan *p, struct dl_state *st,
                 const struct dl_opts *o, struct buf *err)
{
    struct dl_run d = {.plan = p, .st = st, .o = o, .hub = h};
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    pthread_cond_init(&d.sync_cv, NULL);
    pthread_cond_init(&d.resolve_cv, NULL);
    pthread_t hasher, syncer;
    bool hashing = false, syncing = false;
    struct dl_resolvers *rs = NULL;
    int rc = prepare(&d, err);
    if (rc == 0) {
        for (int i = 0; i < d.nout; i++)
            if (d.out[i].status == OUT_SKIP)
                event(&d, DL_EV_FILE_SKIP, &d.out[i], NULL, 0, 0);
        hashing = pthread_create(&hasher, NULL, dlhash_main, &d) == 0;
        syncing = hashing && pthread_create(&syncer, NULL, dlsync_main, &d) == 0;
        if (!syncing) {
            buf_puts(err, "cannot start the download's threads");
            rc = -1;
        }
    }
    /* a few at once: the first transfers wait for their URLs */
    if (rc == 0 && !(rs = dlresolve_start(&d, o->connections < 4 ? o->connections : 4, err)))
        rc = -1;
    if (rc == 0)
        rc = run(&d, err);
    dlresolve_stop(rs);
    if (hashing) {
        pthread_mutex_lock(&d.mu);
        d.stop = true;
        pthread_cond_broadcast(&d.cv);
        pthread_mutex_unlock(&d.mu);
        pthread_join(hasher, NULL);
    }
    if (syncing) { /* it puts what is ready in place and saves a last time */
        pthread_mutex_lock(&d.mu);
        d.sync_stop = true;
        pthread_cond_signal(&d.sync_cv);
        pthread_mutex_unlock(&d.mu);
        pthread_join(syncer, NULL);
        struct buf e2 = BUF_INIT;
        settle(&d, 0, 0, &e2); /* its last outputs told */
        buf_free(&e2);
    } else {
        struct buf e2 = BUF_INIT;
        dl_state_save(o->dir, st, true, &e2); /* what landed is never lost */
        buf_free(&e2);
    }
    int failed = 0;
    for (int i = 0; i < d.nout; i++) {
        struct out_rt *r = &d.out[i];
        if (r->status != OUT_DONE && r->status != OUT_SKIP) {
            if (!failed && rc == 0)
                buf_printf(err, "%s", r->err[0] ? r->err : "not complete (interrupted)");
            failed++;
        }
        if (r->fd >= 0)
            close(r->fd);
        for (int k = 0; r->pc && k < r->o->np; k++) { /* no pc: prepare stopped before */
            dlhash_free(&r->pc[k].h);
            buf_free(&r->pc[k].url);
        }
        free(r->pc);
        dlhash_free(&r->whole);
        ranges_free(&r->inflight);
    }
    free(d.out);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.cv);
    pthread_cond_destroy(&d.sync_cv);
    pthread_cond_destroy(&d.resolve_cv);
    return rc < 0 ? -1 : failed ? 1 : 0;
}
