#include "launch_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "apikey.h"
#include "deploy.h"
#include "exl3plan.h"
#include "fanout.h"
#include "budget.h"
#include "guards.h"
#include "units.h"
#include "interrupt.h"
#include "logstream.h"
#include "mono.h"
#include "phase.h"
#include "preflight.h"
#include "ranks.h"
#include "runtime.h"
#include "status.h"
#include "text.h"


/* What an interrupt (SIGINT, SIGTERM, SIGHUP: the console's cancel sends
 * SIGTERM) undoes depends on where it lands: before the old ranks are
 * stopped nothing has changed, and launch ends at once; after, the ranks
 * this launch started are stopped. The guards it started stay. */
static bool interrupted_before(const char *step)
{
    int sig = interrupt_pending();
    if (sig)
        printf("interrupted by %s %s: nothing was changed, a running deployment is "
               "untouched\n",
               interrupt_name(sig), step);
    return sig != 0;
}

static void print_plan(const struct config *c, const struct deploy_plan *p, struct lnode *ln)
{
    for (int i = 0; i < p->nnodes; i++) {
        const struct deploy_rank *r = &p->ranks[i];
        struct buf cmd = BUF_INIT, env = BUF_INIT;
        shcmd_join(&r->run, &cmd);
        deploy_env_text(r, &env);
        printf("# %s (rank %d): %s\n%s %s\n", ln[i].cn->name, r->rank, r->env_file,
               config_str(c, CFG_RUNTIME), buf_str(&cmd));
        /* what EXTRA_ENV puts there may be a token: the plan shows its name only */
        struct buf shown = BUF_INIT;
        text_hide_secrets(buf_str(&env), env.len, TEXT_HIDE_LINES, &shown);
        printf("# %s, mode 0600 (secret-looking values hidden here):\n%s", r->env_file,
               buf_str(&shown));
        buf_free(&shown);
        if (r->rank == 0)
            printf("# VLLM_API_KEY: read inside the container from %s (mounted read-only at "
                   "%s)\n",
                   config_str(c, CFG_API_KEY_FILE), DEPLOY_KEY_PATH);
        printf("\n");
        buf_free(&cmd);
        buf_free(&env);
    }
}

static const char *missing_fix(const struct lnode *l)
{
    return l->cn->rank == 0 ? "dsv41-top download"
                            : "dsv41-top copy-to-peer from the head (or download on this node)";
}

/* Model files, image (pulled when missing), disk, on one node. */
/* Preflight of every node at once: model files, plan, disk, whether the
 * image is there. */
struct preflight_all {
    const struct config *c;
    struct lnode *ln;
    bool pull[CLUSTER_MAX_NODES]; /* the image is missing there */
};

static int preflight_one(int i, FILE *out, void *ctx)
{
    struct preflight_all *a = ctx;
    struct lnode *l = &a->ln[i];
    struct buf err = BUF_INIT;
    struct preflight pf;
    if (preflight_check(a->c, &l->cn->node, l->dn.model_dir, l->state_dir, &pf, &err) < 0) {
        fprintf(out, "%s: preflight failed: %s\n", l->cn->name, buf_str(&err));
        buf_free(&err);
        return -1;
    }
    int rc = pf.missing.n ? -1 : 0;
    for (int k = 0; k < pf.missing.n; k++)
        fprintf(out, "%s: missing %s/%s\n  fix: %s\n", l->cn->name, l->dn.model_dir,
                pf.missing.v[k], missing_fix(l));
    if (pf.free_kib >= 0 && pf.free_kib < 20 * 1048576.0)
        fprintf(out, "warning: %s: %.0f GiB free under %s for the kernel caches\n", l->cn->name,
                pf.free_kib / 1048576, l->state_dir);
    a->pull[i] = rc == 0 && pf.image != 1;
    snprintf(l->image_id, sizeof l->image_id, "%s", pf.image_id);
    preflight_free(&pf);
    buf_free(&err);
    return rc;
}

