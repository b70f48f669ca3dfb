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
    printf("# config file: %s\n", c->file);
    for (int i = 0; i < c->count; i++) {
        const struct config_value *v = &c->values[i];
        const char *shown = v->value;
        if (config_is_secret(v->key))
            shown = v->value[0] ? "(set, hidden)" : "";
        printf("%-18s = %-40s  [%s%s%s]  %s\n", v->key, shown, config_source_name(v->source),
               v->origin ? " " : "", v->origin ? v->origin : "", config_help(v->key));
    }
    return 0;
}
