/* `dsv41-top download`: the checkpoint from the hub into MODEL_DIR, resumable
 * (see src/download/download.h). The revision is resolved to a commit once
 * and pinned in the directory's state, so a resumed download never mixes two
 * revisions. A bar on a terminal, a line every few seconds otherwise, JSON
 * lines for scripts; exit 0 only when every file is complete and verified. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "interrupt.h"
#include "dlcopy.h"
#include "download.h"
#include "mono.h"
#include "progress.h"
#include "usage.h"

const struct usage_doc download_doc = {
    "download", NULL, "the checkpoint from the hub",
    "Fetches the checkpoint from the Hugging Face hub (HF_ENDPOINT) into DIR (default "
    "MODEL_DIR): several files at once and parallel ranges within a large one, each file hashed "
    "as it lands and put in place only when its sum matches; the Engram shards the hub holds as "
    ".partNN pieces are written straight into the shard (no part file, no second copy: the disk "
    "needed is the checkpoint's size), then checked whole against sha256-manifest.txt. Run it "
    "again after a kill, a reboot or a full disk: it continues where it stopped.\n\n"
    "The token (HF_TOKEN, else the file HF_TOKEN_PATH) goes to the hub only, never to the CDN "
    "its redirects name. KEEP_PARTS=1 also writes each shard's parts out.",
    (const struct usage_exit[]){{0, "every file complete and verified"},
                                {1, "a file failed or the run was interrupted (run it again to resume)"},
                                {2, "usage, hub or disk error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--dir", "DIR", "where the checkpoint goes (default MODEL_DIR)"},
        {"--repo", "REPO", "the repository (default HF_REPO)"},
        {"--revision", "REV",
         "a branch, tag or commit (default REVISION); resolved to a commit once and pinned in "
         "DIR's state"},
        {"--include", "GLOB", "only files matching (again for more); a shard's parts go with "
                              "their shard"},
        {"--connections", "N", "transfers at once (default 16)"},
        {"--chunk", "MIB", "the size of a range (default 64)"},
        {"--verify", NULL, "hash the files already complete again"},
        {"--fresh", NULL, "forget the pinned commit and what an earlier run fetched"},
        {"--to-workers", NULL,
         "also copy each file to every worker as soon as it is verified here (copy-to-peer's "
         "streams, overlapped with the download; DOWNLOAD_TO_WORKERS=1 makes it the default)"},
        {"--dry-run", NULL, "what would be fetched, and the disk it needs"},
        {"--json", NULL, "JSON lines on stdout instead of text"},
        {"--progress", "SECONDS", "a progress line this often when stderr is not a terminal (default 5; 0: none)"},
        {NULL, NULL, NULL}}};

struct ui {
    bool json;
    struct progress_out out;
    double t0;
    struct dlcopy *copy; /* --to-workers */
};

static void json_line(const char *kind, const struct dl_status *s)
{
    printf("{\"event\":\"%s\",\"done\":%lld,\"total\":%lld,\"fetched\":%lld,\"rate\":%.0f,"
           "\"files_done\":%d,\"files\":%d,\"busy\":%d",
           kind, (long long)s->done, (long long)s->total, (long long)s->fetched, s->rate,
           s->files_done, s->files, s->busy);
    if (s->path) {
        printf(",\"path\":\"");
        for (const char *p = s->path; *p; p++)
            printf(*p == '"' || *p == '\\' ? "\\%c" : (unsigned char)*p < 0x20 ? "?" : "%c", *p);
        printf("\"");
    }
    if (s->detail) {
        printf(",\"detail\":\"");
        for (const char *p = s->detail; *p; p++)
            printf(*p == '"' || *p == '\\' ? "\\%c" : (unsigned char)*p < 0x20 ? "?" : "%c", *p);
        printf("\"");
    }
    printf("}\n");
}

