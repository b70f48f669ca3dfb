/* dsv41-guard: the memory guard alone, linked statically against libc so
 * that launch can push it to a worker that has nothing of ours installed. */
#include <stdio.h>

#include "guardctl.h"

int main(int argc, char **argv)
{
    struct guard_opts o;
    guard_opts_defaults(&o);
    enum guardctl_action a;
    if (guardctl_parse(argc, argv, &o, &a) < 0 || !o.state_dir[0]) {
        fprintf(stderr, "usage: dsv41-guard --state-dir DIR [--floor GIB] [--warn GIB] [--trace GIB]\n"
                        "                   [--psi-warn PCT] [--psi-kill PCT] [--frag-warn N]\n"
                        "                   [--kmsg-warn N] [--kmsg PATH]\n"
                        "                   [--runtime docker|podman] [--socket PATH|none] "
                        "[--ranks N]\n"
                        "                   [--pid PID]... [--proc-root DIR]\n"
                        "                   [--daemon | --stop | --status | --resolve]\n");
        return 2;
    }
    return guardctl(&o, a);
}
