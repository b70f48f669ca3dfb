/* `dsv41-top copy-to-peer`: the head's checkpoint to the workers. By
 * default over several TCP streams to dsv41-xfer on the worker, each file
 * verified as it lands (xfer_peer.h); with --rsync as the script era did,
 * rsync over ssh and then verified on the worker (peer.h). rsync runs as a
 * child in its own process group; its progress updates (separated by '\r')
 * become our progress bar or progress lines, its other lines pass through
 * cleaned of control bytes. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "interrupt.h"
#include "cluster.h"
#include "commands.h"
#include "peer.h"
#include "peer_cmd.h"
#include "probe.h"
#include "progress.h"
#include "text.h"
#include "xfer_peer.h"
#include "usage.h"

const struct usage_doc copy_doc = {
    "copy-to-peer", NULL, "the checkpoint to the workers, verified there",
    "Copies the checkpoint (MODEL_DIR) to each worker's WORKER_MODEL_DIR, leaving the Engram "
    ".partNN pieces and .cache/ behind, and compares the number of EXL3 bank files. Resumable: "
    "run it again after an interruption.\n\n"
    "By default the files go over several TCP streams to dsv41-xfer, a helper pushed to the "
    "worker over sftp and run over ssh, listening on the worker's fabric address; it takes only "
    "streams that present a one-time token handed to it over ssh, and puts each file in place "
    "only once its sha256 matches the head's manifest (or, for other files, the sum the head "
    "computed as it read them). The bytes travel unencrypted: fine on the point-to-point fabric "
    "(the weights are public; integrity is the hash). --rsync copies through ssh instead, then "
    "verifies on the worker (rsync on both nodes).",
    (const struct usage_exit[]){{0, "copied and verified"},
                                {1, "the copy or its check failed (or was interrupted)"},
                                {2, "a usage or configuration error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--node", "NAME", "only this worker (default: every worker)"},
        {"--streams", "N", "TCP streams (default: the cores of the smaller end, 2 to 16)"},
        {"--rsync", NULL, "rsync over ssh, for a link that is not private"},
        {"--dry-run", NULL, "list what would be copied; copy nothing"},
        {"--no-verify", NULL, "with --rsync: copy only (the streams always verify)"},
        {"--json", NULL,
         "the streams' events as JSON lines on stdout (progress each second with every "
         "stream's rate, a file in place, the helper's words, the end)"},
        {"--progress", "SECONDS", "a progress line this often when stderr is not a terminal (default 5; 0: none)"},
        {NULL, NULL, NULL}}};

static void show_line(struct copy_out *o, const char *line)
{
    struct peer_progress p;
    if (peer_parse_progress(line, &p)) {
        char bytes[32], text[160];
        progress_bytes(bytes, sizeof bytes, (double)p.bytes);
        snprintf(text, sizeof text, "copy %s: %s  %d %%  %s  %s left", o->node, bytes, p.pct,
                 p.rate, p.eta);
        progress_out_show(&o->out, text);
        return;
    }
    size_t n = strlen(line);
    if (!n || (line[0] == '+' && line[n - 1] == '/')) /* a directory: not news */
        return;
    progress_out_clear(&o->out);
    char clean[1024]; /* a file name or rsync's message: shown as text, never obeyed */
    text_clean(clean, sizeof clean, line, strlen(line));
    printf("%s: %s\n", o->node, clean);
}

/* Runs rsync, relaying its output; its exit status, or -1 when it could
 * not start (said). */
