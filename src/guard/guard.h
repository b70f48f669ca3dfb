/* guard: the memory guard. A GB10 node shares one memory pool between CPU
 * and GPU and wedges when MemAvailable reaches zero, so below the floor the
 * guard SIGKILLs its node's ranks through pidfds opened when they were
 * resolved, then asks the runtime to clean up. It reads /proc/meminfo from a
 * descriptor kept open, samples adaptively (earlyoom: sleep = headroom /
 * fill rate, 10-1000 ms), holds its memory (mlockall) and neither
 * allocates nor forks between reading the crossing and the kills. Below a
 * trace threshold it logs the biggest processes every 10 s. Only libc: the
 * same code runs in dsv41-top and in the static dsv41-guard pushed to
 * workers. */
#ifndef DSV41_GUARD_H
#define DSV41_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "memsig.h"

#define GUARD_MAX_RANKS 8
#define GUARD_MAX_GIB 1000000 /* a floor above every node's memory fires at once (tests) */

struct guard_opts {
    char proc_root[256];
    char state_dir[512];
    char runtime[32]; /* "" : resolve no PIDs through a runtime (tests) */
    /* the runtime's API socket for the PIDs ("" : where the runtime keeps
     * it; "none": the CLI only); the CLI where it does not answer */
    char socket[256];
    int nranks;       /* containers dsv41-r0 .. dsv41-r<nranks-1> */
    long floor_kib;
    long warn_kib;    /* MemAvailable below this: a warning */
    int psi_warn;     /* PSI memory full avg10, percent: a warning at or above; 0 off */
    int psi_kill;     /* ... the kill, like the floor; 0 off */
    long frag_warn;   /* fewer free blocks of order >= 10 than this: a warning; 0 off */
    int kmsg_warn;    /* this many NVRM lines within 10 minutes: a warning; 0 off */
    char kmsg_path[256]; /* the kernel log ("" : /dev/kmsg; tests give a file) */
    char cg_root[256];   /* where cgroup2 is mounted ("" : from mountinfo; tests give a dir) */
    long trace_kib;
    long rearm_kib;   /* fired again only after MemAvailable rose this far above the floor */
    int resolve_s;    /* how often rank PIDs are resolved again */
    pid_t pids[GUARD_MAX_RANKS]; /* given PIDs, guarded when no runtime resolves them */
    int npids;
    /* a thread of the console, not a process of its own: the lock says so
     * (`guard --stop` then asks it to hand over with SIGUSR2 instead of
     * SIGTERMing the console) and only current pages are locked */
    bool embedded;
    /* run by systemd (dsv41-guard.service): the lock says so, and `guard
     * --stop` (launch, stop) leaves it to systemctl */
    bool systemd;
};

/* What the guard knows beyond MemAvailable (guardsig.c); -1 fds and
 * "_ok" false where the kernel lacks the file. */
#define GUARD_KMSG_RING 32
enum guard_warn { GUARD_WARN_MEM = 1, GUARD_WARN_PSI = 2, GUARD_WARN_FRAG = 4, GUARD_WARN_KMSG = 8 };

struct guard_sig {
    int psi_fd, buddy_fd, kmsg_fd;
    struct memsig_psi psi; /* full_ok false: n/a */
    long frag;             /* free blocks of 4 MiB or more; -1 n/a */
    int buddy_order;       /* the order of 4 MiB with this machine's pages */
    unsigned long kmsg_lines;
    unsigned long long kmsg_seq; /* the last record read: none is read twice */
    bool kmsg_any;
    double kmsg_times[GUARD_KMSG_RING]; /* when the last NVRM lines came (a ring) */
    unsigned kmsg_next;
    unsigned warn; /* enum guard_warn bits now set */
    double last_slow_s;
};

struct guard_res;
struct guard_out;

struct guard {
    struct guard_opts o;
    int meminfo_fd, log_fd, hb_fd, lock_fd;
    pid_t pids[GUARD_MAX_RANKS];
    int pidfds[GUARD_MAX_RANKS];
    int cgkill_fds[GUARD_MAX_RANKS]; /* each rank's cgroup.kill, -1 none (guardcg.c) */
    int npids;
    bool armed;     /* the floor's kill */
    bool psi_armed; /* PSI's kill */
    bool psi_idle_said; /* "at the kill level but no rank" logged, until the pressure falls */
    long last_avail_kib;
    struct guard_sig sig;
    struct guard_res *res; /* the resolver thread (guardres.c); NULL when none runs */
    struct guard_out *out; /* the writer of its log and heartbeat (guardout.c); NULL: inline */
    double last_sample_s, last_trace_s, last_resolve_s;
    unsigned long kills, events;
    char lastevent[160];
};

/* The defaults (docs/guard.md says why each). */
void guard_opts_defaults(struct guard_opts *o);
/* GiB as a positive number up to GUARD_MAX_GIB, in KiB; -1 for anything
 * else (nan, inf, "1 --daemon", ...). */