static void on_event(enum dl_event_kind k, const struct dl_status *s, void *arg)
{
    struct ui *u = arg;
    static const char *names[] = {"progress", "verified", "skipped", "refetch", "retry", "failed"};
    if (u->json) {
        json_line(names[k], s);
        return;
    }
    if (k == DL_EV_PROGRESS) {
        if (!progress_out_due(&u->out))
            return;
        char done[32], total[32], rate[32], eta[32] = "";
        progress_bytes(done, sizeof done, (double)s->done);
        progress_bytes(total, sizeof total, (double)s->total);
        progress_bytes(rate, sizeof rate, s->rate);
        if (s->rate > 0)
            progress_duration(eta, sizeof eta, (double)(s->total - s->done) / s->rate);
        struct buf line = BUF_INIT;
        if (u->out.tty) {
            int w = 24, fill = s->total ? (int)((double)s->done / (double)s->total * w) : 0;
            buf_puts(&line, "[");
            for (int i = 0; i < w; i++)
                buf_puts(&line, i < fill ? "#" : ".");
            buf_puts(&line, "] ");
        } else {
            buf_puts(&line, "download: ");
        }
        buf_printf(&line, "%s of %s  %.1f %%  %s/s%s%s%s  files %d/%d  connections %d", done, total,
                   s->total ? 100.0 * (double)s->done / (double)s->total : 100.0, rate,
                   eta[0] ? "  " : "", eta, eta[0] ? " left" : "", s->files_done, s->files,
                   s->busy);
        if (u->copy) {
            char copied[256];
            dlcopy_status(u->copy, copied, sizeof copied);
            buf_printf(&line, "  copied: %s", copied);
        }
        progress_out_show(&u->out, buf_str(&line));
        buf_free(&line);
        return;
    }
    progress_out_clear(&u->out);
    if (u->copy && (k == DL_EV_FILE_OK || k == DL_EV_FILE_SKIP))
        dlcopy_ready(u->copy, s->path); /* verified here: it may go */
    if (k == DL_EV_FILE_OK)
        printf("OK          %s\n", s->path);
    else if (k == DL_EV_FILE_SKIP)
        printf("complete    %s (verified earlier)\n", s->path);
    else if (k == DL_EV_REFETCH)
        printf("REFETCH     %s\n", s->detail);
    else if (k == DL_EV_RETRY)
        fprintf(stderr, "retry: %s\n", s->detail);
    else if (k == DL_EV_FAILED)
        printf("FAILED      %s\n", s->detail ? s->detail : s->path);
}

static void hub_waiting(void *arg, const char *what)
{
    (void)arg;
    fprintf(stderr, "retry: %s\n", what);
}

struct args {
    const char *dir, *repo, *rev;
    char *include[64];
    int ninclude, connections, chunk_mib;
    bool verify, fresh, dry_run, json, to_workers;
    double every_s;
};

/* A whole number in [lo, hi]; false for anything else. */
static bool whole(const char *v, long lo, long hi, int *out)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || n < lo || n > hi)
        return false;
    *out = (int)n;
    return true;
}

static int parse(int argc, char **argv, const struct config *c, struct args *a)
{
    memset(a, 0, sizeof *a);
    a->dir = config_str(c, CFG_MODEL_DIR);
    a->repo = config_str(c, CFG_HF_REPO);
    a->rev = config_str(c, CFG_REVISION);
    a->connections = 16;
    a->chunk_mib = 64;
    a->every_s = 5;
    a->to_workers = strcmp(config_str(c, CFG_DOWNLOAD_TO_WORKERS), "1") == 0;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(f, "--dir") == 0 && v)
            a->dir = argv[++i];
        else if (strcmp(f, "--repo") == 0 && v)
            a->repo = argv[++i];
        else if (strcmp(f, "--revision") == 0 && v)
            a->rev = argv[++i];
        else if (strcmp(f, "--include") == 0 && v && a->ninclude < 64)
            a->include[a->ninclude++] = argv[++i];
        else if (strcmp(f, "--connections") == 0 && whole(v, 1, 256, &a->connections))
            i++;
        else if (strcmp(f, "--chunk") == 0 && whole(v, 1, 4096, &a->chunk_mib))
            i++;
        else if (strcmp(f, "--progress") == 0 && v && (a->every_s = strtod(v, &end)) >= 0 && !*end)
            i++;
        else if (strcmp(f, "--verify") == 0)
            a->verify = true;
        else if (strcmp(f, "--fresh") == 0)
            a->fresh = true;
        else if (strcmp(f, "--dry-run") == 0)
            a->dry_run = true;
        else if (strcmp(f, "--json") == 0)
            a->json = true;
        else if (strcmp(f, "--to-workers") == 0)
            a->to_workers = true;
        else if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            usage_print(stdout, &download_doc);
            return 1;
        } else {
            usage_print(stderr, &download_doc);
            return -1;
        }
    }
    if (a->to_workers && a->json) {
        fputs("dsv41-top download: --to-workers does not go with --json (the copy's lines are "
              "text)\n",
              stderr);
        return -1;
    }
    return 0;
}

