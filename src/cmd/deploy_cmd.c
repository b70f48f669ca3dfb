/* `dsv41-top launch | stop | restart | logs`: options in, engine calls out. */
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "interrupt.h"
#include "guards.h"
#include "commands.h"
#include "launch.h"
#include "logstream.h"
#include "ranks.h"
#include "runtime.h"
#include "suprec.h"
#include "text.h"
#include "usage.h"

static int usage(FILE *f, const struct usage_doc *d, int rc)
{
    usage_print(f, d);
    return rc;
}

/* launch's options, restart's too */
#define LAUNCH_OPT_ENTRIES \
    {"--dry-run", NULL, \
     "print every node's command and environment (key redacted), change nothing; what would " \
     "stop a launch is listed after, with its fix (exit 1)"}, \
    {"--force", NULL, "replace a running deployment and containers not started by dsv41-top"}, \
    {"--no-guard", NULL, "start even where the memory guard cannot (not advised on a GB10)"}, \
    {"--install-units", NULL, \
     "install and start dsv41-guard.service on every node (root or sudo -n there): the guard " \
     "then comes back after a reboot"}, \
    {"--timeout", "SEC", "how long to wait for the API (READY_TIMEOUT, default 2700)"},

static const struct usage_opt LAUNCH_OPTS[] = {LAUNCH_OPT_ENTRIES {NULL, NULL, NULL}};
static const struct usage_opt RESTART_OPTS[] = {
    {"--now", NULL, "remove the old ranks at once instead of letting rank 0 drain"},
    LAUNCH_OPT_ENTRIES{NULL, NULL, NULL}};

static const struct usage_exit LAUNCH_EXITS[] = {
    {0, "the API answers (--dry-run: the plan was printed, no problem found)"},
    {1, "a step failed (named, with its fix) or it was interrupted; --dry-run: problems were "
        "listed; restart: or the stop failed"},
    {2, "a usage or configuration error"},
    {-1, NULL}};

const struct usage_doc launch_doc = {
    "launch", NULL, "start the deployment and wait until it answers",
    "Starts the deployment: fabric and preflight on every node, the API key (STATE_DIR/api_key, "
    "created once), env files and the EXL3 plan on every node, the workers' ranks, then the "
    "head's; waits until the API answers. Ctrl-C before the ranks start changes nothing; after, "
    "the ranks it started are stopped.",
    LAUNCH_EXITS, LAUNCH_OPTS};

const struct usage_doc restart_doc = {
    "restart", NULL, "stop, then launch",
    "Stops the deployment as stop does (rank 0 drained first; --now without the drain), then "
    "launches it again with launch's options.",
    LAUNCH_EXITS, RESTART_OPTS};

static int parse_launch(const struct config *c, int argc, char **argv, struct launch_opts *o,
                        const struct usage_doc *doc)
{
    static const struct option opts[] = {{"dry-run", no_argument, NULL, 'n'},
                                         {"force", no_argument, NULL, 'f'},
                                         {"no-guard", no_argument, NULL, 'G'},
                                         {"install-units", no_argument, NULL, 'U'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->timeout_s = (int)config_long(c, CFG_READY_TIMEOUT);
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "nfGt:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            o->dry_run = true;
            break;
        case 'f':
            o->force = true;
            break;
        case 'G':
            o->no_guard = true;
            break;
        case 'U':
            o->install_units = true;
            break;
        case 't':
            o->timeout_s = atoi(optarg);
            if (o->timeout_s <= 0) {
                fprintf(stderr, "dsv41-top %s: --timeout wants a number of seconds\n", doc->name);
                return 2;
            }
            break;
        case 'h':
            return usage(stdout, doc, 0) - 1;
        default:
            return usage(stderr, doc, 2);
        }
    }
    if (optind < argc)
        return usage(stderr, doc, 2);
    if (o->timeout_s <= 0) {
        fprintf(stderr, "dsv41-top %s: READY_TIMEOUT must be a positive number\n", doc->name);
        return 2;
    }
    return 0;
}