int guard_parse_gib(const char *s, long *kib);
/* The runtimes the guard may start: docker or podman, by name. */
bool guard_runtime_ok(const char *rt);
/* Opens everything the loop needs and takes the node's guard lock; -1 with a
 * message (another guard holds the lock: errno EWOULDBLOCK). */
int guard_open(struct guard *g, const struct guard_opts *o, char *err, size_t errsz);
/* A rank's container cgroup's cgroup.kill, opened for writing; -1 with why
 * when there is none to use (guardcg.c). */
int guard_cgroup_open(const struct guard *g, pid_t pid, int pidfd, char *why, size_t whysz);
/* SIGKILLs the cgroup's every process; false when the write failed. */
bool guard_cgroup_kill(int fd);
/* After the kill (guarddie.c): rank i's threads at nice -20, their number;
 * -1 when it had exited before any could be; *refused counts threads the
 * kernel would not renice. Then the killed ranks' (sent[i]) memory unmapped
 * by process_mrelease, what was done said in said. */
int guard_boost_dying(struct guard *g, int i, int *refused);
void guard_reap_dying(struct guard *g, const bool *sent, char *said, size_t saidsz);
/* Clears the ambient capability set: dsv41-guard.service gives the guard
 * CAP_KILL, CAP_DAC_OVERRIDE, ... as ambient capabilities, which would pass
 * to every program it starts (the runtime CLI) - the guard keeps them, its
 * children get none. 0; -1 when the kernel refuses. */
int guard_drop_ambient(void);
/* A rank as the runtime reports it: its main process and its container's id
 * ("" when not known). */
struct guard_rank {
    pid_t pid;
    char id[72];
};
/* The ranks to protect the node from; opens pidfds. A rank with an id is
 * taken only when its PID's cgroup names that container (the engine's word
 * on a PID is not trusted alone: the number may be another's by now); one
 * that fails is logged and never signalled. */
void guard_set_ranks(struct guard *g, const struct guard_rank *ranks, int n);
/* PIDs given by the operator (--pid), taken as given. */
void guard_set_pids(struct guard *g, const pid_t *pids, int n);
/* Resolves the ranks' PIDs through the runtime CLI (forks: not on the kill
 * path). Returns the number found. */
int guard_resolve(struct guard *g);
/* One sample at time now: kills below the floor. Returns ms until the next. */
int guard_tick(struct guard *g, double now_s);
/* Loops until *stop; resolves PIDs when none is known (every resolve_s), when
 * a rank exits, once a minute, and at once when *resolve_now is set. */
void guard_run(struct guard *g, atomic_int *stop, atomic_int *resolve_now);
void guard_close(struct guard *g);
/* Parses MemAvailable (kB) from meminfo text without allocating; -1 if absent. */
long guard_parse_available(const char *text, size_t len);
/* STATE_DIR/guard.<hostname>.<kind>: one lock and heartbeat per node, also
 * when STATE_DIR is a home directory shared between nodes. */
void guard_file(const char *state_dir, const char *kind, char *out, size_t sz);
/* The ranks' PIDs through `RUNTIME container inspect` (forks and waits up
 * to 10 s; changes nothing in g): their number, or -1 when the CLI did not
 * answer. Safe from the resolver's thread. */
int guard_inspect(struct guard *g, struct guard_rank *ranks, char *out, size_t outsz);
/* The runtime with the words of verb, then "--" and the rank names; no
 * shell. Its stdout in out; its exit status, or -1. */
int guard_runtime_run(struct guard *g, const char *const *verb, char *out, size_t outsz,
                      int timeout_ms);
/* guardres.c: the runtime CLI in a thread of its own (guard_run starts and
 * stops it). inspect: asks for the PIDs when the thread is idle (false when
 * it is busy or absent); kill: asks for `RUNTIME kill` of the ranks (false
 * when no thread runs), once the n pidfds in dying (the ranks the guard
 * killed) have turned readable or GUARD_KILL_WAIT_MS passed (n 0: at
 * once); take: applies a finished inspect
 * and logs what the thread said. */
#define GUARD_KILL_WAIT_MS 250
int guard_resolver_start(struct guard *g);
bool guard_resolver_inspect(struct guard *g);
bool guard_resolver_kill(struct guard *g, const int *dying, int n);
void guard_resolver_take(struct guard *g);
void guard_resolver_stop(struct guard *g);
/* guardsig.c: opens the signals' files (each logged as n/a when missing). */
void guardsig_open(struct guard *g);
/* PSI, read every sample; true when it reached the kill level. */
bool guardsig_read_psi(struct guard *g);
/* buddyinfo (once a second) and the kernel log (every sample: a read that
 * finds nothing costs a syscall), then the warnings, logged as they set and
 * clear. */
void guardsig_read_rest(struct guard *g, double now_s, long avail_kib);
/* " psi=F frag=N kmsg=N warn=LIST" for the heartbeat (n/a, "-" for none). */
void guardsig_format(const struct guard *g, char *out, size_t sz);
void guardsig_close(struct guard *g);
/* A line in STATE_DIR/memguard.log. */
void guard_log(struct guard *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
