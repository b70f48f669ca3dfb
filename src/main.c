/* main: argv -> the table of subcommands (cmdtab.c). No logic of its own. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cmdtab.h"
#include "commands.h"
#include "config.h"
#include "interrupt.h"
#include "ssh.h"
#include "tui.h"

int main(int argc, char **argv)
{
    /* progress lines reach a pipe (a console job, `| tee`) as they happen */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* the one signal handler; a command that handles interrupts says so */
    interrupt_install();
    const char *file = getenv("DSV41_CONFIG");
    char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, i = 1;
    if (!sets)
        return 2;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if ((strcmp(argv[i], "--set") == 0 || strcmp(argv[i], "-s") == 0) &&
                   i + 1 < argc) {
            sets[nsets++] = argv[++i];
        } else if (strcmp(argv[i], "--help-console") == 0) {
            free(sets);
            char *h[] = {"dsv41-top", "--help", NULL};
            return tui_main(NULL, 2, h, NULL, 0);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cmdtab_usage(stdout);
            free(sets);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            free(sets);
            char *v[] = {"version", NULL};
            return cmdtab_find("version")->fn(NULL, 1, v);
        } else {
            break; /* the console's own options */
        }
    }
    bool console = i == argc || argv[i][0] == '-';
    const struct cmd_entry *cmd = console ? NULL : cmdtab_find(argv[i]);
    if (!cmd && !console) {
        fprintf(stderr, "dsv41-top: unknown command '%s'\n\n", argv[i]);
        cmdtab_usage(stderr);
        free(sets);
        return 2;
    }
    /* the command's options against its documentation: --help needs no
     * configuration, and an option the text does not name is refused */
    if (cmd && usage_wants_help(cmd->doc, argc - i, argv + i)) {
        usage_print(stdout, cmd->doc);
        free(sets);
        return 0;
    }
    struct buf bad = BUF_INIT;
    if (cmd && usage_check(cmd->doc, argc - i, argv + i, &bad) < 0) {
        fprintf(stderr, "dsv41-top %s\n\n", buf_str(&bad));
        usage_print(stderr, cmd->doc);
        buf_free(&bad);
        free(sets);
        return 2;
    }
    struct config cfg;
    struct buf err = BUF_INIT;
    if (config_load(&cfg, file, sets, nsets, &err) < 0) {
        fprintf(stderr, "dsv41-top: %s\n", buf_str(&err));
        buf_free(&err);
        config_free(&cfg);
        free(sets);
        return 2;
    }
    free(sets);
    if (ssh_global_init() < 0 || api_global_init() < 0) {
        fprintf(stderr, "dsv41-top: cannot initialise libssh2/libcurl\n");
        config_free(&cfg);
        return 2;
    }
    /* the console passes the global options on to the jobs it runs */
    int rc = console ? tui_main(&cfg, argc - i + 1, argv + i - 1, argv + 1, i - 1)
                     : cmd->fn(&cfg, argc - i, argv + i);
    config_free(&cfg);
    return rc;
}