/* The commit this download fetches: pinned by an earlier run, else now. */
static int pin(struct hub *h, struct dl_state *st, const struct args *a, struct buf *err)
{
    char now[41];
    if (hub_revision(h, a->rev, now, err) < 0)
        return -1;
    if (st->commit[0] && strcmp(st->repo, a->repo) == 0) {
        if (strcmp(st->commit, now) != 0)
            fprintf(stderr,
                    "note: %s now names %.12s; this download continues %.12s, pinned "
                    "when it began (--fresh starts over with the new one)\n",
                    a->rev, now, st->commit);
        return 0;
    }
    if (st->commit[0]) /* another repository's download in this directory */
        fprintf(stderr, "note: %s held a download of %s: starting over for %s\n", a->dir, st->repo,
                a->repo);
    dl_state_free(st);
    snprintf(st->repo, sizeof st->repo, "%s", a->repo);
    memcpy(st->commit, now, sizeof st->commit);
    return 0;
}

/* sha256-manifest.txt's text, checked against its git oid; NULL when the
 * repository has none. */
static int manifest(struct hub *h, const struct hub_tree *t, const char *commit, struct buf *text,
                    struct buf *err)
{
    const struct hub_file *f = hub_tree_find(t, "sha256-manifest.txt");
    if (!f)
        return 1;
    if (f->lfs || f->size > (4 << 20)) {
        buf_puts(err, "sha256-manifest.txt: the listing makes it a large file");
        return -1;
    }
    if (hub_fetch(h, commit, f->path, 4u << 20, text, err) < 0)
        return -1;
    char sha1[41];
    hub_git_sha1(buf_str(text), text->len, sha1);
    if (strcmp(sha1, f->sha1) != 0) {
        buf_printf(err, "sha256-manifest.txt: its bytes do not match the listing's oid %s",
                   f->sha1);
        return -1;
    }
    return 0;
}

static void dry_run(const struct dl_plan *p, const struct dl_state *st, int64_t need, int64_t avail)
{
    int64_t fetch = 0;
    for (int i = 0; i < p->n; i++) {
        const struct dl_output *o = &p->o[i];
        bool done = false;
        for (int k = 0; k < st->n; k++)
            done |= strcmp(st->f[k].path, o->path) == 0 && st->f[k].verified &&
                    st->f[k].size == o->size;
        char sz[32];
        progress_bytes(sz, sizeof sz, (double)o->size);
        if (o->split)
            printf("%s %-44s %9s  from %d parts, written in place\n",
                   done ? "complete" : "fetch   ", o->path, sz, o->np);
        else
            printf("%s %-44s %9s\n", done ? "complete" : "fetch   ", o->path, sz);
        fetch += done ? 0 : o->size;
    }
    char f[32], n[32], a[32], all[32];
    progress_bytes(f, sizeof f, (double)fetch);
    progress_bytes(all, sizeof all, (double)p->bytes);
    progress_bytes(n, sizeof n, (double)need);
    progress_bytes(a, sizeof a, (double)avail);
    printf("would fetch %s of %s; the disk needs %s more, the filesystem has %s free\n", f, all, n,
           a);
}