int cmd_launch(const struct config *c, int argc, char **argv)
{
    struct launch_opts o;
    int rc = parse_launch(c, argc, argv, &o, &launch_doc);
    if (rc)
        return rc < 0 ? 0 : rc;
    return launch_run(c, &o);
}

/* now: today's immediate removal; else the graceful stop, which an
 * interrupt turns into the immediate one (ranks.h). */
static int stop_all(const struct config *c, bool force, bool now)
{
    struct cluster cl;
    if (cluster_open_for("stop", c, &cl) < 0)
        return 2;
    /* an operator's stop (or a supervisor's own, its child): suprec.h */
    suprec_mark_stop(config_str(c, CFG_STATE_DIR));
    int bad;
    if (now) {
        bad = ranks_stop_all(c, &cl, force, stdout);
    } else {
        interrupt_catch();
        bad = ranks_stop_gracefully(c, &cl, force, (int)config_long(c, CFG_STOP_TIMEOUT), stdout);
    }
    bad += guards_stop(c, &cl, stdout);
    cluster_close(&cl);
    return bad ? 1 : 0;
}

static const struct usage_opt STOP_OPTS[] = {
    {"--now", NULL, "remove the ranks at once (requests in flight are cut; also what a Ctrl-C "
                    "during the stop switches to)"},
    {"--force", NULL, "also remove containers named dsv41-r* that dsv41-top did not start"},
    {NULL, NULL, NULL}};

const struct usage_doc stop_doc = {
    "stop", NULL, "stop the ranks on every node, rank 0 drained first",
    "Stops the ranks and the memory guards on every node (idempotent): rank 0 first, with "
    "SIGTERM and up to STOP_TIMEOUT s (default 60) to finish the requests in flight, then the "
    "workers; then removes the containers. Containers named dsv41-r* that dsv41-top did not "
    "start are left unless --force.",
    (const struct usage_exit[]){{0, "stopped everywhere"},
                                {1, "a node could not be reached or refused"},
                                {2, "a usage error"},
                                {-1, NULL}}, STOP_OPTS};

int cmd_stop(const struct config *c, int argc, char **argv)
{
    bool force = false, now = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--force") == 0)
            force = true;
        else if (strcmp(argv[i], "--now") == 0)
            now = true;
        else
            return usage(strcmp(argv[i], "--help") ? stderr : stdout, &stop_doc,
                         strcmp(argv[i], "--help") ? 2 : 0);
    }
    return stop_all(c, force, now);
}

int cmd_restart(const struct config *c, int argc, char **argv)
{
    /* --now is restart's own; the rest are launch's */
    bool now = false;
    char *rest[64];
    int n = 0;
    if (argc >= (int)(sizeof rest / sizeof *rest))
        return usage(stderr, &restart_doc, 2);
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--now") == 0)
            now = true;
        else
            rest[n++] = argv[i];
    }
    rest[n] = NULL;
    struct launch_opts o;
    int rc = parse_launch(c, n, rest, &o, &restart_doc);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!o.dry_run && (rc = stop_all(c, o.force, now)) != 0)
        return rc;
    return launch_run(c, &o);
}

/* ---- logs ---- */

struct log_ctx {
    int rank;
    bool prefix;
    atomic_bool ended; /* set by the stream's thread */
};

static void print_line(void *ctx, const char *line, size_t len)
{
    struct log_ctx *l = ctx;
    /* a log line must never move the cursor or change colours */
    char clean[8192];
    text_clean(clean, sizeof clean, line, len);
    flockfile(stdout);
    if (l->prefix)
        printf("r%d| ", l->rank);
    printf("%s\n", clean);
    fflush(stdout);
    funlockfile(stdout);
}

