/* `dsv41-top pi`: how to connect the Pi coding agent from a laptop, and
 * `pi --check` where Pi runs (see src/serve/pi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "commands.h"
#include "pi.h"
#include "usage.h"

const struct usage_doc pi_doc = {
    "pi", "[--url URL]\n--check [--timeout SEC]",
    "connect the Pi coding agent from a laptop; check it",
    "Without --check: the lines to run on a laptop to connect Pi to this deployment - the "
    "install command with the head's address (--url when the laptop reaches the API by another "
    "name), the line that fetches the key over ssh (the key itself is never printed) and the pi "
    "command. The console shows the same (P).\n\n"
    "--check, where Pi runs and dsv41-top is installed (on a laptop without it, pi/install.sh "
    "--check does the same with node alone, and asks /v1/models too): the dsv41-sparks provider in Pi's models.json (PI_CODING_AGENT_DIR, "
    "else ~/.pi/agent), the extension that lifts Pi's output limit, the key variable the "
    "provider names, and one request sent the way Pi sends it, answered. PASS/FAIL per check.",
    (const struct usage_exit[]){{0, "(with --check: every check passed)"},
                                {1, "a check failed"},
                                {2, "a usage error"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--url", "URL", "the API as the laptop reaches it (default: the head's address)"},
        {"--check", NULL, "check Pi's configuration where Pi runs, and one request"},
        {"--timeout", "SEC", "with --check: how long the request may take (default 120)"},
        {NULL, NULL, NULL}}};
int cmd_pi(const struct config *c, int argc, char **argv)
{
    const char *url = NULL;
    bool check = false;
    int timeout_s = 120;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--url") == 0 && i + 1 < argc) {
            url = argv[++i];
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout_s = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage_print(stdout, &pi_doc);
            return 0;
        } else {
            usage_print(stderr, &pi_doc);
            return 2;
        }
    }
    if (url && (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)) {
        fprintf(stderr, "dsv41-top pi: --url %s: give the API's URL, e.g. http://spark-head:8000\n",
                url);
        return 2;
    }
    if (timeout_s <= 0) {
        usage_print(stderr, &pi_doc);
        return 2;
    }
    if (!check) {
        struct strv lines = STRV_INIT;
        pi_connect_lines(c, url, &lines);
        for (int i = 0; i < lines.n; i++)
            puts(lines.v[i]);
        strv_free(&lines);
        return 0;
    }
    api_global_init();
    char dir[1024];
    pi_config_dir(dir, sizeof dir);
    int failed = pi_check(dir, timeout_s * 1000, stdout);
    printf("%d passed, %d failed\n", 4 - failed, failed);
    return failed ? 1 : 0;
}
