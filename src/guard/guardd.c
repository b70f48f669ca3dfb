/* dsv41-guard: the memory guard alone, linked statically against libc so
 * that launch can push it to a worker that has nothing of ours installed. */
#include <stdio.h>
#include <string.h>

#include "guardctl.h"
#include "text.h"


int main(int argc, char **argv)
{
    if (usage_wants_help(&guardd_doc, argc, argv)) {
        usage_print(stdout, &guardd_doc);
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
        usage_print(stderr, &guardd_doc);
        return 2;
    }
    return guardctl(&o, a);
}