static void on_end(void *ctx, bool up)
{
    if (!up)
        atomic_store(&((struct log_ctx *)ctx)->ended, true);
}

const struct usage_doc logs_doc = {
    "logs", NULL, "the ranks' logs",
    "The ranks' logs since their container started (the current run), both ranks unless one "
    "is named, each line prefixed with its rank. Control sequences are shown as '?'.",
    (const struct usage_exit[]){{0, "every log was read to its end (with -f: until Ctrl-C)"},
                                {1, "a node could not be reached or a rank's log not read"},
                                {2, "a usage or configuration error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"-f, --follow", NULL, "keep printing new lines until Ctrl-C"},
        {"--tail", "N", "only the last N lines of each rank"},
        {"--since-start", NULL, "from the container's start (the default; kept for scripts)"},
        {"rN", NULL, "only rank N (r0 the head's, r1 the first worker's)"},
        {NULL, NULL, NULL}}};

int cmd_logs(const struct config *c, int argc, char **argv)
{
    static const struct option opts[] = {{"follow", no_argument, NULL, 'f'},
                                         {"tail", required_argument, NULL, 'n'},
                                         {"since-start", no_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool follow = false;
    int tail = -1, only = -1, ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "fn:sh", opts, NULL)) != -1) {
        if (ch == 'f')
            follow = true;
        else if (ch == 'n')
            tail = atoi(optarg);
        else if (ch == 's')
            ; /* the default: a launch makes a new container, its log is this run's */
        else
            return usage(ch == 'h' ? stdout : stderr, &logs_doc, ch == 'h' ? 0 : 2);
    }
    if (optind < argc) {
        const char *r = argv[optind];
        char *end;
        only = (r[0] == 'r') ? (int)strtol(r + 1, &end, 10) : -1;
        if (r[0] != 'r' || !r[1] || *end || only < 0 || optind + 1 < argc)
            return usage(stderr, &logs_doc, 2);
    }
    struct cluster cl;
    if (cluster_open_for("logs", c, &cl) < 0)
        return 2;
    if (only >= cl.n) {
        fprintf(stderr, "dsv41-top logs: there is no rank %d (%d nodes)\n", only, cl.n);
        cluster_close(&cl);
        return 2;
    }
    interrupt_catch(); /* -f ends cleanly, the streams closed */
    struct log_ctx ctx[CLUSTER_MAX_NODES];
    struct logstream *st[CLUSTER_MAX_NODES] = {NULL};
    int rc = 0;
    for (int i = 0; i < cl.n; i++) {
        if ((only >= 0 && i != only) || !cl.nodes[i].configured)
            continue;
        ctx[i].rank = i;
        ctx[i].prefix = only < 0;
        atomic_init(&ctx[i].ended, false);
        char name[32];
        snprintf(name, sizeof name, "dsv41-r%d", i);
        st[i] = logstream_open(&cl.nodes[i].node, config_str(c, CFG_RUNTIME), name, follow, tail,
                               print_line, on_end, &ctx[i]);
        if (!st[i])
            rc = 1;
    }
    /* until every stream ended (or Ctrl-C); a dead node ends its stream */
    for (;;) {
        bool all = true;
        for (int i = 0; i < cl.n; i++)
            if (st[i] && !atomic_load(&ctx[i].ended))
                all = false;
        if (all || interrupt_pending())
            break;
        for (int i = 0; i < cl.n; i++) {
            char why[512];
            time_t since;
            if (st[i] && !atomic_load(&ctx[i].ended) &&
                !node_reachable(&cl.nodes[i].node, &since, why, sizeof why)) {
                fprintf(stderr, "%s: %s\n", cl.nodes[i].name, why);
                atomic_store(&ctx[i].ended, true);
                rc = 1;
            }
        }
        usleep(100000);
    }
    for (int i = 0; i < cl.n; i++)
        logstream_close(&cl.nodes[i].node, st[i]);
    cluster_close(&cl);
    return rc;
}
