/* commands: the subcommand entry points main.c's table points at. Each takes
 * the loaded configuration and its own argv (argv[0] is the command name). */
#ifndef DSV41_COMMANDS_H
#define DSV41_COMMANDS_H

#include <stdbool.h>

#include "config.h"
#include "usage.h"

int cmd_status(const struct config *c, int argc, char **argv);
int cmd_doctor(const struct config *c, int argc, char **argv);
int cmd_config(const struct config *c, int argc, char **argv);
int cmd_launch(const struct config *c, int argc, char **argv);
int cmd_stop(const struct config *c, int argc, char **argv);
int cmd_restart(const struct config *c, int argc, char **argv);
int cmd_logs(const struct config *c, int argc, char **argv);
int cmd_smoke(const struct config *c, int argc, char **argv);
int cmd_bench(const struct config *c, int argc, char **argv);
int cmd_gates(const struct config *c, int argc, char **argv);
int cmd_accept(const struct config *c, int argc, char **argv);
int cmd_guard(const struct config *c, int argc, char **argv);
int cmd_verify(const struct config *c, int argc, char **argv);
int cmd_copy_to_peer(const struct config *c, int argc, char **argv);
int cmd_download(const struct config *c, int argc, char **argv);
int cmd_assemble(const struct config *c, int argc, char **argv);
int cmd_pi(const struct config *c, int argc, char **argv);
int cmd_key(const struct config *c, int argc, char **argv);
int cmd_watch(const struct config *c, int argc, char **argv);
int cmd_incidents(const struct config *c, int argc, char **argv);
int cmd_exporter(const struct config *c, int argc, char **argv);
/* `watch --unit`, `exporter --unit`: the head's unit filled in, on stdout. */
int cmd_print_head_unit(const struct config *c, const char *unit, const char *cmd);
/* watch's and the exporter's start without a screen: the cluster from the
 * settings and an empty state, Ctrl-C/SIGTERM/SIGHUP caught, SIGPIPE
 * ignored. 0, or 2 after saying why as "dsv41-top CMD: ...". */
struct cluster;
struct state;
int cmd_headless_open(const char *cmd, const struct config *c, struct cluster **cl,
                      struct state *st);
/* ...and their end, after the ops stopped (they start jobs): the jobs a
 * guard or the supervisor started finish first, then the monitor (m may be
 * NULL), the cluster and the state. */
struct monitor;
void cmd_headless_close(struct monitor *m, struct cluster *cl, struct state *st);

/* Each command's documentation (usage.h), beside its parser: main.c's
 * table, --help, the man page and the completions are printed from these. */
extern const struct usage_doc launch_doc, stop_doc, restart_doc, logs_doc, status_doc, smoke_doc,
    bench_doc, gates_doc, guard_doc, verify_doc, download_doc, assemble_doc, copy_doc, pi_doc,
    watch_doc, incidents_doc, doctor_doc, config_doc, key_doc, accept_doc, exporter_doc;

/* Node cn's copy of the checkpoint against the head's manifest, reported as
 * `verify --node` does (copy-to-peer's last step): 0 every file matches, 1
 * not (or interrupted), 2 no manifest or the check could not run. */
struct cluster_node;
int verify_on_node(const struct config *c, struct cluster_node *cn, double progress_s);
/* True once a signal asked verify to stop. */

#endif
