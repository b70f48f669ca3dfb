/* `dsv41-top guard`: the memory guard of this node, from the configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cluster.h"
#include "guardctl.h"
#include "guards.h"
#include "usage.h"

const struct usage_doc guard_doc = {
    "guard", "[--floor GIB] [--daemon | --stop | --status [--all]]", "this node's memory guard",
    "The memory guard of this node: below the floor (MEMGUARD_GIB, default 1) of MemAvailable it "
    "SIGKILLs the dsv41-r* ranks of this node. Runs in the foreground, or detached with --daemon; "
    "one guard per node (STATE_DIR/guard.HOST.lock, HOST the hostname). Log: "
    "STATE_DIR/memguard.log. Workers run the static dsv41-guard, whose own options are in "
    "dsv41-guard(8).",
    (const struct usage_exit[]){{0, "well"},
                                {1, "--status found no fresh heartbeat"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--floor", "GIB", "the floor of MemAvailable (default MEMGUARD_GIB)"},
        {"--daemon", NULL, "detach; the log goes to STATE_DIR/memguard.log"},
        {"--stop", NULL, "stop this node's guard"},
        {"--status", NULL, "whether this node's guard runs and its heartbeat is fresh"},
        {"--all", NULL, "with --status: every node's guard, over ssh"},
        {NULL, NULL, NULL}}};
int cmd_guard(const struct config *c, int argc, char **argv)
{
    struct guard_opts o;
    guard_opts_from_config(c, &o);
    enum guardctl_action a = GUARD_RUN;
    bool all = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--daemon") == 0)
            a = GUARD_DAEMON;
        else if (strcmp(argv[i], "--stop") == 0)
            a = GUARD_STOP;
        else if (strcmp(argv[i], "--status") == 0)
            a = GUARD_STATUS;
        else if (strcmp(argv[i], "--floor") == 0 && i + 1 < argc &&
                 guard_parse_gib(argv[i + 1], &o.floor_kib) == 0)
            i++;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_print(stdout, &guard_doc);
            return 0;
        } else {
            usage_print(stderr, &guard_doc);
            return 2;
        }
    }
    if (o.floor_kib <= 0) {
        fprintf(stderr, "dsv41-top guard: MEMGUARD_GIB=%s: expected GiB, a number above 0 "
                        "and at most %d\n",
                config_str(c, CFG_MEMGUARD_GIB), GUARD_MAX_GIB);
        return 2;
    }
    if (all && a == GUARD_STATUS) {
        struct cluster cl;
        if (cluster_open_for("guard", c, &cl) < 0)
            return 2;
        int bad = guards_status(c, &cl, stdout);
        cluster_close(&cl);
        return bad ? 1 : 0;
    }
    if (all) {
        usage_print(stderr, &guard_doc);
        return 2;
    }
    return guardctl(&o, a);
}
