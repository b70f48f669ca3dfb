/* `dsv41-top pi`: how to connect the Pi coding agent from a laptop, and
 * `pi --check` where Pi runs (see src/serve/pi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "commands.h"
#include "pi.h"

static const char PI_USAGE[] =
    "usage: dsv41-top pi [--url URL]\n"
    "       dsv41-top pi --check [--timeout SEC]\n"
    "\n"
    "Without --check: the lines to run on a laptop to connect Pi to this deployment - the\n"
    "install command with the head's address (--url when the laptop reaches the API by\n"
    "another name), the line that fetches the key over ssh (the key itself is never\n"
    "printed) and the pi command. The console shows the same (P).\n"
    "\n"
    "--check, where Pi runs: the dsv41-sparks provider in Pi's models.json\n"
    "(PI_CODING_AGENT_DIR, else ~/.pi/agent), the extension that lifts Pi's output limit,\n"
    "the key variable the provider names, and one request sent the way Pi sends it,\n"
    "answered. PASS/FAIL per check; exit 0 only when all pass.\n";

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
            fputs(PI_USAGE, stdout);
            return 0;
        } else {
            fputs(PI_USAGE, stderr);
            return 2;
        }
    }
    if (url && (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)) {
        fprintf(stderr, "dsv41-top pi: --url %s: give the API's URL, e.g. http://spark-head:8000\n",
                url);
        return 2;
    }
    if (timeout_s <= 0) {
        fputs(PI_USAGE, stderr);
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
