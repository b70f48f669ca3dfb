/* `dsv41-top assemble [DIR]`: the Engram shards rebuilt from the .partNN
 * pieces a directory already holds (see src/verify/assemble.h), each
 * checked against DIR/sha256-manifest.txt. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "assemble.h"
#include "interrupt.h"
#include "commands.h"
#include "dlstate.h"
#include "mono.h"
#include "progress.h"
#include "text.h"
#include "verify.h"
#include "usage.h"

const struct usage_doc assemble_doc = {
    "assemble", NULL, "shards rebuilt from their .partNN pieces, with little extra disk",
    "Rebuilds each shard of DIR (default MODEL_DIR) from its SHARD.partNN pieces (what `hf "
    "download` or the script era left), with at most one chunk of extra disk whatever the "
    "shard's size: a chunk is copied, made durable, then released from its part, and a part is "
    "deleted once copied. Safe to kill at any point: run it again and it continues. Each shard is "
    "checked against DIR/sha256-manifest.txt before it takes its name. KEEP_PARTS=1 keeps the "
    "parts (and needs the shard's size free). dsv41-top download writes shards whole and needs "
    "none of this.",
    (const struct usage_exit[]){{0, "every shard rebuilt and matching"},
                                {1, "a shard failed or the run was interrupted (run it again)"},
                                {2, "usage error, or nothing to assemble"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--chunk", "MIB", "bytes copied before a part gives them back (default 1024)"},
        {"--progress", "SECONDS", "a progress line this often when stderr is not a terminal (default 5; 0: none)"},
        {"DIR", NULL, "the checkpoint (default MODEL_DIR)"},
        {NULL, NULL, NULL}}};

struct ctx {
    struct progress_out out;
    double t0;
};

static void on_progress(const char *shard, int64_t done, int64_t total, void *arg)
{
    struct ctx *x = arg;
    if (!progress_out_due(&x->out))
        return;
    struct buf line = BUF_INIT;
    char name[600];
    text_clean(name, sizeof name, shard, strlen(shard));
    buf_printf(&line, "assemble %s%s", name, x->out.tty ? " " : ": ");
    progress_format(&line, done, total, mono_s() - x->t0, x->out.tty ? 24 : 0);
    progress_out_show(&x->out, buf_str(&line));
    buf_free(&line);
}

/* The manifest's sum for path, hex; "" when it has none. */
static void manifest_sum(const struct verify_manifest *m, const char *path, char out[65])
{
    out[0] = '\0';
    for (int i = 0; m && i < m->n; i++)
        if (strcmp(m->e[i].path, path) == 0)
            for (int k = 0; k < 32; k++)
                snprintf(out + 2 * k, 3, "%02x", m->e[i].want[k]);
}

int cmd_assemble(const struct config *c, int argc, char **argv)
{
    const char *dir = config_str(c, CFG_MODEL_DIR);
    struct assemble_opts o = {.chunk = 1024LL << 20,
                              .keep_parts = strcmp(config_str(c, CFG_KEEP_PARTS), "1") == 0,
                              .cancel = interrupt_token(),
                              .on_progress = on_progress};
    double every = 5;
    bool dir_given = false;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1 << 20) {
                usage_print(stderr, &assemble_doc);
                return 2;
            }
            o.chunk = (int64_t)v << 20;
        } else if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc) {
            every = strtod(argv[++i], &end);
            if (*end || every < 0) {
                usage_print(stderr, &assemble_doc);
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_print(stdout, &assemble_doc);
            return 0;
        } else if (argv[i][0] != '-' && !dir_given) {
            dir = argv[i];
            dir_given = true;
        } else {
            usage_print(stderr, &assemble_doc);
            return 2;
        }
    }
    char **shards;
    int n;
    struct buf err = BUF_INIT, mtext = BUF_INIT, mpath = BUF_INIT;
    /* download writes SHARD.incomplete too: never both in one directory */
    if (access(dir, F_OK) == 0 && dl_state_lock(dir, &err) < 0) {
        fprintf(stderr, "dsv41-top assemble: %s\n", buf_str(&err));
        buf_free(&err);
        return 1;
    }
    if (assemble_find(dir, &shards, &n, &err) < 0 || n == 0) {
        fprintf(stderr, "dsv41-top assemble: %s\n",
                err.len ? buf_str(&err) : "no SHARD.partNN pieces in the directory");
        buf_free(&err);
        return 2;
    }
    struct verify_manifest m = {0};
    bool have_m = false;
    buf_printf(&mpath, "%s/sha256-manifest.txt", dir);
    if (buf_read_file(&mtext, buf_str(&mpath), 4u << 20) == 0) {
        if (verify_manifest_parse(buf_str(&mtext), buf_str(&mpath), &m, &err) < 0) {
            fprintf(stderr, "dsv41-top assemble: %s\n", buf_str(&err));
            return 2;
        }
        have_m = true;
    }
    interrupt_catch(); /* the shard in hand is left as it was, to continue */
    struct ctx x = {.t0 = mono_s()};
    progress_out_init(&x.out, every, stdout);
    o.arg = &x;
    int bad = 0;
    for (int i = 0; i < n && !atomic_load(interrupt_token()); i++) {
        char want[65];
        manifest_sum(have_m ? &m : NULL, shards[i], want);
        buf_reset(&err);
        int rc = assemble_shard(dir, shards[i], want, &o, &err);
        progress_out_clear(&x.out);
        char name[600], why[1200]; /* names from the directory: shown cleaned */
        text_clean(name, sizeof name, shards[i], strlen(shards[i]));
        text_clean(why, sizeof why, buf_str(&err), err.len);
        if (rc == 0)
            printf("OK          %s%s\n", name,
                   want[0] ? "" : " (rebuilt; sha256-manifest.txt has no sum for it)");
        else if (rc == 2)
            printf("OK          %s (already in place)\n", name);
        else if (rc == 1)
            printf("interrupted %s: run assemble again to continue\n", name);
        else
            printf("FAILED      %s\n", why);
        bad += rc != 0 && rc != 2;
    }
    for (int i = 0; i < n; i++)
        free(shards[i]);
    free(shards);
    if (have_m)
        verify_manifest_free(&m);
    buf_free(&err);
    buf_free(&mtext);
    buf_free(&mpath);
    return bad || atomic_load(interrupt_token()) ? 1 : 0;
}