/* A missing image pulled, its progress said as it comes (one node at a time:
 * a pull's lines are not held back). */
static int pull_node(const struct config *c, struct lnode *l)
{
    const char *rt = config_str(c, CFG_RUNTIME), *img = config_str(c, CFG_IMG);
    if (launch_pull_image(c, l) < 0)
        return -1;
    struct buf err = BUF_INIT;
    struct shcmd cmd = SHCMD_INIT;
    struct ssh_result res;
    runtime_cmd_image_present(&cmd, rt, img);
    int pulled = node_run(&l->cn->node, &cmd, 60000, &res, &err);
    shcmd_free(&cmd);
    int rc = 0;
    if (pulled < 0 || res.exit_status != 0) {
        printf("%s: cannot pull %s (no registry access? pull it by hand: %s pull %s)\n",
               l->cn->name, img, rt, img);
        rc = -1;
    }
    if (pulled == 0)
        ssh_result_free(&res);
    buf_free(&err);
    return rc;
}

static int preflight_nodes(const struct config *c, struct lnode *ln, int n)
{
    struct preflight_all a = {c, ln, {false}};
    int bad = fanout_run(n, preflight_one, &a, stdout);
    for (int i = 0; i < n && !bad && !interrupt_pending(); i++)
        if (a.pull[i])
            bad += pull_node(c, &ln[i]) < 0;
    return bad;
}

/* What every node's state is written from. */
struct state_all {
    const struct config *c;
    const struct deploy_plan *p;
    struct lnode *ln;
    const struct buf *plan; /* the plan, rewritten */
};

/* Node i's dirs, env file and plan; what failed said on out. */
static int write_node(int i, FILE *out, void *ctx)
{
    const struct state_all *a = ctx;
    struct lnode *l = &a->ln[i];
    struct buf env = BUF_INIT, target = BUF_INIT, err = BUF_INIT;
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, "umask 077 && exec mkdir -p -- \"$1/plans\" \"$1/cache\"");
    shcmd_arg(&cmd, l->state_dir);
    struct ssh_result res;
    bool ok = node_run(&l->cn->node, &cmd, 30000, &res, &err) == 0;
    if (ok) {
        ok = res.exit_status == 0;
        if (!ok) {
            buf_printf(&err, "%s: cannot create %s: ", l->cn->name, l->state_dir);
            text_one_line(&err, buf_str(&res.err), res.err.len, 200);
        }
        ssh_result_free(&res);
    }
    deploy_env_text(&a->p->ranks[i], &env);
    ok = ok && node_put(&l->cn->node, a->p->ranks[i].env_file, env.data, env.len, 0600, &err) == 0;
    buf_printf(&target, "%s/plans/%s", l->state_dir, config_str(a->c, CFG_PLAN_NAME));
    ok = ok && node_put(&l->cn->node, buf_str(&target), a->plan->data, a->plan->len, 0644,
                        &err) == 0;
    if (!ok)
        fprintf(out, "%s\n", buf_str(&err));
    apikey_scrub(&env);
    shcmd_free(&cmd);
    buf_free(&target);
    buf_free(&err);
    return ok ? 0 : -1;
}

/* State: the key (head), dirs, env files and the rewritten plan everywhere
 * (every node at once: #32, the launch's overhead). */