int cmd_download(const struct config *c, int argc, char **argv)
{
    struct args a;
    int pr = parse(argc, argv, c, &a);
    if (pr)
        return pr > 0 ? 0 : 2;
    if (mkdir(a.dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "dsv41-top download: cannot make %s: %s\n", a.dir, strerror(errno));
        return 2;
    }
    struct hub h;
    struct dl_state st = {0};
    struct hub_tree t = {0};
    struct dl_plan plan = {0};
    struct buf err = BUF_INIT, mtext = BUF_INIT;
    int rc = 2;
    if (dl_state_lock(a.dir, &err) < 0 || hub_open(&h, c, &err) < 0)
        goto out_noh;
    h.on_wait = hub_waiting; /* the listing's and the manifest's retries said as they come */
    snprintf(h.repo, sizeof h.repo, "%s", a.repo);
    int sl = dl_state_load(a.dir, &st, &err);
    if (sl < 0)
        goto out;
    if (a.fresh)
        dl_state_free(&st);
    if (pin(&h, &st, &a, &err) < 0 || hub_list(&h, st.commit, &t, &err) < 0)
        goto out;
    int m = manifest(&h, &t, st.commit, &mtext, &err);
    if (m < 0 ||
        dl_plan_build(&t, m == 0 ? buf_str(&mtext) : NULL, a.include, a.ninclude, &plan, &err) < 0)
        goto out;
    if (plan.n == 0) {
        buf_puts(&err, "no file of the repository matches --include");
        goto out;
    }
    if (plan.note[0])
        fprintf(stderr, "note: %s\n", plan.note);
    bool keep = strcmp(config_str(c, CFG_KEEP_PARTS), "1") == 0;
    int64_t need = 0, avail = 0;
    if (download_space(&plan, &st, a.dir, keep, &need, &avail, &err) < 0)
        goto out;
    if (a.dry_run) {
        printf("download: %s at %s (%s) into %s\n", a.repo, st.commit, a.rev, a.dir);
        dry_run(&plan, &st, need, avail);
        rc = 0;
        goto out;
    }
    if (need > avail) {
        char n[32], f[32];
        progress_bytes(n, sizeof n, (double)need);
        progress_bytes(f, sizeof f, (double)avail);
        buf_printf(&err,
                   "the download needs %s more on %s's filesystem, which has %s free: "
                   "free space (or --dir elsewhere) and run it again",
                   n, a.dir, f);
        goto out;
    }
    struct ui u = {.json = a.json, .t0 = mono_s()};
    progress_out_init(&u.out, a.every_s, stdout);
    interrupt_catch(); /* what landed is kept; a run again resumes */
    if (!a.json) { /* at once, also into a pipe or a file: from here a Ctrl-C is taken */
        printf("download: %s at %.12s into %s, %d connections\n", a.repo, st.commit, a.dir,
               a.connections);
        fflush(stdout);
    }
    struct dl_opts o = {.dir = a.dir,
                        .connections = a.connections,
                        .chunk = (int64_t)a.chunk_mib << 20,
                        .verify_all = a.verify,
                        .keep_parts = keep,
                        .cancel = interrupt_token(),
                        .on_event = on_event,
                        .arg = &u};
    if (a.to_workers && !(u.copy = dlcopy_start(c, &plan, a.dir, 0, interrupt_token(), &err)))
        goto out;
    int r = download_run(&h, &plan, &st, &o, &err);
    progress_out_clear(&u.out);
    if (u.copy) {
        if (r == 0)
            printf("download: complete here; waiting for the copies to the workers\n");
        fflush(stdout);
        int cr = dlcopy_finish(u.copy);
        u.copy = NULL;
        if (cr && r == 0) {
            buf_puts(&err, "the copy to a worker failed (above): run copy-to-peer to finish it");
            r = 1;
        } else if (r == 0) {
            printf("download: every worker has every file, verified as it landed\n");
        }
    }
    if (r == 0) {
        char all[32];
        progress_bytes(all, sizeof all, (double)plan.bytes);
        if (a.json)
            printf("{\"event\":\"end\",\"ok\":true}\n");
        else
            printf("download: %d file(s), %s, complete and verified in %s\n", plan.n, all, a.dir);
        rc = 0;
    } else {
        if (atomic_load(interrupt_token())) { /* what was in flight is not an error of its own */
            buf_reset(&err);
            buf_puts(&err, "interrupted: run download again to resume (what landed is kept)");
        }
        rc = r < 0 ? 2 : 1;
    }
out:
    hub_close(&h);
out_noh:
    if (rc && err.len) {
        if (a.json)
            printf("{\"event\":\"end\",\"ok\":false}\n");
        fprintf(stderr, "dsv41-top download: %s\n", buf_str(&err));
    }
    dl_plan_free(&plan);
    hub_tree_free(&t);
    dl_state_free(&st);
    buf_free(&mtext);
    buf_free(&err);
    return rc;
}
