/* dsv41-guard: the memory guard alone, linked statically against libc so
 * that launch can push it to a worker that has nothing of ours installed. */
#include <stdio.h>
#include <string.h>

#include "guardctl.h"
#include "text.h"

static const char USAGE[] =
    "usage: dsv41-guard --state-dir DIR [--floor GIB] [--warn GIB] [--trace GIB]\n"
    "                   [--psi-warn PCT] [--psi-kill PCT] [--frag-warn N]\n"
    "                   [--kmsg-warn N] [--kmsg PATH]\n"
    "                   [--runtime docker|podman] [--socket PATH|none] [--ranks N]\n"
    "                   [--pid PID]... [--proc-root DIR]\n"
    "                   [--daemon | --stop | --status | --resolve]\n";

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(USAGE, stdout);
        puts("The memory guard of one node, which `dsv41-top launch` starts on every node\n"
             "(docs/guard.md). Below --floor GiB of MemAvailable it kills the node's ranks.");
        return 0;
    }
    struct guard_opts o;
    guard_opts_defaults(&o);
    enum guardctl_action a;
    int bad = 0;
    int rc = guardctl_parse(argc, argv, &o, &a, &bad);
    if (rc < 0 || !o.state_dir[0]) {
        if (rc < 0) { /* the flag and its value, cleaned and cut for the screen */
            char flag[48], val[96];
            const char *v = bad + 1 < argc && strncmp(argv[bad + 1], "--", 2) ? argv[bad + 1] : "";
            text_clean(flag, sizeof flag, argv[bad], strlen(argv[bad]));
            text_clean(val, sizeof val, v, strlen(v));
            fprintf(stderr, "dsv41-guard: not understood: %s%s%s%s\n", flag, *v ? " " : "", val,
                    strlen(v) >= sizeof val ? " (too long?)" : "");
        } else {
            fprintf(stderr, "dsv41-guard: --state-dir is needed\n");
        }
        fputs(USAGE, stderr);
        return 2;
    }
    return guardctl(&o, a);
}