static int write_state(const struct config *c, const struct deploy_plan *p, struct lnode *ln,
                       int n)
{
    struct buf key = BUF_INIT, why = BUF_INIT, plan = BUF_INIT, rewritten = BUF_INIT;
    int rc = -1;
    if (apikey_ensure(config_str(c, CFG_API_KEY_FILE), &key, &why) < 0) {
        printf("head: %s\n", buf_str(&why));
        goto out;
    }
    struct buf path = BUF_INIT;
    buf_printf(&path, "%s/exl3/plan/%s", ln[0].dn.model_dir, config_str(c, CFG_PLAN_NAME));
    if (buf_read_file(&plan, buf_str(&path), 64u << 20) < 0) {
        printf("head: cannot read the plan %s: %s\n  fix: dsv41-top download (the plan is part "
               "of the checkpoint), or set PLAN_NAME\n",
               buf_str(&path), strerror(errno));
        buf_free(&path);
        goto out;
    }
    if (exl3plan_rewrite(buf_str(&plan), buf_str(&path), &rewritten, &why) < 0) {
        printf("head: %s\n", buf_str(&why));
        buf_free(&path);
        goto out;
    }
    buf_free(&path);
    struct state_all a = {c, p, ln, &rewritten};
    rc = fanout_run(n, write_node, &a, stdout) ? -1 : 0;
out:
    apikey_scrub(&key);
    buf_free(&why);
    buf_free(&plan);
    buf_free(&rewritten);
    return rc;
}

/* The head serves PORT and MPORT; something else holding them would make
 * rank 0 fail late and obscurely. dsv41-top runs on the head. */
static int port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 || errno != EADDRINUSE;
    close(fd);
    return ok;
}

/* Stops the ranks this launch started (or would have); one that cannot be
 * stopped is named with the fix, never dropped silently. 0 when all went. */
int launch_kill_all(const struct config *c, struct lnode *ln, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        struct buf err = BUF_INIT;
        if (ranks_kill(&ln[i].cn->node, config_str(c, CFG_RUNTIME), ln[i].cn->rank, &err) < 0) {
            printf("%s: could not stop dsv41-r%d: %s\n  fix: dsv41-top stop (or %s rm -f "
                   "dsv41-r%d on %s)\n",
                   ln[i].cn->name, ln[i].cn->rank, buf_str(&err), config_str(c, CFG_RUNTIME),
                   ln[i].cn->rank, ln[i].cn->name);
            bad++;
        }
        buf_free(&err);
    }
    return bad ? -1 : 0;
}

/* The memory budget of every node: a known figure that does not fit is
 * refused unless forced; a MemFree that vLLM's start check would refuse is
 * said. Before any boot the weights are n/a and nothing is refused. */
static int check_budget(const struct config *c, struct lnode *ln, const struct status_report *r,
                        int n, bool force)
{
    int over = 0;
    for (int i = 0; i < n; i++) {
        struct budget b;
        struct buf line = BUF_INIT;
        budget_for_node(c, ln[i].cn->name, &r->nodes[i].snap, &b);
        budget_describe(&b, &line);
        printf("%s: %s\n", ln[i].cn->name, buf_str(&line));
        if (b.memfree_low)
            printf("warning: %s: %s\n", ln[i].cn->name, b.memfree_note);
        over += b.known && !b.fits;
        buf_free(&line);
    }
    if (over && !force) {
        printf("refusing to launch: the ranks would not fit in memory on %d node(s) (a GB10 "
               "wedges when it runs out); lower what the budget names, or --force\n",
               over);
        return -1;
    }
    return 0;
}

/* What vLLM logged of its memory on each node's boot, for the next budget. */
static void record_budget(const struct config *c, struct lnode *ln, int n)
{
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&ln[i].mu);
        double w = ln[i].ph.weights_gib, g = ln[i].ph.graphs_gib;
        pthread_mutex_unlock(&ln[i].mu);
        struct buf err = BUF_INIT;
        if (budget_record(c, ln[i].cn->name, w, g, &err) < 0)
            printf("warning: %s: %s\n", ln[i].cn->name, buf_str(&err));
        buf_free(&err);
    }
}