static int run_rsync(struct strv *argv, struct copy_out *o)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    pid_t pid;
    int e = child_spawn("rsync", true, argv->v, pfd[1], pfd[1], &pid);
    close(pfd[1]);
    if (e) {
        close(pfd[0]);
        fprintf(stderr, "dsv41-top copy-to-peer: cannot run rsync on the head: %s%s\n", strerror(e),
                e == ENOENT ? " (install it: apt install rsync)" : "");
        return -1;
    }
    char chunk[4096], line[4096];
    size_t len = 0;
    bool killed = false;
    for (;;) {
        if (atomic_load(interrupt_token()) && !killed) {
            kill(-pid, SIGTERM); /* rsync keeps what arrived (--partial) */
            killed = true;
        }
        ssize_t n = read(pfd[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (chunk[i] == '\r' || chunk[i] == '\n' || len == sizeof line - 1) {
                line[len] = '\0';
                show_line(o, line);
                len = 0;
                if (chunk[i] == '\r' || chunk[i] == '\n')
                    continue;
            }
            line[len++] = chunk[i];
        }
        fflush(stdout);
    }
    line[len] = '\0';
    show_line(o, line);
    close(pfd[0]);
    progress_out_clear(&o->out);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int g_files;

static int count_file(const char *path, const struct stat *sb, int type, struct FTW *f)
{
    (void)path, (void)sb, (void)f;
    g_files += type == FTW_F;
    return 0;
}

/* EXL3 bank files (every file under exl3/) on the head and on the worker. */
int copy_compare_exl3(struct cluster_node *cn, const char *src, FILE *out)
{
    struct buf dir = BUF_INIT, err = BUF_INIT;
    struct shcmd cmd = SHCMD_INIT;
    buf_printf(&dir, "%s/exl3", src);
    g_files = 0;
    if (access(buf_str(&dir), F_OK) == 0)
        nftw(buf_str(&dir), count_file, 16, FTW_PHYS);
    int here = g_files, rc = 1;
    char there_dir[512];
    if (cluster_model_dir(cn, there_dir, sizeof there_dir, &err) < 0) {
        fprintf(out, "%s\n", buf_str(&err));
        buf_free(&dir);
        buf_free(&err);
        return 1;
    }
    shcmd_script(&cmd, "find \"$1/exl3\" -type f 2>/dev/null | wc -l");
    shcmd_arg(&cmd, there_dir);
    struct ssh_result res;
    /* after a long copy the link may be down for a while: wait for it */
    if (node_run_patient(&cn->node, &cmd, 120000, 60000, &res, &err) == 0) {
        int there = atoi(buf_str(&res.out));
        if (there == here) {
            fprintf(out, "%s: EXL3 bank files: %d, as on the head\n", cn->name, there);
            rc = 0;
        } else {
            fprintf(out, "%s: EXL3 bank files: %d, the head has %d\n", cn->name, there, here);
        }
        ssh_result_free(&res);
    } else {
        fprintf(out, "%s: cannot count the EXL3 bank files: %s\n", cn->name, buf_str(&err));
    }
    buf_free(&dir);
    shcmd_free(&cmd);
    buf_free(&err);
    return rc;
}

/* The worker's directory made, and rsync there; 0, or 2 (said). */
int copy_prepare(struct cluster_node *cn, bool rsync, char *dest, size_t destsz)
{
    struct buf err = BUF_INIT;
    struct shcmd cmd = SHCMD_INIT;
    if (cluster_model_dir(cn, dest, destsz, &err) < 0) {
        fprintf(stderr, "dsv41-top copy-to-peer: %s\n", buf_str(&err));
        buf_free(&err);
        return 2;
    }
    shcmd_script(&cmd, "mkdir -p -- \"$1\" || exit 3; [ \"$2\" = rsync ] || exit 0; "
                       "command -v rsync >/dev/null || exit 4");
    shcmd_arg(&cmd, dest);
    shcmd_arg(&cmd, rsync ? "rsync" : "streams");
    struct ssh_result res;
    int rc = 2;
    if (node_run(&cn->node, &cmd, 30000, &res, &err) < 0) {
        fprintf(stderr, "dsv41-top copy-to-peer: %s: %s\n", cn->name, buf_str(&err));
    } else {
        struct buf why = BUF_INIT;
        text_one_line(&why, buf_str(&res.err), res.err.len, 300);
        if (res.exit_status == 4)
            fprintf(stderr,
                    "dsv41-top copy-to-peer: %s: rsync is not installed there "
                    "(apt install rsync)\n",
                    cn->name);
        else if (res.exit_status != 0)
            fprintf(stderr, "dsv41-top copy-to-peer: %s: cannot make %s: %s\n", cn->name,
                    dest, buf_str(&why));
        else
            rc = 0;
        buf_free(&why);
        ssh_result_free(&res);
    }
    shcmd_free(&cmd);
    buf_free(&err);
    return rc;
}

static int copy_rsync(const struct config *c, struct cluster_node *cn, const char *src,
                      bool dry_run, bool verify, struct copy_out *o)
{
    char dest[512];
    int rc = copy_prepare(cn, true, dest, sizeof dest);
    if (rc)
        return rc;
    printf("copy-to-peer: %s/ to %s:%s/ with rsync over ssh%s\n", src, cn->name, dest,
           dry_run ? " (dry run: nothing is copied)" : "");
    fflush(stdout);
    struct strv argv = STRV_INIT;
    peer_rsync_argv(c, src, cn->node.target, cn->node.t.known_hosts, dest, dry_run, &argv);
    o->node = cn->name;
    progress_out_init(&o->out, o->every_s, stdout);
    int st = run_rsync(&argv, o);
    strv_free(&argv);
    if (st != 0) {
        if (st > 0)
            printf("%s: %s (rsync exit %d)%s\n", cn->name,
                   atomic_load(interrupt_token()) ? "copy interrupted" : "copy failed", st,
                   dry_run ? "" : "; run copy-to-peer again to resume");
        return st < 0 ? 2 : 1;
    }
    if (dry_run || atomic_load(interrupt_token()))
        return atomic_load(interrupt_token()) ? 1 : 0;
    printf("%s: copied\n", cn->name);
    fflush(stdout);
    if (!verify)
        return 0;
    int v = verify_on_node(c, cn, o->every_s);
    int x = copy_compare_exl3(cn, src, stdout);
    return v ? v : x;
}

int cmd_copy_to_peer(const struct config *c, int argc, char **argv)
{
    interrupt_catch(); /* rsync is in its own process group: we stop it, and say how to resume */
    const char *only = NULL;
    bool dry_run = false, verify = true, rsync = false, json = false;
    int streams = 0;
    struct copy_out o = {.every_s = 5};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--node") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--dry-run") == 0)
            dry_run = true;
        else if (strcmp(argv[i], "--no-verify") == 0)
            verify = false;
        else if (strcmp(argv[i], "--rsync") == 0)
            rsync = true;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--streams") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < 1 || v > XFER_MAX_STREAMS) {
                fprintf(stderr, "dsv41-top copy-to-peer: --streams: a number from 1 to %d\n",
                        XFER_MAX_STREAMS);
                return 2;
            }
            streams = (int)v;
        } else if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc)
            o.every_s = atof(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_print(stdout, &copy_doc);
            return 0;
        } else {
            usage_print(stderr, &copy_doc);
            return 2;
        }
    }
    if (json && rsync) {
        fprintf(stderr, "dsv41-top copy-to-peer: --json goes with the streams, not --rsync\n");
        return 2;
    }
    const char *src = config_str(c, CFG_MODEL_DIR);
    if (access(src, R_OK | X_OK) < 0) {
        fprintf(stderr, "dsv41-top copy-to-peer: the checkpoint %s: %s\n", src, strerror(errno));
        return 2;
    }
    struct xfer_plan plan = {0};
    struct buf perr = BUF_INIT;
    if (!rsync && xfer_plan_build(src, &plan, &perr) < 0) {
        fprintf(stderr, "dsv41-top copy-to-peer: %s\n", buf_str(&perr));
        buf_free(&perr);
        return 2;
    }
    buf_free(&perr);
    struct cluster cl;
    if (cluster_open_for("copy-to-peer", c, &cl) < 0) {
        xfer_plan_free(&plan);
        return 2;
    }
    int rc = 0, done = 0;
    for (int i = 0; i < cl.n && !atomic_load(interrupt_token()); i++) {
        struct cluster_node *cn = &cl.nodes[i];
        if (cn->node.local || !cn->configured || (only && strcmp(cn->name, only) != 0))
            continue;
        done++;
        int r = rsync ? copy_rsync(c, cn, src, dry_run, verify, &o)
                      : copy_streams(c, cn, src, &plan, streams, dry_run, json, &o);
        rc = r > rc ? r : rc;
    }
    if (!done) {
        fprintf(stderr, "dsv41-top copy-to-peer: %s\n",
                only ? "no worker has that name" : "no worker is configured (set WORKER)");
        rc = 2;
    }
    cluster_close(&cl);
    xfer_plan_free(&plan);
    return rc ? rc : atomic_load(interrupt_token()) ? 1 : 0;
}
