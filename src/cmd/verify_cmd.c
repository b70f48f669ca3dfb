/* `dsv41-top verify`: the checkpoint against its sha256 manifest, on this
 * node or on any node of the cluster (verify_peer). A line per file as it
 * ends, a progress bar on a terminal (a progress line every few seconds
 * otherwise: a console job shows it), a summary per node, and an exit
 * status a script can use. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "hashfile.h"
#include "interrupt.h"
#include "mono.h"
#include "progress.h"
#include "verify.h"
#include "verify_peer.h"
#include "usage.h"

const struct usage_doc verify_doc = {
    "verify", NULL,
    "the checkpoint against its sha256 manifest",
    "Checks the checkpoint's files against its sha256 manifest (sha256sum's format), hashing "
    "several files at once.",
    (const struct usage_exit[]){{0, "every file matches"},
                                {1, "a file is missing, unreadable or differs (or the run was interrupted)"},
                                {2, "a usage or manifest error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--node", "NAME", "on that node (head, worker, worker2, ...): a worker hashes its "
                           "WORKER_MODEL_DIR itself, against the head's manifest (dsv41-verify "
                           "is pushed to it)"},
        {"--all", NULL, "on every node, one after another"},
        {"--dir", "DIR", "the head's checkpoint (default MODEL_DIR)"},
        {"--manifest", "FILE", "the manifest (default DIR/sha256-manifest.txt)"},
        {"--jobs", "N", "files hashed at once (default: cores, at most 4)"},
        {"--json", NULL, "one JSON object on stdout instead of lines"},
        {"--progress", "SECONDS", "a progress line this often when stderr is not a terminal (default 5; 0: none)"},
        {"PATH...", NULL, "only these entries of the manifest"},
        {NULL, NULL, NULL}}};

struct ctx {
    struct verify_progress p;
    const char *node; /* prefixes the lines when nodes are named */
    double t0;
    double every_s; /* progress line period when not a terminal */
    bool json;
    struct progress_out out;
};

static void tick(void *arg)
{
    struct ctx *x = arg;
    if (!progress_out_due(&x->out))
        return;
    struct buf line = BUF_INIT;
    buf_printf(&line, "verify%s%s%s", x->node ? " " : "", x->node ? x->node : "",
               x->out.tty ? " " : ": ");
    progress_format(&line, x->p.done_bytes, x->p.total_bytes, mono_s() - x->t0,
                    x->out.tty ? 30 : 0);
    progress_out_show(&x->out, buf_str(&line));
    buf_free(&line);
}

static void file_done(const struct verify_entry *e, void *arg)
{
    struct ctx *x = arg;
    if (x->json)
        return;
    progress_out_clear(&x->out);
    if (x->node)
        printf("%s: ", x->node);
    char size[32] = "", want[65], got[65];
    if (e->size >= 0)
        progress_bytes(size, sizeof size, (double)e->size);
    switch (e->res) {
    case VERIFY_OK:
        printf("OK          %s  (%s)\n", e->path, size);
        break;
    case VERIFY_MISMATCH:
        verify_hex(e->want, want);
        verify_hex(e->got, got);
        printf("FAILED      %s: sha256 differs\n            want %s\n            got  %s\n",
               e->path, want, got);
        break;
    case VERIFY_MISSING:
        printf("MISSING     %s\n", e->path);
        break;
    case VERIFY_UNREADABLE:
        printf("UNREADABLE  %s: %s\n", e->path, verify_error(e));
        break;
    default:
        printf("%-11s %s\n", verify_result_name(e->res), e->path);
        break;
    }
    fflush(stdout);
}

/* One node's run as JSON (the shape of a single-node `--json`). */
static cJSON *json_node(const struct verify_manifest *m, const char *node, const char *dir,
                        const char *manifest, const struct ctx *x, double secs, int bad)
{
    cJSON *o = cJSON_CreateObject();
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    cJSON_AddStringToObject(o, "dir", dir);
    cJSON_AddStringToObject(o, "manifest", manifest);
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (int i = 0; i < m->n; i++) {
        const struct verify_entry *e = &m->e[i];
        cJSON *f = cJSON_CreateObject();
        char hex[65];
        cJSON_AddStringToObject(f, "path", e->path);
        cJSON_AddStringToObject(f, "result", verify_result_name(e->res));
        if (e->size >= 0)
            cJSON_AddNumberToObject(f, "size", (double)e->size);
        else
            cJSON_AddNullToObject(f, "size");
        verify_hex(e->want, hex);
        cJSON_AddStringToObject(f, "sha256_expected", hex);
        if (e->res == VERIFY_OK || e->res == VERIFY_MISMATCH) {
            verify_hex(e->got, hex);
            cJSON_AddStringToObject(f, "sha256", hex);
        } else {
            cJSON_AddNullToObject(f, "sha256");
        }
        if (e->res == VERIFY_UNREADABLE)
            cJSON_AddStringToObject(f, "error", verify_error(e));
        cJSON_AddItemToArray(files, f);
    }
    cJSON_AddNumberToObject(o, "ok", m->n - bad);
    cJSON_AddNumberToObject(o, "failed", bad);
    cJSON_AddNumberToObject(o, "bytes", (double)atomic_load(&x->p.done_bytes));
    cJSON_AddNumberToObject(o, "seconds", secs);
    cJSON_AddBoolToObject(o, "interrupted", atomic_load(interrupt_token()) != 0);
    return o;
}

