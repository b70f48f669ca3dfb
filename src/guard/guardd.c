/* dsv41-guard: the memory guard alone, linked statically against libc so
 * that launch can push it to a worker that has nothing of ours installed. */
#include <stdio.h>
#include <string.h>

#include "guardctl.h"

int main(int argc, char **argv)
{
    struct guard_opts o;
    memset(&o, 0, sizeof o);
    snprintf(o.proc_root, sizeof o.proc_root, "/proc");
    o.floor_kib = 1L << 20;
    o.trace_kib = 10L << 20;
    o.rearm_kib = 512L << 10;
    o.resolve_s = 2;
    o.nranks = 2;
    enum guardctl_action a;
    if (guardctl_parse(argc, argv, &o, &a) < 0 || !o.state_dir[0]) {
        fprintf(stderr, "usage: dsv41-guard --state-dir DIR [--floor GIB] [--trace GIB] "
                        "[--runtime docker|podman] [--ranks N] [--pid PID]... [--proc-root DIR]\n"
                        "                   [--daemon | --stop | --status | --resolve]\n");
        return 2;
    }
    return guardctl(&o, a);
}
