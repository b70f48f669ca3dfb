/* `dsv41-top config`: every setting with its value and source. Secrets are
 * shown only as set/unset. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "usage.h"

const struct usage_doc config_doc = {
    "config", NULL, "every setting, its value and where it came from",
    "Prints every setting, its value and where it came from: default < config file "
    "($XDG_CONFIG_HOME/dsv41-top/config, or --config FILE, or DSV41_CONFIG) < environment < "
    "--set KEY=VALUE. Secrets show only as set.",
    NULL,
    NULL};

int cmd_config(const struct config *c, int argc, char **argv)
{
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        usage_print(help ? stdout : stderr, &config_doc);
        return help ? 0 : 2;
    }
    config_dump(c, stdout);
    return 0;
}