/* Refuses a running deployment (unless forced) and foreign containers. */
static int check_existing(const struct status_report *r, bool force, int n)
{
    int running = 0, foreign = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < r->nodes[i].snap.ncont; k++) {
            const struct container_info *ct = &r->nodes[i].snap.cont[k];
            if (!ct->managed) {
                printf("%s: a container named %s exists that dsv41-top did not start%s\n",
                       r->nodes[i].cn->name, ct->name,
                       force ? ": removing it (--force)" : "; remove it or use --force");
                foreign++;
            } else if (ct->running) {
                running++;
            }
        }
    if (foreign && !force)
        return -1;
    if (running == n && r->api.models_code == 200 && !force) {
        printf("a deployment is already running and answering at %s: use `dsv41-top restart`, "
               "or launch --force\n",
               r->api.url);
        return -1;
    }
    if (running)
        printf("replacing %d rank(s) left from an earlier launch\n", running);
    return 0;
}

/* Every node's facts from status; what would make the launch refuse goes
 * into problems (each with its fix), and a node whose fabric is not known
 * gets the reason in ln[i].unknown, so that a dry run can still show its
 * plan. */
static void prepare(const struct config *c, struct cluster *cl, struct lnode *ln,
                    struct status_report *r, struct strv *problems)
{
    status_survey(c, cl, r);
    for (int i = 0; i < cl->n; i++) {
        struct cluster_node *cn = &cl->nodes[i];
        const struct snapshot *s = &r->nodes[i].snap;
        ln[i].cn = cn;
        /* as set until the node says: a worker's "~/" is its own home */
        snprintf(ln[i].state_dir, sizeof ln[i].state_dir, "%s",
                 config_str(c, i == 0 ? CFG_STATE_DIR : CFG_WORKER_STATE_DIR));
        snprintf(ln[i].model_dir, sizeof ln[i].model_dir, "%s", cn->model_dir_set);
        ln[i].unknown[0] = '\0';
        ln[i].dn = (struct deploy_node){cn->name,        s->fabric.ifname, s->fabric.ipv4,
                                        s->fabric.hcas,  s->fabric.gid_index, ln[i].model_dir,
                                        ln[i].state_dir, NULL};
        if (!cn->configured) {
            strv_addf(problems, "%s: WORKER is not set (export WORKER=user@<worker fabric IP>)",
                      cn->name);
            snprintf(ln[i].unknown, sizeof ln[i].unknown, "unknown (WORKER not set)");
            ln[i].dn.unknown = ln[i].unknown;
            continue;
        }
        if (!s->reachable) {
            strv_addf(problems, "%s: unreachable: %s", cn->name, s->error);
            snprintf(ln[i].unknown, sizeof ln[i].unknown, "unknown (%s unreachable)", cn->name);
            ln[i].dn.unknown = ln[i].unknown;
            continue;
        }
        if (!s->fabric.ok) {
            strv_addf(problems, "%s: no usable fabric port: %s", cn->name, s->fabric.why);
            snprintf(ln[i].unknown, sizeof ln[i].unknown, "unknown (no fabric port on %s)",
                     cn->name);
            ln[i].dn.unknown = ln[i].unknown;
        }
        if (!s->runtime_ok)
            strv_addf(problems, "%s: container runtime %s: %s%s", cn->name,
                      config_str(c, CFG_RUNTIME), s->runtime_note,
                      strstr(s->runtime_note, "not found")
                          ? ""
                          : "\n  fix: start it (its daemon: sudo systemctl start docker), or set "
                            "RUNTIME");
        struct buf err = BUF_INIT;
        if (cluster_state_dir(c, cn, ln[i].state_dir, sizeof ln[i].state_dir, &err) < 0 ||
            cluster_model_dir(cn, ln[i].model_dir, sizeof ln[i].model_dir, &err) < 0)
            strv_add(problems, buf_str(&err));
        buf_free(&err);
        if (s->mem.free_kib.ok && s->mem.cached_kib.ok && s->mem.free_kib.v < 100 * 1048576.0 &&
            s->mem.cached_kib.v > 10 * 1048576.0)
            printf("warning: %s: MemFree %.1f GiB with %.1f GiB page cache: vLLM counts MemFree "
                   "and may refuse to start; drop the cache with `sync; echo 3 | sudo tee "
                   "/proc/sys/vm/drop_caches`\n",
                   cn->name, s->mem.free_kib.v / 1048576, s->mem.cached_kib.v / 1048576);
    }
    for (int i = 0; i < r->nwarnings; i++)
        if (strncmp(r->warnings[i], "fabric:", 7) == 0)
            printf("warning: %s\n", r->warnings[i]);
    for (int i = 0; i < r->nproblems; i++)
        if (strncmp(r->problems[i], "fabric:", 7) == 0)
            strv_add(problems, r->problems[i]);
}

