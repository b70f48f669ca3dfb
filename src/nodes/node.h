/* node: a machine of the deployment, local or reached over ssh. Everything
 * above this talks to nodes only through node_run, so local and remote nodes
 * behave alike. A remote node keeps one ssh session, reconnects with backoff
 * and remembers since when it has been unreachable. Commands are shcmds: a
 * fixed script and its values, run by /bin/sh on either side whatever the
 * remote account's login shell is. */
#ifndef DSV41_NODE_H
#define DSV41_NODE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "shcmd.h"
#include "ssh.h"
#include "sshio.h"
#include "sshconf.h"

struct node {
    char name[32]; /* "head", "worker" */
    bool local;
    char target[256];
    struct ssh_target t;
    char known_hosts[512];
    int timeout_ms;
    char proc_root[256], sys_root[256];
    /* local: the runtime's API socket, asked instead of its CLI where it
     * answers ("": the CLI only) */
    char engine_sock[256];
    /* remote: the runtime's API socket on the node, asked through the ssh
     * session (direct-streamlocal) instead of the CLI ("": none known);
     * worker_sock_find: to be found on the node (WORKER_RUNTIME_SOCKET
     * empty; still so after a search found none: it is searched again
     * NODE_SOCK_AGAIN_MS after worker_sock_none_at, for a podman.socket
     * started later). After init, read and written under mu
     * (node_engine_sock). */
    char worker_sock[256];
    bool worker_sock_find;
    long long worker_sock_none_at; /* mono ms of a search that found none; 0: none */

    pthread_mutex_t mu; /* guards io's creation, home and the found socket */
    struct sshio *io;   /* remote: the I/O thread, started on first use */
    char home[512];     /* the account's home, once asked ("" until then) */
};

void node_init_local(struct node *n, const char *name, const char *proc_root,
                     const char *sys_root);
int node_init_remote(struct node *n, const char *name, const char *target, const char *ssh_config,
                     const char *known_hosts, int timeout_ms, const char *proc_root,
                     const char *sys_root, struct buf *err);
/* Runs a command on the node. 0 when it ran (see res->exit_status; 128+N
 * when a signal N ended it), -1 when the node could not be reached (err says
 * why and what to do). */
int node_run(struct node *n, const struct shcmd *cmd, int timeout_ms, struct ssh_result *res,
             struct buf *err);
/* node_run that gives up (-1, "interrupted") soon after *cancel turns
 * nonzero: a local command is killed; a remote one's channel is closed,
 * and the remote command ends at its next write. */
int node_run_cancel(struct node *n, const struct shcmd *cmd, int timeout_ms,
                    const atomic_int *cancel, struct ssh_result *res, struct buf *err);
/* node_run for a batch job's step: while the node cannot be reached (a link
 * cut for a while drops its session: see sshio's liveness) it is tried
 * again every second for up to patience_ms, or until an interrupt. */
int node_run_patient(struct node *n, const struct shcmd *cmd, int timeout_ms, int patience_ms,
                     struct ssh_result *res, struct buf *err);
/* Writes a file on the node (sftp for a remote node; a temporary file and
 * rename locally), created with mode or set to it. The directory must exist.
 * -1 with a reason that names the node and the path. */
int node_put(struct node *n, const char *path, const char *data, size_t len, int mode,
             struct buf *err);
/* A long-running command on the node whose output (stdout and stderr)
 * comes back line by line: remotely a channel of the node's session, locally
 * a thread reading a child process. The callbacks run on that thread. */
struct node_stream;

struct node_stream *node_stream_open(struct node *n, const struct shcmd *cmd,
                                     sshio_line_fn on_line, sshio_event_fn on_event, void *ctx);
/* Stops the command and frees the stream; no callback runs after it. */
void node_stream_close(struct node *n, struct node_stream *s);

/* The home directory of the account the node runs commands as ($HOME as
 * its sshd sets it: the ssh config's User, not this process's user), asked
 * once and kept for the node's life. -1 with a reason naming the node and
 * the way out when it cannot be asked or is not an absolute path. */
int node_home(struct node *n, char *out, size_t sz, struct buf *err);
/* path on the node, a leading "~/" being the node's home (node_home);
 * other paths as they are, without asking the node. */
int node_expand_path(struct node *n, const char *path, char *out, size_t sz, struct buf *err);

/* One request/answer exchange with a unix socket on a remote node (the
 * engine's API socket) through its ssh session: see sshio_unix for the
 * codes (0, -1 the session, SSHIO_UNIX_REFUSED, SSHIO_UNIX_SILENT), and
 * ENGINE_CANCELLED when cancel_fd (-1: none) turns readable first (the
 * request, once sent, goes on at the far end). node_engine.c. */
int node_unix_exchange(struct node *n, const char *sock, const char *req, size_t len, size_t max,
                       int timeout_ms, int cancel_fd, struct buf *out, struct buf *err);
/* node_unix_exchange as an engine_exchange_fn (engine_at.h): ctx is
 * the node; a refused or silent socket is ENGINE_NO_ANSWER. */
int node_engine_exchange(void *ctx, const char *sock, const char *req, size_t len, size_t max,
                         long timeout_ms, int cancel_fd, struct buf *out, struct buf *err);
/* A search for a worker's socket that found none is trusted this long. */
#define NODE_SOCK_AGAIN_MS 60000
/* A remote node's engine socket: the setting's path, or (setting empty)
 * found on the node by the engine_socket rules, once, and kept (none found:
 * looked for again after NODE_SOCK_AGAIN_MS). 1 with the
 * path in out, 0 when there is none (the CLI), -1 when the node could not
 * be asked (ask again later). The local node: 0 (its engine_sock is it). */
int node_engine_sock(struct node *n, const char *runtime, const atomic_int *cancel, char *out,
                     size_t sz);

/* The node's I/O thread (remote nodes only; started on first use). */
struct sshio *node_io(struct node *n);
/* Reachability, for display: false with since when and why. */
bool node_reachable(struct node *n, time_t *down_since, char *why, size_t whysz);
void node_free(struct node *n);

/* Runs cmd locally with a deadline (the local half of node_run, also used by
 * tests). */
int node_run_local(const struct shcmd *cmd, int timeout_ms, size_t max_bytes,
                   struct ssh_result *res, struct buf *err);
int node_run_local_cancel(const struct shcmd *cmd, int timeout_ms, size_t max_bytes,
                          const atomic_int *cancel, struct ssh_result *res, struct buf *err);

#endif
