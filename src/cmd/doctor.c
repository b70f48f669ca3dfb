/* `dsv41-top doctor`: the preflight checks of every node, each failed one
 * with the command that fixes it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alike.h"
#include "budget.h"
#include "cluster.h"
#include "commands.h"
#include "preflight.h"
#include "guards.h"
#include "snapshot.h"
#include "usage.h"
#include "units.h"

struct doctor {
    int fails, warns;
};

static void report(struct doctor *d, const char *level, const char *node, const char *what,
                   const char *fix)
{
    if (strcmp(level, "FAIL") == 0)
        d->fails++;
    else if (strcmp(level, "warn") == 0)
        d->warns++;
    printf("%-4s %-6s %s\n", level, node, what);
    if (fix && *fix)
        printf("            fix: %s\n", fix);
}

static void check_node(const struct config *c, struct cluster_node *cn, int nranks,
                       struct doctor *d)
{
    const char *nm = cn->node.name;
    char what[600], fix[600];
    if (!cn->configured) {
        report(d, "FAIL", nm, "WORKER is not set", "export WORKER=user@<worker fabric IP>");
        return;
    }
    struct snapshot *s = malloc(sizeof *s);
    if (!s)
        return;
    if (snapshot_collect(&cn->node, config_str(c, CFG_RUNTIME), nranks, &cn->ov, 30000, s) < 0) {
        report(d, "FAIL", nm, s->error, "");
        free(s);
        return;
    }
    report(d, "ok", nm, cn->node.local ? "local node" : "reachable over ssh", "");
    struct buf err = BUF_INIT;
    struct preflight pf;
    char state_dir[512], model_dir[512];
    if (cluster_state_dir(c, cn, state_dir, sizeof state_dir, &err) == 0 &&
        cluster_model_dir(cn, model_dir, sizeof model_dir, &err) == 0 &&
        preflight_check(c, &cn->node, model_dir, state_dir, &pf, &err) == 0) {
        for (int i = 0; i < pf.missing.n; i++) {
            snprintf(what, sizeof what, "missing %s/%s", model_dir, pf.missing.v[i]);
            report(d, "FAIL", nm, what,
                   cn->rank == 0 ? "dsv41-top download"
                                 : "dsv41-top copy-to-peer (or download on this node)");
        }
        if (!pf.missing.n)
            report(d, "ok", nm, "model files and plan present", "");
        if (pf.image == 1) {
            report(d, "ok", nm, "image present", "");
        } else if (pf.image == 0) {
            snprintf(what, sizeof what, "image %s is not present", config_str(c, CFG_IMG));
            snprintf(fix, sizeof fix, "%s pull %s (launch pulls it too)",
                     config_str(c, CFG_RUNTIME), config_str(c, CFG_IMG));
            report(d, "warn", nm, what, fix);
        }
        if (pf.free_kib >= 0) {
            double gib = pf.free_kib / 1048576.0;
            snprintf(what, sizeof what, "%.0f GiB free for STATE_DIR caches", gib);
            report(d, gib < 20 ? "warn" : "ok", nm, what,
                   gib < 20 ? "free space on the STATE_DIR filesystem (kernel caches)" : "");
        }
        preflight_free(&pf);
    } else {
        report(d, "FAIL", nm, buf_str(&err), "");
    }
    buf_free(&err);
    if (!s->runtime_ok) {
        snprintf(what, sizeof what, "container runtime %s: %s", config_str(c, CFG_RUNTIME),
                 s->runtime_note);
        report(d, "FAIL", nm, what, "install docker (or set RUNTIME=podman) and add your user "
                                    "to its group");
    } else {
        report(d, "ok", nm, "container runtime answers", "");
    }
    if (s->fabric.ok) {
        snprintf(what, sizeof what, "fabric %s %s, HCAs %s, GID index %d", s->fabric.ifname,
                 s->fabric.ipv4, s->fabric.hcas, s->fabric.gid_index);
        report(d, "ok", nm, what, "");
    } else {
        report(d, "FAIL", nm, s->fabric.why,
               "check `rdma link` and `ip -br a`; a fabric IPv4 lost on reboot needs a static "
               "profile (nmcli)");
    }
    if (s->mem_ok) {
        struct budget b;
        struct buf line = BUF_INIT;
        budget_for_node(c, nm, s, &b);
        budget_describe(&b, &line);
        report(d, b.known && !b.fits ? "FAIL" : !b.known ? "info" : "ok", nm, buf_str(&line),
               b.known && !b.fits ? "launch refuses this without --force" : "");
        buf_free(&line);
        double fr = s->mem.free_kib.ok ? s->mem.free_kib.v / 1048576 : 0;
        double ca = s->mem.cached_kib.ok ? s->mem.cached_kib.v / 1048576 : 0;
        snprintf(what, sizeof what, "MemFree %.1f GiB, Cached %.1f GiB%s%s", fr, ca,
                 b.memfree_low ? ": " : "", b.memfree_low ? b.memfree_note : "");
        report(d, b.memfree_low ? "warn" : "ok", nm, what, "");
    } else {
        report(d, "FAIL", nm, "cannot read /proc/meminfo", "");
    }
    if (s->gpu_note[0]) {
        snprintf(what, sizeof what, "GPU: %s", s->gpu_note);
        report(d, "warn", nm, what, "install the NVIDIA driver (nvidia-smi)");
    }
    free(s);
}

/* The guard's systemd unit (no guard after a reboot without it); with fix,
 * installed where it is missing, and where systemd is absent the guard
 * started as a daemon instead. */