/* What a dry run can check without changing anything, beyond prepare: the
 * model files on every node that answered, the plan on the head, the key
 * file's mode. An image that is missing is said: launch would pull it. */
static void dry_checks(const struct config *c, struct lnode *ln, int n,
                       const struct status_report *r, struct strv *problems)
{
    for (int i = 0; i < n; i++) {
        if (!ln[i].cn->configured || !r->nodes[i].snap.reachable)
            continue;
        struct preflight pf;
        struct buf err = BUF_INIT;
        if (preflight_check(c, &ln[i].cn->node, ln[i].model_dir, ln[i].state_dir, &pf, &err) <
            0) {
            strv_addf(problems, "%s: preflight failed: %s", ln[i].cn->name, buf_str(&err));
            buf_free(&err);
            continue;
        }
        for (int k = 0; k < pf.missing.n; k++)
            strv_addf(problems, "%s: missing %s/%s\n  fix: %s", ln[i].cn->name, ln[i].model_dir,
                      pf.missing.v[k], missing_fix(&ln[i]));
        if (pf.image == 0 && r->nodes[i].snap.runtime_ok)
            printf("note: %s: image %s missing: launch would pull it\n", ln[i].cn->name,
                   config_str(c, CFG_IMG));
        preflight_free(&pf);
        buf_free(&err);
    }
    struct buf plan = BUF_INIT, path = BUF_INIT, out = BUF_INIT, why = BUF_INIT, key = BUF_INIT;
    buf_printf(&path, "%s/exl3/plan/%s", ln[0].model_dir, config_str(c, CFG_PLAN_NAME));
    /* a plan that is not there is a missing file above */
    if (buf_read_file(&plan, buf_str(&path), 64u << 20) == 0 &&
        exl3plan_rewrite(buf_str(&plan), buf_str(&path), &out, &why) < 0)
        strv_addf(problems, "head: %s", buf_str(&why));
    buf_reset(&why);
    const char *kf = config_str(c, CFG_API_KEY_FILE);
    if (access(kf, F_OK) == 0 && apikey_read(kf, &key, &why) < 0)
        strv_addf(problems, "head: %s", buf_str(&why));
    apikey_scrub(&key);
    buf_free(&plan);
    buf_free(&path);
    buf_free(&out);
    buf_free(&why);
}

static void print_problems(const struct strv *problems)
{
    for (int i = 0; i < problems->n; i++)
        printf("%s\n", problems->v[i]);
}

/* The dry run's end: the problems a real launch would refuse for, each
 * with its fix, after the plan; 1 when there are any, so scripts notice. */
static int dry_run_verdict(const struct strv *problems)
{
    if (!problems->n) {
        printf("dry run: no problems found; nothing was changed\n");
        return 0;
    }
    printf("problems (%d; a launch would refuse; nothing was changed):\n", problems->n);
    for (int i = 0; i < problems->n; i++) {
        printf("  - ");
        for (const char *p = problems->v[i]; *p; p++) {
            putchar(*p);
            if (*p == '\n') { /* a fix under its problem */
                fputs("    ", stdout);
                while (p[1] == ' ')
                    p++;
            }
        }
        putchar('\n');
    }
    return 1;
}

/* What every rank is started from. */
struct start_all {
    const struct config *c;
    const struct deploy_plan *p;
    struct lnode *ln;
    int n;
};

