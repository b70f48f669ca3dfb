#include "cmdtab.h"

#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "docs.h"
#include "keys.h"
#include "version.h"

static const struct usage_doc version_doc, keys_doc;

static int cmd_version(const struct config *c, int argc, char **argv)
{
    (void)c;
    (void)argv;
    if (argc > 1) { /* it takes nothing: a word after it is a mistake, said */
        usage_print(stderr, &version_doc);
        return 2;
    }
    printf("dsv41-top %s (%s)\n", DSV41_VERSION, DSV41_GITREV);
    return 0;
}

static int cmd_keys(const struct config *c, int argc, char **argv)
{
    (void)c;
    (void)argv;
    if (argc > 1) {
        usage_print(stderr, &keys_doc);
        return 2;
    }
    keys_markdown(stdout);
    return 0;
}

static const struct usage_doc version_doc = {
    "version", NULL, "the version and the git revision it was built from",
    "Prints the version and the git revision of the source it was built from (with -dirty when "
    "the tree had changes); the same as --version.",
    NULL, NULL};

static const struct usage_doc keys_doc = {
    "keys", NULL, "the console's keys, as a Markdown table",
    "The console's keys as a Markdown table: docs/tui.md's keys section is this output.", NULL,
    NULL};

const struct usage_doc main_doc = {
    NULL, "[--config FILE] [--set KEY=VALUE]... [COMMAND [ARGS]]", NULL,
    "Runs DeepSeek-V4.1-Flash with vLLM across DGX Spark nodes. Without a command it opens the "
    "console (dsv41-top --help-console for its options).",
    NULL,
    (const struct usage_opt[]){
        {"--config", "FILE", "the config file (default $XDG_CONFIG_HOME/dsv41-top/config, or "
                             "DSV41_CONFIG)"},
        {"-s, --set", "KEY=VALUE", "a setting for this run, over the file and the environment "
                                   "(again for more)"},
        {"-h, --help", NULL, "this text; with a command, the command's"},
        {"--help-console", NULL, "the console's options"},
        {"--version", NULL, "the version and the git revision it was built from"},
        {NULL, NULL, NULL}}};

const struct cmd_entry CMDTAB[] = {
    {&launch_doc, cmd_launch},       {&stop_doc, cmd_stop},
    {&restart_doc, cmd_restart},     {&logs_doc, cmd_logs},
    {&status_doc, cmd_status},       {&smoke_doc, cmd_smoke},
    {&bench_doc, cmd_bench},         {&gates_doc, cmd_gates},
    {&accept_doc, cmd_accept},
    {&guard_doc, cmd_guard},         {&verify_doc, cmd_verify},
    {&download_doc, cmd_download},   {&assemble_doc, cmd_assemble},
    {&copy_doc, cmd_copy_to_peer},   {&pi_doc, cmd_pi},
    {&watch_doc, cmd_watch},         {&exporter_doc, cmd_exporter},
    {&incidents_doc, cmd_incidents},
    {&doctor_doc, cmd_doctor},       {&config_doc, cmd_config},
    {&key_doc, cmd_key},
    {&keys_doc, cmd_keys},           {&docs_doc, cmd_docs},
    {&version_doc, cmd_version},
};
const size_t CMDTAB_N = sizeof CMDTAB / sizeof CMDTAB[0];

const struct cmd_entry *cmdtab_find(const char *name)
{
    for (size_t k = 0; k < CMDTAB_N; k++)
        if (strcmp(CMDTAB[k].doc->name, name) == 0)
            return &CMDTAB[k];
    return NULL;
}

void cmdtab_usage(FILE *f)
{
    usage_print(f, &main_doc);
    fputs("\ncommands:\n", f);
    for (size_t i = 0; i < CMDTAB_N; i++) {
        int w = fprintf(f, "  %s", CMDTAB[i].doc->name);
        fprintf(f, "%*s", w < 16 ? 16 - w : 1, "");
        usage_wrap(f, CMDTAB[i].doc->summary, 16, 80);
        fputc('\n', f);
    }
    fputs("\nRun 'dsv41-top COMMAND --help' for a command's options; man dsv41-top for all.\n", f);
}
