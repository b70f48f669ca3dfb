/* state: the shared model the console draws. Collectors (monitor, jobs, log
 * streams) write into it under one mutex and call state_changed(), which
 * bumps the version and writes a byte to the wake pipe; the UI thread polls
 * that pipe and redraws from the state while holding the mutex. Nothing in
 * here draws or knows about curses. */
#ifndef DSV41_STATE_H
#define DSV41_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cluster.h"
#include "logbuf.h"
#include "liveness.h"
#include "metrics.h"
#include "status.h"

#define STATE_HIST 240     /* samples of history per node */
#define STATE_JOBS 12      /* jobs kept, newest first */
#define STATE_LOG_LINES 20000
#define STATE_LOG_BYTES (6u << 20)

enum guard_view { GUARD_VIEW_UNKNOWN, GUARD_VIEW_OK, GUARD_VIEW_FIRED, GUARD_VIEW_STALE,
                  GUARD_VIEW_NONE, GUARD_VIEW_WARN };

struct state_port {
    struct pval rx_bps, tx_bps; /* from the counters between two samples */
    double errors;              /* sum of the error counters; -1 n/a */
    time_t errors_rose;         /* last time they went up; 0 never */
};

/* One sample of a node, kept for the last STATE_RECENT samples: what an
 * incident directory shows of the minute before. */
#define STATE_RECENT 120
struct state_sample {
    time_t t;
    bool reachable;
    struct pval avail_kib, free_kib, cached_kib, psi_full, frag_blocks;
    struct pval gpu_util, gpu_temp, gpu_power;
};

struct state_node {
    char name[32];
    bool configured;
    bool have;          /* at least one snapshot */
    struct snapshot snap;
    time_t down_since;
    double sampled_at;  /* monotonic seconds */
    float hist_avail_gib[STATE_HIST];
    unsigned nhist_avail; /* samples ever pushed; the ring holds the last STATE_HIST */
    struct state_port ports[RDMA_MAX_PORTS];
    enum guard_view guard;
    double guard_read_at; /* monotonic s the guard's last answer was asked; 0: none yet */
    bool guard_here;    /* the console's own thread guards this node */
    char guard_desc[360];
    char guard_event[200];
    char phase[48];     /* the rank's startup phase, from its log */
    char fabric_drift[300]; /* how the fabric moved under the running rank; "" when not */
    struct state_sample recent[STATE_RECENT]; /* a ring: nrecent samples ever pushed */
    unsigned nrecent;
};

struct state_rank {
    int rank;
    char node[32];
    struct logbuf log;
    bool attached;
    char started[64];   /* StartedAt of the container the stream follows */
};

enum job_status { JOB_RUNNING, JOB_OK, JOB_FAILED, JOB_CANCELLED };

struct state_job {
    unsigned id;
    char name[24];
    enum job_status status;
    int exit_code;
    pid_t pid;
    time_t started, ended;
    char last[240];     /* the newest line it printed: its progress */
    struct logbuf out;
};

struct state_server {
    bool have;
    struct api_health api;
    bool metrics_ok;
    struct metrics m;
    bool rates_ok;
    struct metrics_rates rates;
    char wedged[320];
    struct liveness live; /* the liveness probe (liveview) */
    char phase[48];
    int nproblems, nwarnings;
    char problems[8][320], warnings[8][320];
};

/* A file of the download, or a shard assemble is rebuilding. */
struct state_dl_file {
    char path[160];
    int64_t size, done;
    int parts;     /* a split shard written in place from this many parts; 0 plain */
    bool hashing;  /* every byte landed, the hash not yet confirmed */
};

#define STATE_DL_FILES 8

/* The download into MODEL_DIR, from its state file (dlview). */
struct state_download {
    bool shown;           /* running, unfinished, or a shard being assembled */
    bool have;            /* a state file was read */
    long pid;             /* the process holding the download's lock; 0 none */
    char dir[512];
    char repo[256], commit[41];
    char error[300];      /* the state file could not be read: why */
    int64_t total, done;  /* bytes of the outputs: landed (verified files whole) */
    int files, verified;
    struct pval rate;     /* bytes/s over the last few polls; n/a until two */
    float hist_rate[STATE_HIST]; /* MB/s per poll, NAN when not running */
    unsigned nhist_rate;
    int ninflight;
    struct state_dl_file inflight[STATE_DL_FILES]; /* started, not verified */
    int nverified_last;
    char verified_last[4][160]; /* verified while the console watched, newest first */
    int nrebuild;
    struct state_dl_file rebuild[4]; /* assemble's journals: done = bytes written */
    int in_parts;                    /* shards still in .partNN pieces, no journal */
};

/* Something an operator is told of headless (events.h): alerts, the
 * supervisor and the exporter read these by sequence number. */
#define STATE_EVENTS 64
struct state_event {
    uint64_t seq;
    time_t t;
    double at;          /* monotonic seconds when it was pushed (or last updated) */
    char kind[24];      /* events.h: EVENT_KINDS */
    char node[32];      /* "" when it is the deployment's */
    char what[480];     /* one line, cleaned */
    char incident[800]; /* its incident directory; "" none */
};

struct state {
    pthread_mutex_t mu;
    uint64_t version;
    int wake[2]; /* [0] polled by the UI */
    int wake_pending;
    int nnodes;
    struct state_node nodes[CLUSTER_MAX_NODES];
    int nranks;
    struct state_rank ranks[CLUSTER_MAX_NODES];
    struct state_server server;
    struct state_download download;
    struct state_job jobs[STATE_JOBS]; /* jobs[0] newest */
    int njobs;
    unsigned next_job_id;
    unsigned jobs_ended; /* bumped when a job ends: the monitor looks at the containers */
    struct logbuf messages;
    struct state_event events[STATE_EVENTS]; /* a ring: events_end pushed ever */
    uint64_t events_end;
    /* monotonic s up to which a symptom's cause is known: every node's
     * guard asked since, and the incidents told (incident_causes_seen) */
    double causes_at;
    char status_line[256];
    time_t status_at;
};

int state_init(struct state *s);
void state_free(struct state *s);
void state_lock(struct state *s);
void state_unlock(struct state *s);
/* After a change (with the lock held or not): bump the version, wake the UI. */
void state_changed(struct state *s);
/* Reads and discards the wake bytes (UI thread). */
void state_drain_wake(struct state *s);
/* A message for the status line and the message log (takes the lock). */
void state_say(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A node's history value i samples back (0 = newest); NAN when none. */
float state_hist(const float *ring, unsigned nhist, unsigned back);
void state_hist_push(float *ring, unsigned *nhist, float v);
struct state_rank *state_rank_find(struct state *s, int rank);

#endif
