/* `dsv41-top verify`: the checkpoint against its sha256 manifest, on this
 * node. A line per file as it ends, a progress bar on a terminal (a
 * progress line every few seconds otherwise: a console job shows it), a
 * summary, and an exit status a script can use. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "progress.h"
#include "verify.h"

static const char VERIFY_USAGE[] =
    "usage: dsv41-top verify [--dir DIR] [--manifest FILE] [--jobs N] [--json]\n"
    "                        [--progress SECONDS] [PATH...]\n"
    "\n"
    "Checks the checkpoint's files against its sha256 manifest (sha256sum's\n"
    "format), hashing several files at once.\n"
    "\n"
    "  --dir DIR          the checkpoint (default MODEL_DIR)\n"
    "  --manifest FILE    the manifest (default DIR/sha256-manifest.txt)\n"
    "  --jobs N           files hashed at once (default: cores, at most 4)\n"
    "  --json             one JSON object on stdout instead of lines\n"
    "  --progress SECONDS a progress line this often when stderr is not a\n"
    "                     terminal (default 5; 0: none)\n"
    "  PATH...            only these entries of the manifest\n"
    "\n"
    "Exit status: 0 every file matches; 1 a file is missing, unreadable or\n"
    "differs (or the run was interrupted); 2 a usage or manifest error.\n";

/* lock-free atomics are safe in a handler and visible to the hashing threads */
static atomic_int g_cancel;

static void on_signal(int sig)
{
    (void)sig;
    g_cancel = 1;
}

struct ctx {
    struct verify_progress p;
    double t0, last_line;
    double every_s; /* progress line period when not a terminal */
    bool tty, json, bar_shown;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clear_bar(struct ctx *x)
{
    if (x->bar_shown) {
        fputs("\r\033[K", stderr);
        x->bar_shown = false;
    }
}

static void tick(void *arg)
{
    struct ctx *x = arg;
    double t = now_s();
    struct buf line = BUF_INIT;
    if (x->tty) {
        progress_format(&line, x->p.done_bytes, x->p.total_bytes, t - x->t0, 30);
        fprintf(stderr, "\r\033[Kverify %s", buf_str(&line));
        fflush(stderr);
        x->bar_shown = true;
    } else if (x->every_s > 0 && t - x->last_line >= x->every_s) {
        progress_format(&line, x->p.done_bytes, x->p.total_bytes, t - x->t0, 0);
        /* into the JSON's stream it would spoil the object: stderr then */
        fprintf(x->json ? stderr : stdout, "verify: %s\n", buf_str(&line));
        x->last_line = t;
    }
    buf_free(&line);
}

static void file_done(const struct verify_entry *e, void *arg)
{
    struct ctx *x = arg;
    if (x->json)
        return;
    clear_bar(x);
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

static void print_json(const struct verify_manifest *m, const char *dir, const char *manifest,
                       const struct ctx *x, double secs, int bad)
{
    cJSON *o = cJSON_CreateObject();
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
    cJSON_AddNumberToObject(o, "bytes", (double)x->p.done_bytes);
    cJSON_AddNumberToObject(o, "seconds", secs);
    cJSON_AddBoolToObject(o, "interrupted", g_cancel != 0);
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

int cmd_verify(const struct config *c, int argc, char **argv)
{
    const char *dir = config_get(c, "MODEL_DIR"), *manifest = NULL;
    int jobs = default_jobs();
    struct ctx x = {.every_s = 5};
    char **paths = NULL;
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--manifest") == 0 && i + 1 < argc)
            manifest = argv[++i];
        else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
            jobs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc)
            x.every_s = atof(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            x.json = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(VERIFY_USAGE, stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fputs(VERIFY_USAGE, stderr);
            return 2;
        } else {
            paths = &argv[i];
            npaths = argc - i;
            break;
        }
    }
    if (jobs < 1 || jobs > VERIFY_MAX_JOBS || x.every_s < 0) {
        fprintf(stderr, "dsv41-top verify: --jobs is 1..%d, --progress 0 or more\n",
                VERIFY_MAX_JOBS);
        return 2;
    }
    struct buf mpath = BUF_INIT, text = BUF_INIT, err = BUF_INIT;
    if (manifest)
        buf_puts(&mpath, manifest);
    else
        buf_printf(&mpath, "%s/sha256-manifest.txt", dir);
    struct verify_manifest m = {0};
    int rc = 2;
    if (buf_read_file(&text, buf_str(&mpath), 64u << 20) < 0) {
        fprintf(stderr, "dsv41-top verify: cannot read the manifest %s: %s\n", buf_str(&mpath),
                strerror(errno));
        goto out;
    }
    if (verify_manifest_parse(buf_str(&text), buf_str(&mpath), &m, &err) < 0 ||
        (npaths && verify_manifest_select(&m, paths, npaths, &err) < 0)) {
        fprintf(stderr, "dsv41-top verify: %s\n", buf_str(&err));
        goto out;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    x.tty = isatty(STDERR_FILENO);
    x.t0 = x.last_line = now_s();
    if (!x.json)
        printf("verify: %d file(s) in %s against %s, %d at once\n", m.n, dir, buf_str(&mpath),
               jobs < m.n ? jobs : m.n);
    int bad = verify_run(&m, dir, jobs, &g_cancel, &x.p, file_done, &x, tick);
    clear_bar(&x);
    if (bad < 0) {
        fprintf(stderr, "dsv41-top verify: %s: %s\n", dir, strerror(errno));
        goto out;
    }
    double secs = now_s() - x.t0;
    if (x.json) {
        print_json(&m, dir, buf_str(&mpath), &x, secs, bad);
    } else {
        char total[32], rate[32], took[32];
        progress_bytes(total, sizeof total, (double)x.p.done_bytes);
        progress_bytes(rate, sizeof rate, secs > 0 ? (double)x.p.done_bytes / secs : 0);
        progress_duration(took, sizeof took, secs);
        printf("verify: %d of %d file(s) OK, %s hashed in %s (%s/s)%s\n", m.n - bad, m.n, total,
               took, rate, g_cancel ? "; interrupted" : "");
    }
    rc = bad || g_cancel ? 1 : 0;
out:
    verify_manifest_free(&m);
    buf_free(&mpath);
    buf_free(&text);
    buf_free(&err);
    return rc;
}
