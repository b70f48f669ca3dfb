/* xfer_peer: see xfer_peer.h. */
#include "xfer_peer.h"

#include <errno.h>
#include <stdarg.h>
#include <ftw.h> /* FTW_ACTIONRETVAL (_GNU_SOURCE): .cache/ skipped, not walked */
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dlstate.h"
#include "helper.h"
#include "mono.h"
#include "snapshot.h"
#include "text.h"
#include "verify.h"
#include "wire.h"

#define XFER_HELPER "dsv41-xfer"
#define LISTEN_SILENCE_S 120

/* ---- the plan ------------------------------------------------------------------- */

/* nftw passes no argument: the walk's state (one walk at a time, a command's) */
static struct {
    size_t srclen;
    struct xfer_plan *p;
    struct verify_manifest *m;
    int failed;
} W;

/* "NAME.safetensors.partNN": an Engram piece, rebuilt on the head, not copied */
static bool is_part(const char *name)
{
    const char *p = strstr(name, ".safetensors.part");
    if (!p)
        return false;
    p += strlen(".safetensors.part");
    return *p && strspn(p, "0123456789") == strlen(p);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int walk_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    if (ftw->level == 0)
        return FTW_CONTINUE;
    const char *rel = path + W.srclen + 1, *base = path + ftw->base;
    if (type == FTW_D && ftw->level == 1 && strcmp(base, ".cache") == 0)
        return FTW_SKIP_SUBTREE; /* the hub client's, as the script era left it */
    if (type != FTW_F || is_part(base) || strncmp(base, ".dsv41-", 7) == 0 ||
        ends_with(base, ".incomplete"))
        return FTW_CONTINUE;
    const unsigned char *sha = NULL;
    for (int i = 0; W.m && i < W.m->n && !sha; i++)
        if (strcmp(W.m->e[i].path, rel) == 0)
            sha = W.m->e[i].want;
    int64_t mt = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    if (xfer_plan_add(W.p, rel, sb->st_size, mt, sha) < 0) {
        W.failed = 1;
        return FTW_STOP;
    }
    return FTW_CONTINUE;
}

static int by_path(const void *a, const void *b)
{
    return strcmp((*(struct xfer_file *const *)a)->path, (*(struct xfer_file *const *)b)->path);
}

/* The sums the download verified each file against (its state in src),
 * for the files the manifest does not name and that are unchanged since (the
 * same size and time): the hub's sha256 is the file's, its git blob sha1 is
 * checked beside the head's sum. */
static void add_hub_sums(const char *src, struct xfer_plan *p)
{
    struct dl_state st;
    struct buf err = BUF_INIT;
    struct xfer_file **by = malloc((size_t)(p->n ? p->n : 1) * sizeof *by);
    if (!by || dl_state_load(src, &st, &err) != 0) {
        free(by);
        buf_free(&err);
        return; /* no download here, or its state is damaged: the head's sums */
    }
    for (int i = 0; i < p->n; i++)
        by[i] = &p->f[i];
    qsort(by, (size_t)p->n, sizeof *by, by_path); /* a directory may hold 100,000 files */
    for (int i = 0; i < st.n; i++) {
        const struct dl_state_file *e = &st.f[i];
        if (!e->verified || e->mtime_ns < 0 || (!e->sha256[0] && !e->sha1[0]))
            continue;
        struct xfer_file key = {.path = e->path}, *kp = &key;
        struct xfer_file **hit = bsearch(&kp, by, (size_t)p->n, sizeof *by, by_path);
        struct xfer_file *f = hit ? *hit : NULL;
        if (!f || f->has_sha || f->size != e->size || f->mtime_ns != e->mtime_ns)
            continue;
        const char *q = e->sha256[0] ? e->sha256 : e->sha1;
        if (e->sha256[0])
            f->has_sha = wire_hex32(&q, f->sha, true);
        else
            f->has_git = wire_hex(&q, f->git, 20, true);
    }
    dl_state_free(&st);
    free(by);
    buf_free(&err);
}

