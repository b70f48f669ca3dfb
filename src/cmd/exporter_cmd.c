/* `dsv41-top exporter`: the console's engine without the screen, its
 * figures for Prometheus. The same monitor samples every node and the API;
 * a scrape answers from the last sample (src/ops/exporter.c); the alerts
 * run here too when configured. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "commands.h"
#include "exporter.h"
#include "interrupt.h"
#include "job.h"
#include "monitor.h"
#include "ops.h"
#include "state.h"
#include "units.h"
#include "usage.h"

const struct usage_doc exporter_doc = {
    "exporter", NULL, "every node's figures for Prometheus, on /metrics",
    "Samples every node, its memory guard, the ranks and the API as the console does, and serves "
    "the figures on http://ADDR:PORT/metrics in Prometheus' text format (node_exporter's "
    "conventions: base units, a node label): memory, PSI, free 4 MiB blocks, NVRM lines, the GPU, "
    "the RDMA ports, the guards and their firings, the ranks, the wedge, incidents by kind, "
    "download and copy progress, the newest bench's figures, the acceptance verdict and the "
    "supervisor's restarts. A scrape answers from the last sample; nothing is asked of a node "
    "for it. Beyond loopback a bearer token from EXPORTER_TOKEN_FILE (mode 0600) is required; "
    "a scrape without it gets 401. ALERT_WEBHOOK and ALERT_CMD are honoured here as in watch. "
    "Runs until SIGINT/SIGTERM.",
    (const struct usage_exit[]){{0, "stopped by a signal"},
                                {1, "--unit: the unit could not be made (named)"},
                                {2, "bad usage, a setting, or the address cannot be listened on"},
                                {-1, NULL}},
    (const struct usage_opt[]){
        {"--listen", "ADDR:PORT",
         "where to serve (default EXPORTER_LISTEN, 127.0.0.1:9841; [::1]:9841 for IPv6)"},
        {"--interval", "S", "seconds between samples (0.2 to 3600, default 2)"},
        {"--unit", NULL,
         "print dsv41-exporter.service filled in for this head and exit: dsv41-top exporter "
         "--unit | sudo tee /etc/systemd/system/dsv41-exporter.service"},
        {NULL, NULL, NULL}}};

/* The engine's messages (a guard firing, an alert not delivered) on stderr:
 * the journal's. */
static void say_messages(struct state *st, uint64_t *said)
{
    char lines[16][400];
    int n = 0;
    state_lock(st);
    if (*said < st->messages.first)
        *said = st->messages.first;
    for (; *said < st->messages.end && n < 16; ++*said) {
        const struct logline *l = logbuf_get(&st->messages, *said);
        if (l)
            snprintf(lines[n++], sizeof lines[0], "%.*s", (int)l->len, l->text);
    }
    state_unlock(st);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "dsv41-top exporter: %s\n", lines[i]);
}

int cmd_exporter(const struct config *c, int argc, char **argv)
{
    const char *listen = NULL;
    double interval = 2;
    bool unit = false;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(argv[i], "--unit") == 0) {
            unit = true;
        } else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc &&
                   (interval = strtod(argv[i + 1], &end)) >= 0.2 && interval <= 3600 && !*end) {
            i++;
        } else {
            bool help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            usage_print(help ? stdout : stderr, &exporter_doc);
            return help ? 0 : 2;
        }
    }
    if (unit)
        return cmd_print_head_unit(c, UNITS_EXPORTER, "exporter");
    struct cluster *cl;
    static struct state st;
    if (cmd_headless_open("exporter", c, &cl, &st) != 0)
        return 2;
    int rc = 0;
    struct buf err = BUF_INIT;
    struct monitor *m = monitor_start(c, cl, &st, (int)(interval * 1000));
    struct ops *ops = NULL;
    struct exporter *x = NULL;
    if (!m) {
        fprintf(stderr, "dsv41-top exporter: cannot start sampling (out of memory or threads)\n");
        rc = 2;
    } else if (ops_start(c, &st, false, &ops, &err) < 0 ||
               exporter_start(c, listen, ops, &x, &err) < 0) {
        fprintf(stderr, "dsv41-top exporter: %s\n", buf_str(&err));
        rc = 2;
    } else {
        monitor_take_usr(m);
        fprintf(stderr, "dsv41-top exporter: serving http://%s/metrics\n", exporter_address(x));
    }
    buf_free(&err);
    uint64_t said = 0;
    while (rc == 0 && !interrupt_pending()) {
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
        say_messages(&st, &said);
    }
    monitor_take_usr(NULL);
    exporter_stop(x);
    ops_stop(ops);
    cmd_headless_close(m, cl, &st);
    return rc;
}