static void print_json(cJSON *o)
{
    char *s = cJSON_Print(o);
    if (s)
        puts(s);
    free(s);
    cJSON_Delete(o);
}

static int default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

struct opts {
    const char *dir, *manifest, *node;
    bool all;
    int jobs;
    char **paths;
    int npaths;
};

/* One node's run: its file lines, then its summary line (or its JSON
 * object into arr). Returns the files not OK, or -1 when it could not run
 * (said on stderr). */
static int run_node(const struct config *c, struct cluster_node *cn, const char *dir,
                    struct verify_manifest *m, const char *mpath, const char *mtext,
                    const struct opts *o, struct ctx *x, cJSON *arr)
{
    memset(&x->p, 0, sizeof x->p);
    x->t0 = mono_s();
    /* progress lines into the JSON's stream would spoil the object */
    progress_out_init(&x->out, x->every_s, x->json ? stderr : stdout);
    /* --dir moves the head's checkpoint; a worker's "~/" is its own home */
    const char *where = dir;
    char wdir[512];
    struct buf werr = BUF_INIT;
    if (cn && !cn->node.local) {
        if (cluster_model_dir(cn, wdir, sizeof wdir, &werr) < 0) {
            fprintf(stderr, "dsv41-top verify: %s\n", buf_str(&werr));
            buf_free(&werr);
            return -1;
        }
        where = wdir;
    }
    if (!x->json)
        printf("verify: %d file(s)%s%s in %s against %s, %d at once\n", m->n, cn ? " on " : "",
               cn ? cn->name : "", where, mpath, o->jobs < m->n ? o->jobs : m->n);
    fflush(stdout);
    struct buf err = BUF_INIT;
    int bad;
    if (!cn || cn->node.local) {
        bad = verify_run(m, where, o->jobs, interrupt_token(), &x->p, file_done, x, tick);
        if (bad < 0)
            buf_printf(&err, "%s: %s", where, strerror(errno));
    } else {
        bad = verify_peer_run(c, cn, m, mtext, o->jobs, interrupt_token(), &x->p, file_done, x, tick,
                              &err);
    }
    progress_out_clear(&x->out);
    double secs = mono_s() - x->t0;
    if (err.len)
        fprintf(stderr, "dsv41-top verify: %s\n", buf_str(&err));
    buf_free(&err);
    if (bad < 0)
        return -1;
    if (x->json) {
        cJSON *obj = json_node(m, cn ? cn->name : NULL, where, mpath, x, secs, bad);
        if (arr)
            cJSON_AddItemToArray(arr, obj);
        else
            print_json(obj);
    } else {
        char total[32], rate[32], took[32];
        int64_t done = atomic_load(&x->p.done_bytes);
        progress_bytes(total, sizeof total, (double)done);
        progress_bytes(rate, sizeof rate, secs > 0 ? (double)done / secs : 0);
        progress_duration(took, sizeof took, secs);
        printf("verify%s%s: %d of %d file(s) OK, %s hashed in %s (%s/s)%s\n", cn ? " " : "",
               cn ? cn->name : "", m->n - bad, m->n, total, took, rate,
               atomic_load(interrupt_token()) ? "; interrupted" : "");
        if (!cn) { /* a node's run is its own process's: this one's says nothing of it */
            char how[128];
            hashfile_describe(how, sizeof how);
            printf("verify: the bytes reached the hash by %s\n", how);
        }
    }
    return bad;
}