static void check_unit(const struct config *c, struct cluster *cl, int i, bool fix,
                       struct doctor *d)
{
    struct cluster_node *cn = &cl->nodes[i];
    const char *nm = cn->node.name;
    struct units_state st;
    struct buf err = BUF_INIT;
    char what[600], dir[512];
    if (!cn->configured)
        return;
    /* the state dir lets the local node's answer come from the guard's lock */
    struct buf derr = BUF_INIT;
    if (cluster_state_dir(c, cn, dir, sizeof dir, &derr) < 0)
        dir[0] = '\0';
    buf_free(&derr);
    if (units_probe_in(cn, dir, NULL, &st, &err) < 0) {
        report(d, "FAIL", nm, buf_str(&err), "");
    } else if (units_guard_ok(&st) && !fix) {
        /* with fix it is installed again: a unit written before an upgrade or
         * a change of settings would hold the old guard (an unchanged file is
         * only started, not restarted) */
        report(d, "ok", nm, UNITS_GUARD " enabled and active (a guard after every boot)", "");
    } else if (!fix) {
        char desc[200];
        units_describe(&st, desc, sizeof desc);
        snprintf(what, sizeof what, "%s: %s", UNITS_GUARD, desc);
        report(d, st.systemd ? "warn" : "info", nm, what,
               st.systemd ? "dsv41-top doctor --fix (or launch --install-units): without it "
                            "no memory guard runs after a reboot"
                          : "no systemd: launch starts the guard as `guard --daemon`; it does "
                            "not come back after a reboot");
    } else if (cluster_state_dir(c, cn, dir, sizeof dir, &err) < 0) {
        report(d, "FAIL", nm, buf_str(&err), "");
    } else {
        enum units_result r = units_install_node(c, cl, i, dir, stdout);
        if (r == UNITS_NO_SYSTEMD) {
            printf("%s: falling back: the memory guard as `guard --daemon`\n", nm);
            r = guards_start_node(c, cl, i, dir, stdout) ? UNITS_FAILED : UNITS_RUNNING;
            report(d, r == UNITS_RUNNING ? "info" : "FAIL", nm,
                   r == UNITS_RUNNING ? "no systemd: the guard runs as a daemon until the next "
                                        "reboot"
                                      : "no systemd, and the daemon guard did not start",
                   "");
        } else {
            report(d, r == UNITS_RUNNING ? "ok" : "FAIL", nm,
                   r == UNITS_RUNNING ? UNITS_GUARD " installed" : UNITS_GUARD " not installed",
                   "");
        }
    }
    buf_free(&err);
}

const struct usage_doc doctor_doc = {
    "doctor", NULL, "preflight checks of every node, each with a fix",
    "Preflight checks of every node (ssh, model files, image, runtime, fabric, memory, disk, "
    "the guard's systemd unit), each failed one with its fix.",
    (const struct usage_exit[]){{0, "every check passed"},
                                {1, "a check failed"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--fix", NULL,
         "install dsv41-guard.service where it is missing (root or sudo -n on the node); where "
         "systemd is absent, start `guard --daemon` instead"},
        {NULL, NULL, NULL}}};

int cmd_doctor(const struct config *c, int argc, char **argv)
{
    bool fix = argc == 2 && strcmp(argv[1], "--fix") == 0;
    if (argc > 1 && !fix) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        usage_print(help ? stdout : stderr, &doctor_doc);
        return help ? 0 : 2;
    }
    struct cluster cl;
    if (cluster_open_for("doctor", c, &cl) < 0)
        return 2;
    struct doctor d = {0, 0};
    struct alike_print *al = calloc(CLUSTER_MAX_NODES, sizeof *al);
    const char *names[CLUSTER_MAX_NODES];
    for (int i = 0; i < cl.n; i++) {
        check_node(c, &cl.nodes[i], cl.n, &d);
        check_unit(c, &cl, i, fix, &d);
        names[i] = cl.nodes[i].name;
        if (al && cl.nodes[i].configured)
            alike_collect(c, &cl.nodes[i], &al[i]);
    }
    char warn[ALIKE_FIELDS][320];
    int nw = al ? alike_compare(al, names, cl.n, warn, ALIKE_FIELDS) : 0;
    for (int k = 0; k < nw; k++)
        report(&d, "warn", "all", warn[k],
               "run the same image and driver on every node (the NCCL the ranks load comes "
               "with the image)");
    if (al && !nw && cl.n > 1)
        report(&d, "ok", "all", "the nodes alike: kernel, driver, image, CUDA, NCCL (where known)",
               "");
    free(al);
    struct buf v = BUF_INIT;
    rdma_verbs_probe(&v);
    report(&d, "info", "head", buf_str(&v), "");
    buf_free(&v);
    printf("%d failed, %d warnings\n", d.fails, d.warns);
    cluster_close(&cl);
    return d.fails ? 1 : 0;
}