int xfer_plan_build(const char *src, struct xfer_plan *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    struct verify_manifest m = {0};
    struct buf mpath = BUF_INIT, text = BUF_INIT;
    buf_printf(&mpath, "%s/sha256-manifest.txt", src);
    int rc = 0;
    if (access(buf_str(&mpath), F_OK) == 0 &&
        (buf_read_file(&text, buf_str(&mpath), 64u << 20) < 0 ||
         verify_manifest_parse(buf_str(&text), buf_str(&mpath), &m, err) < 0)) {
        if (!err->len)
            buf_printf(err, "cannot read %s", buf_str(&mpath));
        rc = -1;
    }
    if (rc == 0) {
        W.srclen = strlen(src);
        while (W.srclen > 1 && src[W.srclen - 1] == '/')
            W.srclen--;
        W.p = p;
        W.m = &m;
        W.failed = 0;
        if (nftw(src, walk_one, 32, FTW_PHYS | FTW_ACTIONRETVAL) != 0 || W.failed) {
            buf_printf(err, "cannot list %s: %s", src,
                       W.failed ? "too many files" : strerror(errno));
            xfer_plan_free(p);
            rc = -1;
        }
        W.m = NULL;
    }
    if (rc == 0)
        add_hub_sums(src, p);
    verify_manifest_free(&m);
    buf_free(&mpath);
    buf_free(&text);
    return rc;
}

/* ---- the run -------------------------------------------------------------------- */

struct run {
    const struct xfer_plan *plan;
    const struct xfer_peer_out *out;
    struct xfer_send *s;
    pthread_mutex_t mu; /* the output, and the fields below */
    bool listening, got_end;
    atomic_bool ended;
    char addr[64];
    int port, cores;
    int64_t need, landed;
    double last_line; /* mono_s of the helper's last line */
    bool *wanted;     /* by id: the worker asked for bytes of it */
    struct buf text;  /* the helper's own lines, for an error */
};

static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct run *r, const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (r->out->text)
        r->out->text(r->out->arg, line);
}

/* On the node's I/O thread. */
static void on_line(void *ctx, const char *line, size_t len)
{
    struct run *r = ctx;
    char copy[1024];
    if (len >= sizeof copy)
        len = sizeof copy - 1;
    memcpy(copy, line, len);
    copy[len] = '\0';
    struct xfer_report x;
    xfer_report_parse(copy, r->plan->n, &x);
    pthread_mutex_lock(&r->mu);
    r->last_line = mono_s();
    const struct xfer_file *f =
        x.kind == XR_NEED || x.kind == XR_OK || x.kind == XR_BAD || x.kind == XR_FAIL
            ? &r->plan->f[x.id]
            : NULL;
    switch (x.kind) {
    case XR_NEED:
        if (!r->listening) {
            xfer_send_need(r->s, (int)x.id, x.a, x.b);
            r->need += x.b - x.a;
            r->wanted[x.id] = true;
        }
        break;
    case XR_LISTEN:
        snprintf(r->addr, sizeof r->addr, "%s", x.addr);
        r->port = x.port;
        r->listening = true;
        break;
    case XR_OK:
        xfer_send_report(r->s, &x);
        if (r->wanted[x.id] && r->out->file)
            r->out->file(r->out->arg, f->path, f->size);
        break;
    case XR_BAD:
        xfer_send_report(r->s, &x);
        say(r, "%s: its hash differed on the worker: sending it again", f->path);
        break;
    case XR_FAIL:
        xfer_send_report(r->s, &x);
        break;
    case XR_PROGRESS:
        r->landed = x.a;
        break;
    case XR_REFUSED:
        say(r, "refused a stream from %s: no token or a wrong one", x.addr);
        break;
    case XR_END:
        r->got_end = true;
        break;
    case XR_CORES:
        r->cores = (int)x.a;
        break;
    case XR_TEXT: {
        char clean[1024]; /* the remote side's words: shown, never obeyed */
        text_clean(clean, sizeof clean, copy, strlen(copy));
        if (r->text.len < 4096)
            buf_printf(&r->text, "%s%s", r->text.len ? "; " : "", clean);
        say(r, "%s", clean);
        break;
    }
    }
    pthread_mutex_unlock(&r->mu);
}

static void on_event(void *ctx, bool up)
{
    if (!up)
        atomic_store(&((struct run *)ctx)->ended, true);
}