/* --node / --all: the nodes of the cluster, one after another. */
static int run_nodes(const struct config *c, struct verify_manifest *m, const char *mpath,
                     const char *mtext, const struct opts *o, struct ctx *x)
{
    struct cluster cl;
    if (cluster_open_for("verify", c, &cl) < 0)
        return 2;
    int rc = 0, found = 0;
    cJSON *all = x->json ? cJSON_CreateObject() : NULL;
    cJSON *arr = all ? cJSON_AddArrayToObject(all, "nodes") : NULL;
    for (int i = 0; i < cl.n && !atomic_load(interrupt_token()); i++) {
        struct cluster_node *cn = &cl.nodes[i];
        if (o->node ? strcmp(cn->name, o->node) != 0 : !cn->configured)
            continue;
        found++;
        if (!cn->configured) {
            fprintf(stderr, "dsv41-top verify: %s is not configured (set WORKER)\n", cn->name);
            rc = 2;
            continue;
        }
        x->node = cn->name;
        int bad = run_node(c, cn, o->dir, m, mpath, mtext, o, x, arr);
        if (bad != 0 && rc == 0)
            rc = 1;
    }
    if (!found) {
        fprintf(stderr, "dsv41-top verify: no node is named %s (", o->node);
        for (int i = 0; i < cl.n; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", cl.nodes[i].name);
        fprintf(stderr, ")\n");
        rc = 2;
    }
    if (all) {
        cJSON_AddBoolToObject(all, "ok", rc == 0);
        print_json(all);
    }
    cluster_close(&cl);
    return rc;
}

/* The manifest read and parsed (and cut to paths when given), the signal
 * handlers in place; -1 when it cannot be (said on stderr). */
static int load_manifest(const char *path, char **paths, int npaths, struct buf *text,
                         struct verify_manifest *m)
{
    struct buf err = BUF_INIT;
    int rc = -1;
    if (buf_read_file(text, path, 64u << 20) < 0)
        fprintf(stderr, "dsv41-top verify: cannot read the manifest %s: %s\n", path,
                strerror(errno));
    else if (verify_manifest_parse(buf_str(text), path, m, &err) < 0 ||
             (npaths && verify_manifest_select(m, paths, npaths, &err) < 0))
        fprintf(stderr, "dsv41-top verify: %s\n", buf_str(&err));
    else
        rc = 0;
    buf_free(&err);
    interrupt_catch();
    return rc;
}

int cmd_verify(const struct config *c, int argc, char **argv)
{
    struct opts o = {.dir = config_str(c, CFG_MODEL_DIR), .jobs = default_jobs()};
    struct ctx x = {.every_s = 5};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            o.dir = argv[++i];
        else if (strcmp(argv[i], "--manifest") == 0 && i + 1 < argc)
            o.manifest = argv[++i];
        else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc)
            o.node = argv[++i];
        else if (strcmp(argv[i], "--all") == 0)
            o.all = true;
        else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
            o.jobs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc)
            x.every_s = atof(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            x.json = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_print(stdout, &verify_doc);
            return 0;
        } else if (argv[i][0] == '-') {
            usage_print(stderr, &verify_doc);
            return 2;
        } else {
            o.paths = &argv[i];
            o.npaths = argc - i;
            break;
        }
    }
    if (o.jobs < 1 || o.jobs > VERIFY_MAX_JOBS || x.every_s < 0 || (o.all && o.node)) {
        fprintf(stderr, "dsv41-top verify: --jobs is 1..%d, --progress 0 or more, and --node "
                        "or --all, not both\n",
                VERIFY_MAX_JOBS);
        return 2;
    }
    struct buf mpath = BUF_INIT, text = BUF_INIT;
    if (o.manifest)
        buf_puts(&mpath, o.manifest);
    else
        buf_printf(&mpath, "%s/sha256-manifest.txt", o.dir);
    struct verify_manifest m = {0};
    int rc = 2;
    if (load_manifest(buf_str(&mpath), o.paths, o.npaths, &text, &m) < 0)
        goto out;
    if (o.node || o.all) {
        rc = run_nodes(c, &m, buf_str(&mpath), buf_str(&text), &o, &x);
    } else {
        int bad = run_node(c, NULL, o.dir, &m, buf_str(&mpath), buf_str(&text), &o, &x, NULL);
        rc = bad < 0 ? 2 : bad ? 1 : 0;
    }
    if (rc == 0 && atomic_load(interrupt_token()))
        rc = 1;
out:
    verify_manifest_free(&m);
    buf_free(&mpath);
    buf_free(&text);
    return rc;
}

int verify_on_node(const struct config *c, struct cluster_node *cn, double progress_s)
{
    struct opts o = {.dir = config_str(c, CFG_MODEL_DIR), .jobs = default_jobs()};
    struct ctx x = {.every_s = progress_s, .node = cn->name};
    struct buf mpath = BUF_INIT, text = BUF_INIT;
    buf_printf(&mpath, "%s/sha256-manifest.txt", o.dir);
    struct verify_manifest m = {0};
    int rc = 2;
    if (load_manifest(buf_str(&mpath), NULL, 0, &text, &m) == 0) {
        int bad = run_node(c, cn, o.dir, &m, buf_str(&mpath), buf_str(&text), &o, &x, NULL);
        rc = bad < 0 ? 2 : bad || atomic_load(interrupt_token()) ? 1 : 0;
    }
    verify_manifest_free(&m);
    buf_free(&mpath);
    buf_free(&text);
    return rc;
}