/* Job j starts rank n-1-j, so that the lines read the last worker first and
 * the head last, as the nodes are listed in a stop. Not cancelled: a `run`
 * killed half-way leaves the runtime's storage holding the name (seen here);
 * the interrupt is looked at once every rank's run returned. */
static int start_one(int j, FILE *out, void *ctx)
{
    const struct start_all *a = ctx;
    int i = a->n - 1 - j;
    struct lnode *l = &a->ln[i];
    struct shcmd cmd = SHCMD_INIT;
    shcmd_exec(&cmd, config_str(a->c, CFG_RUNTIME), (char *)NULL);
    shcmd_args(&cmd, &a->p->ranks[i].run);
    struct ssh_result res;
    struct buf err = BUF_INIT;
    bool ran = node_run(&l->cn->node, &cmd, 120000, &res, &err) == 0;
    bool ok = ran && res.exit_status == 0;
    if (ran && !ok) {
        struct buf why = BUF_INIT;
        text_one_line(&why, buf_str(&res.err), res.err.len, 400);
        fprintf(out, "%s: starting dsv41-r%d failed: %s\n", l->cn->name, i, buf_str(&why));
        buf_free(&why);
    } else if (!ran) {
        fprintf(out, "%s: starting dsv41-r%d failed: %s\n", l->cn->name, i, buf_str(&err));
    } else {
        fprintf(out, "started dsv41-r%d on %s\n", i, l->cn->name);
    }
    if (ran)
        ssh_result_free(&res);
    shcmd_free(&cmd);
    buf_free(&err);
    return ok ? 0 : -1;
}

