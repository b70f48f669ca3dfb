/* sshio_int: what the I/O thread (sshio.c) and the callers' side
 * (sshio_calls.c: the work queued, waited for, its results taken) share
 * inside src/ssh. Not for other folders: sshio.h is the interface. */
#ifndef DSV41_SSHIO_INT_H
#define DSV41_SSHIO_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "buf.h"
#include "ssh.h"
#include "sshio.h"

#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define LINE_MAX_BYTES (1u << 20)
/* what a socket's stream reads in one pass, before its owner is handed it */
#define RAW_PASS_MAX (256u << 10)

enum work_kind { W_RUN, W_STREAM, W_PUT, W_UNIX };

struct work {
    struct work *next;
    enum work_kind kind;
    struct ssh_chan *ch; /* NULL until the session is up */
    struct ssh_put *put; /* W_PUT: the upload in flight */
    const char *put_data;
    size_t put_len;
    int put_mode;
    char *cmd;
    /* W_RUN */
    struct ssh_result *res;
    struct buf *err;
    size_t max;
    long long deadline;
    bool done;
    bool force; /* connect now, whatever the backoff */
    bool abandoned; /* its caller was interrupted: finish it at the next pass */
    int rc;
    /* W_UNIX: the exchange (its request inside), the answer and why not;
     * started: stepped on a session; opened: past the channel's open (a
     * deadline then means a silent engine, not a silent sshd); orphan: its
     * caller is gone, the thread frees it once done and its open is seen
     * through (done with ux still set: a zombie, see ssh_unix_open_pending) */
    struct ssh_unix *ux;
    struct buf ux_out, ux_err;
    bool ux_started, ux_opened, orphan;
    /* W_STREAM; raw: a unix socket's stream (cmd the socket, ux_req the
     * request, ux the channel), its bytes handed on as they come (on_bytes),
     * sent again only after a broken session; had_enough: on_bytes wants
     * no more (the stream ends at the next pass) */
    bool raw, had_enough;
    struct buf ux_req;
    sshio_bytes_fn on_bytes;
    sshio_line_fn on_line;
    sshio_event_fn on_event;
    void *ctx;
    struct buf out, errbuf, pending_in;
    bool closing;
    bool running; /* its command is up on the current session */
    bool restart; /* run the command again when it ends */
    bool ended;   /* ended and not to be restarted */
    /* Callbacks run after the lock is let go (deliver): what the steps
     * found waits here, in order up, lines, end, down. These and out are the
     * I/O thread's alone. */
    bool pend_up, pend_end, pend_drop, pend_down;
};

struct sshio {
    char name[64];
    struct ssh_target t;
    char known_hosts[512];
    int timeout_ms;

    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wake[2];
    bool stop;
    struct work *works; /* guarded by mu; channels inside are the thread's */

    struct ssh_conn *conn; /* the thread's alone */
    bool connected;        /* guarded by mu */
    long long connected_at; /* guarded by mu */
    time_t down_since;     /* guarded by mu */
    char last_error[1024]; /* guarded by mu */
    struct work *opener;   /* the work in its opening step; the thread's */
    bool again;            /* a held stream has more waiting; the thread's */
    bool slot_wanted;      /* a work waited for the opening slot this pass; the thread's */
    int backoff_ms;        /* guarded by mu */
    /* liveness, the thread's: since when the session has had work, and a
     * ping in flight (see check_alive) */
    long long active_since;
    bool pinging;
    long long ping_since; /* when the ping was wanted */
    long long next_try_ms; /* guarded by mu; written by the thread only */
};

/* Wakes the I/O thread (its pipe): new work, a cancel, a stop. */
void sshio_wake(struct sshio *io);
/* A unix exchange's work freed (its buffers and itself). */
void sshio_free_unix(struct work *w);

#endif