/* Where the helper listens: the fabric's address (configured, or the one a
 * snapshot detects, as launch does), else the address ssh reached. */
static void listen_addr(const struct config *c, struct cluster_node *cn, char *out, size_t sz)
{
    snprintf(out, sz, "ssh");
    if (cn->ov.ip && *cn->ov.ip) {
        snprintf(out, sz, "%s", cn->ov.ip);
        return;
    }
    struct snapshot *s = calloc(1, sizeof *s);
    if (s &&
        snapshot_collect_opt(&cn->node, config_str(c, CFG_RUNTIME), 0, &cn->ov, 30000, true, s) ==
            0 &&
        s->fabric.ok && s->fabric.ipv4[0])
        snprintf(out, sz, "%s", s->fabric.ipv4);
    free(s);
}

/* The helper, the plan and the token on the node; the command that runs it. */
static int install(const struct config *c, struct cluster_node *cn, const struct xfer_plan *plan,
                   const char *token, const char *addr, bool dry_run, struct shcmd *cmd,
                   struct buf *err)
{
    char state[512], model[512];
    if (cluster_state_dir(c, cn, state, sizeof state, err) < 0 ||
        cluster_model_dir(cn, model, sizeof model, err) < 0)
        return -1;
    struct buf bin = BUF_INIT, path = BUF_INIT, ppath = BUF_INIT, tpath = BUF_INIT, text = BUF_INIT;
    int rc = helper_read(XFER_HELPER, &bin, err);
    if (rc == 0)
        rc = helper_install(cn, state, XFER_HELPER, &bin, &path, err);
    buf_printf(&ppath, "%s/copy-plan.txt", state);
    buf_printf(&tpath, "%s/copy-token", state);
    xfer_plan_format(plan, &text);
    if (rc == 0)
        rc = node_put(&cn->node, buf_str(&ppath), text.data, text.len, 0600, err);
    if (rc == 0) /* read and removed by the helper */
        rc = node_put(&cn->node, buf_str(&tpath), token, strlen(token), 0600, err);
    if (rc == 0) {
        shcmd_script(cmd, "exec \"$@\" 2>&1");
        shcmd_arg(cmd, buf_str(&path));
        shcmd_arg(cmd, "--dir");
        shcmd_arg(cmd, model);
        shcmd_arg(cmd, "--plan");
        shcmd_arg(cmd, buf_str(&ppath));
        shcmd_arg(cmd, "--token-file");
        shcmd_arg(cmd, buf_str(&tpath));
        shcmd_arg(cmd, "--listen");
        shcmd_arg(cmd, addr);
        if (dry_run)
            shcmd_arg(cmd, "--dry-run");
    }
    buf_free(&bin);
    buf_free(&path);
    buf_free(&ppath);
    buf_free(&tpath);
    buf_free(&text);
    return rc;
}

static bool cancelled(const atomic_int *cancel)
{
    return cancel && atomic_load(cancel);
}