static int launch_cluster(const struct config *c, const struct launch_opts *o, struct cluster *cl,
                          struct lnode *ln, struct status_report *r)
{
    int n = cl->n;
    struct strv problems = STRV_INIT;
    prepare(c, cl, ln, r, &problems);
    if (problems.n && !o->dry_run) {
        print_problems(&problems);
        strv_free(&problems);
        return 1;
    }
    struct deploy_node dn[CLUSTER_MAX_NODES];
    for (int i = 0; i < n; i++)
        dn[i] = ln[i].dn;
    struct deploy_plan plan;
    struct buf err = BUF_INIT;
    if (deploy_build(c, dn, n, &plan, &err) < 0) {
        printf("%s\n", buf_str(&err));
        buf_free(&err);
        strv_free(&problems);
        return 2;
    }
    int rc = 1;
    printf("launch: %d nodes, TP %d x PP %d, image %s\n", n, plan.tp, plan.pp,
           config_str(c, CFG_IMG));
    for (int i = 0; i < n; i++) {
        if (dn[i].unknown)
            printf("  %-8s fabric %s\n", ln[i].cn->name, dn[i].unknown);
        else
            printf("  %-8s %s %s  HCAs %s  GID %d%s\n", ln[i].cn->name, dn[i].ifname, dn[i].ipv4,
                   dn[i].hcas, dn[i].gid_index < 0 ? 3 : dn[i].gid_index,
                   plan.ranks[i].gid_guessed ? " (not detected: the measured 3)" : "");
    }
    if (o->dry_run) {
        print_plan(c, &plan, ln);
        dry_checks(c, ln, n, r, &problems);
        /* a node that did not answer has no figures to budget with */
        bool all = true;
        for (int i = 0; i < n; i++)
            all = all && ln[i].cn->configured && r->nodes[i].snap.reachable;
        if (all)
            check_budget(c, ln, r, n, true);
        rc = dry_run_verdict(&problems);
        goto out;
    }
    if (plan.incomplete) /* prepare refused those nodes already: a guard, not a path */
        goto out;
    if (check_existing(r, o->force, n) < 0 || check_budget(c, ln, r, n, o->force) < 0 ||
        interrupted_before("during the checks"))
        goto out;
    int bad = preflight_nodes(c, ln, n);
    if (interrupted_before("during the preflight") || bad)
        goto out;
    launch_show_image_ids(c, ln, n);
    if (interrupted_before("before the state was written") || write_state(c, &plan, ln, n) < 0)
        goto out;
    if (interrupt_pending()) {
        printf("interrupted by %s before the old ranks stopped: they run as they did (their "
               "env files on disk are the new launch's)\n",
               interrupt_name(interrupt_pending()));
        goto out;
    }
    /* stale ranks everywhere first: a new worker could join a stale head */
    if (ranks_stop_all(c, cl, o->force, stdout) > 0)
        goto out;
    if (interrupt_pending()) {
        printf("interrupted by %s after the old ranks stopped: no new rank was started\n",
               interrupt_name(interrupt_pending()));
        goto out;
    }
    long port, mport;
    config_get_long(c, CFG_PORT, &port, &err);
    config_get_long(c, CFG_MPORT, &mport, &err);
    if (!port_free((int)port) || !port_free((int)mport)) {
        printf("head: port %ld is in use by another program: free it, or set %s\n",
               port_free((int)port) ? mport : port, port_free((int)port) ? "MPORT" : "PORT");
        goto out;
    }
    /* the guards come before the ranks, on every node */
    char dirs[CLUSTER_MAX_NODES][512];
    for (int i = 0; i < n; i++)
        snprintf(dirs[i], sizeof dirs[i], "%s", ln[i].state_dir);
    /* the units first: where one runs, guards_start finds its guard */
    if (o->install_units)
        units_install(c, cl, dirs, stdout);
    if (guards_start(c, cl, dirs, stdout) > 0 && !o->no_guard) {
        printf("refusing to start ranks without a memory guard on every node (a GB10 wedges "
               "at zero MemAvailable); --no-guard overrides\n");
        goto out;
    }
    /* every rank at once: the stale ones are gone and MPORT is free, so no
     * new rank can meet an old one, and the order does not matter to vLLM
     * (rank 0 serves the TCPStore at MASTER_ADDR:MPORT and the others retry
     * their connect until it answers: init_distributed_environment,
     * vllm/distributed/parallel_state.py).
     * One after another cost a `run` round trip (~220 ms here) per rank. */
    double t0 = mono_s();
    struct start_all sa = {c, &plan, ln, n};
    int failed = fanout_run(n, start_one, &sa, stdout);
    if (failed || interrupt_pending()) {
        if (interrupt_pending())
            printf("interrupted by %s while the ranks started: stopping those this launch "
                   "started\n",
                   interrupt_name(interrupt_pending()));
        if (launch_kill_all(c, ln, n) == 0 && interrupt_pending())
            printf("stopped: no rank of this launch runs\n");
        goto out;
    }
    guards_resolve(c, cl, stdout); /* the guards protect the new ranks from now */
    fflush(stdout);
    rc = launch_wait_ready(c, ln, n, o->timeout_s, t0);
    record_budget(c, ln, n);
out:
    deploy_free(&plan);
    buf_free(&err);
    strv_free(&problems);
    return rc;
}

int launch_run(const struct config *c, const struct launch_opts *o)
{
    struct cluster cl;
    if (cluster_open_for("launch", c, &cl) < 0)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    interrupt_catch();
    struct lnode *ln = calloc(CLUSTER_MAX_NODES, sizeof *ln);
    struct status_report *r = malloc(sizeof *r);
    int rc = 2;
    if (ln && r) {
        for (int i = 0; i < CLUSTER_MAX_NODES; i++) {
            pthread_mutex_init(&ln[i].mu, NULL);
            phase_init(&ln[i].ph);
        }
        rc = launch_cluster(c, o, &cl, ln, r);
        for (int i = 0; i < CLUSTER_MAX_NODES; i++) {
            strv_free(&ln[i].transitions);
            pthread_mutex_destroy(&ln[i].mu);
        }
    }
    free(ln);
    free(r);
    cluster_close(&cl);
    return rc == 0 && interrupt_pending() ? 1 : rc;
}
