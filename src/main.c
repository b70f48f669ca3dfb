/* main: argv -> a table of subcommands. No logic of its own. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "commands.h"
#include "config.h"
#include "interrupt.h"
#include "ssh.h"
#include "keys.h"
#include "tui.h"

#define DSV41_VERSION "0.1.0"

struct cmd_entry {
    const char *name;
    const char *usage;
    int (*fn)(const struct config *c, int argc, char **argv);
};

static int cmd_version(const struct config *c, int argc, char **argv)
{
    (void)c;
    (void)argc;
    (void)argv;
    printf("dsv41-top %s\n", DSV41_VERSION);
    return 0;
}

static int cmd_keys(const struct config *c, int argc, char **argv)
{
    (void)c;
    (void)argc;
    (void)argv;
    keys_markdown(stdout);
    return 0;
}

static const struct cmd_entry COMMANDS[] = {
    {"launch", "[--dry-run] [--force]   start the deployment and wait until it answers",
     cmd_launch},
    {"stop", "[--force]  remove the ranks on every node", cmd_stop},
    {"restart", "[--force]  stop, then launch", cmd_restart},
    {"logs", "[r0|r1] [-f] [--tail N]   the ranks' logs", cmd_logs},
    {"status", "[--json]   every node, the fabric, the ranks and the API", cmd_status},
    {"smoke", "[URL]      text, tool call and vision checks, PASS/FAIL each", cmd_smoke},
    {"bench", "[URL] [--out FILE] ...   prefill and decode speed, saved as JSON", cmd_bench},
    {"gates", "[URL] [--ctx N]   the six acceptance gates, with evidence JSON", cmd_gates},
    {"guard", "[--daemon|--stop|--status]   this node's memory guard", cmd_guard},
    {"verify", "[--node NAME|--all] [PATH...]   the checkpoint against its sha256 manifest",
     cmd_verify},
    {"download", "[--dir DIR] [--include GLOB]... [--dry-run]   the checkpoint from the hub",
     cmd_download},
    {"assemble", "[DIR]      shards rebuilt from their .partNN pieces, with little extra disk",
     cmd_assemble},
    {"copy-to-peer", "[--node NAME] [--dry-run]   the checkpoint to the workers, verified there",
     cmd_copy_to_peer},
    {"pi", "[--url URL] [--check]   connect the Pi coding agent from a laptop; check it",
     cmd_pi},
    {"watch", "[--json] [--once] [--exit-on-alarm]   the console's checks headless, a line per change",
     cmd_watch},
    {"incidents", "           the evidence kept when a guard fired, the engine wedged, a rank exited",
     cmd_incidents},
    {"doctor", "           preflight checks of every node, each with a fix", cmd_doctor},
    {"config", "           every setting, its value and where it came from", cmd_config},
    {"keys", "           the console's keys, as a Markdown table", cmd_keys},
    {"version", "           print the version", cmd_version},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: dsv41-top [--config FILE] [--set KEY=VALUE]... [COMMAND [ARGS]]\n\n"
               "Runs DeepSeek-V4.1-Flash with vLLM across DGX Spark nodes. Without a command\n"
               "it opens the console (dsv41-top --help-console for its options).\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].usage);
    fprintf(f, "\nRun 'dsv41-top COMMAND --help' for a command's options.\n");
}

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
            usage(stdout);
            free(sets);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            free(sets);
            return cmd_version(NULL, 0, NULL);
        } else {
            break; /* the console's own options */
        }
    }
    const struct cmd_entry *cmd = NULL;
    bool console = i == argc || argv[i][0] == '-';
    for (size_t k = 0; !console && k < sizeof COMMANDS / sizeof COMMANDS[0]; k++)
        if (strcmp(COMMANDS[k].name, argv[i]) == 0)
            cmd = &COMMANDS[k];
    if (!cmd && !console) {
        fprintf(stderr, "dsv41-top: unknown command '%s'\n\n", argv[i]);
        usage(stderr);
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