int xfer_peer_run(const struct config *c, struct cluster_node *cn, const char *src,
                  const struct xfer_plan *plan, const _Atomic int *ready, int streams, bool dry_run,
                  const atomic_int *cancel, const struct xfer_peer_out *out, struct buf *err)
{
    unsigned char raw[XFER_TOKEN_HEX / 2];
    char token[XFER_TOKEN_HEX + 1], addr[64];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        buf_puts(err, "no random bytes for the token");
        return -1;
    }
    verify_hex(raw, token); /* 32 bytes: 64 hex digits */
    listen_addr(c, cn, addr, sizeof addr);
    struct shcmd cmd = SHCMD_INIT;
    if (install(c, cn, plan, token, addr, dry_run, &cmd, err) < 0) {
        shcmd_free(&cmd);
        return -1;
    }
    struct run r = {.plan = plan, .out = out};
    r.s = xfer_send_new(src, plan, ready);
    r.wanted = calloc((size_t)(plan->n ? plan->n : 1), sizeof *r.wanted);
    if (!r.s || !r.wanted) {
        buf_puts(err, "out of memory");
        xfer_send_free(r.s);
        free(r.wanted);
        shcmd_free(&cmd);
        return -1;
    }
    pthread_mutex_init(&r.mu, NULL);
    atomic_init(&r.ended, false);
    struct node_stream *ns = node_stream_open(&cn->node, &cmd, on_line, on_event, &r);
    shcmd_free(&cmd);
    int rc = -1;
    if (!ns) {
        buf_printf(err, "%s: cannot start %s", cn->name, XFER_HELPER);
        goto out;
    }
    /* until it listens (or, dry, ends): a worker with files in place hashes
     * them first, saying so; a helper silent this long is stuck */
    r.last_line = mono_s();
    bool stuck = false;
    for (;;) {
        pthread_mutex_lock(&r.mu);
        bool go = dry_run ? r.got_end : r.listening;
        stuck = mono_s() - r.last_line > LISTEN_SILENCE_S;
        pthread_mutex_unlock(&r.mu);
        if (go || stuck || atomic_load(&r.ended) || cancelled(cancel))
            break;
        usleep(50000);
    }
    if (stuck)
        buf_printf(err, "%s: %s said nothing for %d s before it listened: stopped", cn->name,
                   XFER_HELPER, LISTEN_SILENCE_S);
    pthread_mutex_lock(&r.mu);
    if (dry_run && r.got_end) {
        for (int i = 0; i < plan->n; i++)
            if (r.wanted[i] && out->file)
                out->file(out->arg, plan->f[i].path, plan->f[i].size);
        rc = 0;
    } else if (!r.listening && !cancelled(cancel) && !stuck) {
        buf_printf(err, "%s: %s", cn->name,
                   r.text.len ? buf_str(&r.text) : "the helper ended before it listened");
    }
    bool go = r.listening;
    int64_t total = 0;
    for (int i = 0; i < plan->n; i++)
        total += plan->f[i].size;
    pthread_mutex_unlock(&r.mu);
    if (!go)
        goto out;
    if (streams <= 0) { /* one per core of the smaller end: each stream costs a core's
                         * share of copying and (on the worker) hashing */
        long here = sysconf(_SC_NPROCESSORS_ONLN);
        streams = (int)(here < r.cores || !r.cores ? here : r.cores);
        streams = streams < 2 ? 2 : streams > 16 ? 16 : streams;
    }
    if (xfer_send_start(r.s, r.addr, r.port, token, streams, err) < 0)
        goto out;
    double t0 = mono_s(), done_at = 0;
    struct xfer_peer_progress p = {.total = total};
    for (;;) {
        usleep(200000);
        xfer_send_stats(r.s, &p.s);
        pthread_mutex_lock(&r.mu);
        p.need = r.need;
        p.landed = r.landed;
        p.elapsed_s = mono_s() - t0;
        bool end = r.got_end;
        if (out->tick)
            out->tick(out->arg, &p);
        pthread_mutex_unlock(&r.mu);
        if (p.s.finished && !done_at)
            done_at = mono_s();
        /* the helper's end line follows the last file; a few seconds for it */
        if ((p.s.finished && (end || mono_s() - done_at > 10)) || atomic_load(&r.ended) ||
            cancelled(cancel) || (p.s.err[0] && !p.s.finished))
            break;
    }
    if (cancelled(cancel)) {
        rc = 1;
    } else if (p.s.finished) {
        rc = p.s.failed ? 1 : 0;
        if (p.s.err[0])
            say(&r, "%s", p.s.err);
    } else if (p.s.err[0]) {
        buf_printf(err,
                   "%s: the streams to %s port %d failed: %s (run copy-to-peer again to "
                   "resume; --rsync copies through ssh)",
                   cn->name, r.addr, r.port, p.s.err);
    } else {
        pthread_mutex_lock(&r.mu);
        buf_printf(err,
                   "%s: the helper ended before the copy did%s%s (the ssh session "
                   "broke? run copy-to-peer again to resume)",
                   cn->name, r.text.len ? ": " : "", buf_str(&r.text));
        pthread_mutex_unlock(&r.mu);
    }
out:
    /* closing the channel ends the helper: it saves what landed */
    if (ns)
        node_stream_close(&cn->node, ns);
    xfer_send_free(r.s);
    pthread_mutex_destroy(&r.mu);
    buf_free(&r.text);
    free(r.wanted);
    return rc;
}
