/* `dsv41-top config`: every setting with its value and source. Secrets are
 * shown only as set/unset. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int cmd_config(const struct config *c, int argc, char **argv)
{
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        fprintf(help ? stdout : stderr,
                "usage: dsv41-top config\n"
                "  Prints every setting, its value and where it came from:\n"
                "  default < config file (%s) < environment < --set KEY=VALUE.\n",
                c->file);
        return help ? 0 : 2;
    }
    config_dump(c, stdout);
    return 0;
}
