/* verify_peer: see verify_peer.h. */
#include "verify_peer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper.h"
#include "probe.h"
#include "verify_wire.h"
#include "text.h"

#define VERIFY_HELPER "dsv41-verify"

struct peer {
    struct verify_manifest *m;
    struct verify_entry **sorted; /* by path, for the file lines */
    struct verify_progress *p;
    verify_done_fn done;
    void *arg;
    pthread_mutex_t mu; /* one done or tick call at a time; guards the rest */
    bool got_end;
    struct buf text; /* lines that are no report: the helper's own errors */
    atomic_bool ended;
};

static int cmp_entry_path(const void *a, const void *b)
{
    return strcmp((*(struct verify_entry *const *)a)->path, (*(struct verify_entry *const *)b)->path);
}

static struct verify_entry *find(struct peer *pe, const char *path)
{
    struct verify_entry key = {.path = (char *)path}, *kp = &key;
    struct verify_entry **hit =
        bsearch(&kp, pe->sorted, (size_t)pe->m->n, sizeof *pe->sorted, cmp_entry_path);
    return hit ? *hit : NULL;
}

/* On the node's I/O thread. */
static void on_line(void *ctx, const char *line, size_t len)
{
    struct peer *pe = ctx;
    char copy[8192];
    if (len >= sizeof copy)
        len = sizeof copy - 1;
    memcpy(copy, line, len);
    copy[len] = '\0';
    struct verify_wire *w = malloc(sizeof *w);
    if (!w)
        return;
    verify_wire_parse(copy, w);
    pthread_mutex_lock(&pe->mu);
    struct verify_entry *e = w->kind == VW_FILE ? find(pe, w->e.path) : NULL;
    if (w->kind == VW_PROGRESS) {
        atomic_store(&pe->p->done_bytes, w->done);
        atomic_store(&pe->p->total_bytes, w->total);
    } else if (e && e->res == VERIFY_PENDING) {
        e->res = w->e.res;
        e->size = w->e.size;
        e->err = w->e.err;
        e->not_regular = w->e.not_regular;
        memcpy(e->got, w->e.got, sizeof e->got);
        atomic_fetch_add(&pe->p->files_done, 1);
        if (pe->done)
            pe->done(e, pe->arg);
    } else if (w->kind == VW_END) {
        pe->got_end = true;
    } else if (pe->text.len < 4096) {
        /* shown to the operator: no control bytes from the remote side */
        char clean[512];
        text_clean(clean, sizeof clean, copy, strlen(copy));
        buf_printf(&pe->text, "%s%s", pe->text.len ? "; " : "", clean);
    }
    pthread_mutex_unlock(&pe->mu);
    free(w);
}

static void on_event(void *ctx, bool up)
{
    if (!up)
        atomic_store(&((struct peer *)ctx)->ended, true);
}

/* The helper and the manifest on the node; the command that runs it. */
static int install(const struct config *c, struct cluster_node *cn, const char *manifest_text,
                   int jobs, struct shcmd *cmd, struct buf *err)
{
    char state[512], model[512];
    if (cluster_state_dir(c, cn, state, sizeof state, err) < 0 ||
        cluster_model_dir(cn, model, sizeof model, err) < 0)
        return -1;
    struct buf bin = BUF_INIT, path = BUF_INIT, mpath = BUF_INIT;
    int rc = helper_read(VERIFY_HELPER, &bin, err);
    if (rc == 0)
        rc = helper_install(cn, state, VERIFY_HELPER, &bin, &path, err);
    buf_printf(&mpath, "%s/verify-manifest.txt", state);
    if (rc == 0)
        rc = node_put(&cn->node, buf_str(&mpath), manifest_text, strlen(manifest_text), 0600, err);
    if (rc == 0) {
        shcmd_script(cmd, "exec \"$@\" 2>&1");
        shcmd_arg(cmd, buf_str(&path));
        shcmd_arg(cmd, "--dir");
        shcmd_arg(cmd, model);
        shcmd_arg(cmd, "--manifest");
        shcmd_arg(cmd, buf_str(&mpath));
        shcmd_arg(cmd, "--jobs");
        shcmd_argf(cmd, "%d", jobs);
    }
    buf_free(&bin);
    buf_free(&path);
    buf_free(&mpath);
    return rc;
}

int verify_peer_run(const struct config *c, struct cluster_node *cn, struct verify_manifest *m,
                    const char *manifest_text, int jobs, const atomic_int *cancel,
                    struct verify_progress *p, verify_done_fn done, void *arg,
                    verify_tick_fn tick, struct buf *err)
{
    struct shcmd cmd = SHCMD_INIT;
    if (install(c, cn, manifest_text, jobs, &cmd, err) < 0) {
        shcmd_free(&cmd);
        return -1;
    }
    struct peer pe = {.m = m, .p = p, .done = done, .arg = arg};
    pe.sorted = malloc((size_t)m->n * sizeof *pe.sorted);
    if (!pe.sorted) {
        buf_puts(err, "out of memory");
        shcmd_free(&cmd);
        return -1;
    }
    verify_manifest_reset(m);
    for (int i = 0; i < m->n; i++)
        pe.sorted[i] = &m->e[i];
    qsort(pe.sorted, (size_t)m->n, sizeof *pe.sorted, cmp_entry_path);
    pthread_mutex_init(&pe.mu, NULL);
    atomic_init(&pe.ended, false);
    struct node_stream *st = node_stream_open(&cn->node, &cmd, on_line, on_event, &pe);
    shcmd_free(&cmd);
    if (!st) {
        buf_printf(err, "%s: cannot start %s", cn->name, VERIFY_HELPER);
        pthread_mutex_destroy(&pe.mu);
        free(pe.sorted);
        return -1;
    }
    while (!atomic_load(&pe.ended) && !(cancel && atomic_load(cancel))) {
        usleep(200000);
        pthread_mutex_lock(&pe.mu);
        if (tick && !pe.got_end)
            tick(arg);
        pthread_mutex_unlock(&pe.mu);
    }
    /* closing the channel ends the helper: its next progress line fails */
    node_stream_close(&cn->node, st);
    int bad = 0;
    for (int i = 0; i < m->n; i++) {
        if (m->e[i].res == VERIFY_PENDING) { /* never reported: said as not done */
            m->e[i].res = VERIFY_CANCELLED;
            if (done)
                done(&m->e[i], arg);
        }
        bad += m->e[i].res != VERIFY_OK;
    }
    if (!pe.got_end && !(cancel && atomic_load(cancel)))
        buf_printf(err, "%s: the verify ended before its report%s%s", cn->name,
                   pe.text.len ? ": " : " (the ssh session broke?)", buf_str(&pe.text));
    pthread_mutex_destroy(&pe.mu);
    buf_free(&pe.text);
    free(pe.sorted);
    return bad;
}
