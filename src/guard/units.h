/* units: the memory guard as a systemd service (dsv41-guard.service) on
 * every node, so that a guard runs again after the watchdog's reboot. The
 * unit comes from dist/systemd/dsv41-guard.service (installed into
 * PREFIX/share/dsv41-top/systemd), filled in for each node: the head runs
 * `dsv41-top guard` with the operator's config, a worker the static
 * dsv41-guard that launch pushes into its STATE_DIR/bin, with launch's
 * flags. Both run as the operator (the account launch runs as or reaches
 * over ssh) with the STATE_DIR launch uses, so the lock and heartbeat that
 * launch, status and the console read are the unit's. Installing needs
 * root on the node (or sudo -n); where systemd does not run the node the
 * guard stays what launch starts: `guard --daemon`. */
#ifndef DSV41_UNITS_H
#define DSV41_UNITS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "buf.h"
#include "cluster.h"

#define UNITS_GUARD "dsv41-guard.service"
#define UNITS_WATCH "dsv41-watch.service"
#define UNITS_EXPORTER "dsv41-exporter.service"

/* What systemd says about the guard's unit on a node. */
struct units_state {
    bool known;        /* the node answered the question */
    bool systemd;      /* systemd runs the node (is-system-running is not "offline") */
    char system[24];   /* is-system-running's word ("" : no systemctl) */
    char enabled[24];  /* is-enabled's word: enabled, disabled, not-found, ... */
    char active[24];   /* is-active's word: active, inactive, failed, ... */
    char user[64];     /* the account the question ran as */
};

/* The probe's output ("system=WORD", "enabled=WORD", "active=WORD",
 * "user=NAME" lines; any order, unknown lines ignored) into st. Words are
 * cleaned of control characters and cut to their field. */
void units_parse_state(const char *text, size_t len, struct units_state *st);
/* True when the unit is enabled and active. */
bool units_guard_ok(const struct units_state *st);
/* "enabled, active" or "n/a (no systemd: ...)" for status. */
void units_describe(const struct units_state *st, char *out, size_t sz);
/* Asks the node in one command; -1 when it could not be asked. */
int units_probe(struct cluster_node *cn, struct units_state *st, struct buf *err);
/* The same; on the local node first from files, with no process
 * (units_probe_local, state_dir the node's STATE_DIR or NULL), and the
 * command only where the files do not decide it; cancel (NULL: none) ends
 * the ask early. */
int units_probe_in(struct cluster_node *cn, const char *state_dir, const atomic_int *cancel,
                   struct units_state *st, struct buf *err);

/* The word units_probe_local gives for system= where systemd runs the node:
 * is-system-running's own word (running, degraded, ...) is systemd's to
 * say, and nothing but systemd vs not is read from it. */
#define UNITS_BOOTED "booted"
/* The local node's state from files under root ("" for /; the tests' own
 * tree otherwise): the account from the password database (account_lookup(geteuid())); systemctl on
 * PATH; systemd as sd_booted() decides it (root/run/systemd/system is a
 * directory); enabled from units_file_state; active when the guard holding
 * state_dir's lock lives in the unit's cgroup (root/proc/PID/cgroup), and
 * inactive for a unit with no file. 0 with st filled as units_parse_state
 * fills it; -1 when the files do not decide it (ask systemctl). */
int units_probe_local(const char *root, const char *state_dir, struct units_state *st);
/* is-enabled's word for unit from the unit search path under root:
 * enabled (a link in /etc/systemd/system/T.wants/ or .requires/ for a
 * WantedBy=/RequiredBy= target T), enabled-runtime (the same in /run),
 * disabled, static (no [Install] targets), masked[-runtime] (a link to
 * /dev/null), "" for no unit file (is-enabled prints nothing). -1 where
 * links or generated units this does not follow decide it (Alias=, Also=,
 * a linked unit, generator, transient and control directories). */
int units_file_state(const char *root, const char *unit, char *out, size_t sz);
/* True when a /proc/PID/cgroup text (v1 or v2) places it in unit's cgroup
 * (a path component named unit). */
bool units_cgroup_names(const char *text, const char *unit);

/* A word for a unit file's command line (exec_line) or Environment=:
 * double-quoted, with \ " escaped and % doubled (systemd's specifiers), and
 * on a command line $ doubled too (its variables; systemd.exec(5): in
 * Environment= "$" has no meaning and would stay doubled). -1 for a word
 * with control characters (a unit file is lines). */
int units_quote(struct buf *b, const char *word, bool exec_line);
/* The placeholders @NAME@ of tmpl replaced by vals (pairs {NAME, value});
 * values must be plain (no blank, quote, backslash, '%', '$' or control
 * character: they land in several kinds of unit lines). Then, when
 * exec is not NULL, the ExecStart= line becomes `ExecStart=` + exec's words
 * quoted and the Environment=DSV41_CONFIG= line goes (a worker's static
 * guard takes flags, not a config); extra_env lines follow the
 * Environment=STATE_DIR= line. -1 with err naming what did not fit. */
int units_render(const char *tmpl, const char *const (*vals)[2], int nvals,
                 const struct strv *exec, const struct strv *extra_env, struct buf *out,
                 struct buf *err);
/* Reads the template beside the running binary (installed, or the source
 * tree); -1 and why with the fix. */
int units_template(const char *name, struct buf *out, struct buf *why);

enum units_result { UNITS_RUNNING = 0, UNITS_FAILED = 1, UNITS_NO_SYSTEMD = 2 };
/* Writes, enables and starts dsv41-guard.service on node i (a daemon guard
 * launch started there is stopped first: the unit's guard takes its lock);
 * says what it did on out. */
enum units_result units_install_node(const struct config *c, struct cluster *cl, int i,
                                     const char *state_dir, FILE *out);
/* The same on every configured node; the number of nodes where it failed
 * (a node without systemd is not a failure: it is said, and launch's
 * `guard --daemon` guards it). */
int units_install(const struct config *c, struct cluster *cl, char (*state_dirs)[512], FILE *out);

/* A unit of the head's (UNITS_WATCH, UNITS_EXPORTER) filled in: this
 * binary's directory, this account, the config file and STATE_DIR, and the
 * settings the environment or --set gave (secrets never). 0; -1 with why
 * in err. */
int units_head_text(const struct config *c, const char *unit, struct buf *text, struct buf *err);

#endif
