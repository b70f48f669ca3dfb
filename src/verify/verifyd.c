/* dsv41-verify: the static helper that verifies a checkpoint on a worker
 * (which has nothing of ours installed): `dsv41-top verify --node worker`
 * pushes it and the head's manifest over sftp, runs it over ssh and reads
 * its report (verify_wire.h) line by line. Not meant to be run by hand,
 * but it says what it does when it is. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verify_wire.h"

static atomic_int g_cancel;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&g_cancel, 1);
}

struct out {
    struct verify_progress p;
    time_t last;
};

static void put(struct buf *b)
{
    /* a closed channel makes this fail (SIGPIPE is caught): stop then */
    if (fwrite(b->data, 1, b->len, stdout) != b->len || fflush(stdout) != 0)
        atomic_store(&g_cancel, 1);
    buf_reset(b);
}

static void on_done(const struct verify_entry *e, void *arg)
{
    (void)arg;
    struct buf b = BUF_INIT;
    verify_wire_file(&b, e);
    put(&b);
    buf_free(&b);
}

/* A progress line a second: also how a head that went away is noticed. */
static void on_tick(void *arg)
{
    struct out *o = arg;
    time_t now = time(NULL);
    if (now == o->last)
        return;
    o->last = now;
    struct buf b = BUF_INIT;
    verify_wire_progress(&b, atomic_load(&o->p.done_bytes), atomic_load(&o->p.total_bytes));
    put(&b);
    buf_free(&b);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *manifest = NULL;
    int jobs = 4;
    if (usage_wants_help(&verifyd_doc, argc, argv)) {
        usage_print(stdout, &verifyd_doc);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "--manifest") == 0 && i + 1 < argc)
            manifest = argv[++i];
        else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
            jobs = atoi(argv[++i]);
        else {
            dir = NULL; /* an unknown argument: the usage below */
            break;
        }
    }
    if (!dir || !manifest || jobs < 1 || jobs > VERIFY_MAX_JOBS) {
        usage_print(stderr, &verifyd_doc);
        return 2;
    }
    struct buf text = BUF_INIT, err = BUF_INIT;
    struct verify_manifest m = {0};
    if (buf_read_file(&text, manifest, 64u << 20) < 0) {
        printf("cannot read the manifest %s\n", manifest);
        return 2;
    }
    if (verify_manifest_parse(buf_str(&text), manifest, &m, &err) < 0) {
        printf("%s\n", buf_str(&err));
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    struct out o = {.last = 0};
    int bad = verify_run(&m, dir, jobs, &g_cancel, &o.p, on_done, &o, on_tick);
    if (bad < 0) {
        printf("cannot read the directory %s\n", dir);
        return 2;
    }
    struct buf b = BUF_INIT;
    /* the final figures: a run shorter than a second sent none */
    verify_wire_progress(&b, atomic_load(&o.p.done_bytes), atomic_load(&o.p.total_bytes));
    verify_wire_end(&b, bad, atomic_load(&g_cancel) != 0);
    put(&b);
    buf_free(&b);
    verify_manifest_free(&m);
    buf_free(&text);
    buf_free(&err);
    return bad ? 1 : 0;
}
