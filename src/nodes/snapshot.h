/* snapshot: one picture of a node (memory, GPU, RDMA, containers), collected
 * by one shell script whose output is framed into sections, so a remote node
 * costs one channel and needs nothing installed. The framing marker carries a
 * random nonce: text inside a file cannot forge a section. */
#ifndef DSV41_SNAPSHOT_H
#define DSV41_SNAPSHOT_H

#include <stdbool.h>

#include "node.h"
#include "inspect.h"
#include "probe.h"
#include "rdma.h"

#define SNAP_MAX_GPUS 8
#define SNAP_MAX_PROCS 32
#define SNAP_MAX_ADDRS 32
#define SNAP_MAX_CONTAINERS 16

struct snapshot {
    bool reachable;
    char error[1024]; /* why not reachable */
    int late_s; /* > 0: the node's last snapshot, this old: no fresh one came in time */
    /* not reachable, and no verdict either: a display's request found the
     * node's first snapshot not yet come (the session still connecting or
     * starting its sampler). Its caller shows nothing yet: "unreachable"
     * here would be a false alarm on a slow machine. */
    bool pending;
    char hostname[64];
    bool mem_ok;
    struct probe_mem mem;
    struct pval oom_kill;
    struct pval psi_full;    /* PSI memory full avg10, percent */
    struct pval psi_some;    /* PSI memory some avg10, percent */
    struct pval frag_blocks; /* free blocks of 4 MiB or more (buddyinfo order >= 10) */
    int ngpu;
    struct probe_gpu gpu[SNAP_MAX_GPUS];
    char gpu_note[160]; /* why there is no GPU data */
    int nprocs;
    struct probe_gpu_proc procs[SNAP_MAX_PROCS];
    int nports;
    struct rdma_port ports[RDMA_MAX_PORTS];
    int naddrs;
    struct rdma_ifaddr addrs[SNAP_MAX_ADDRS];
    struct rdma_fabric fabric;
    bool ct_sampled; /* the containers were asked (not in a lite sample) */
    bool runtime_ok;
    int ct_missing; /* rank names the runtime does not know */
    char runtime_note[256];
    char engine_note[400]; /* remote: why the engine's socket is not used, when it is worth saying */
    int ncont;
    struct container_info cont[SNAP_MAX_CONTAINERS];
};

/* The sampling script: once (full or lite: without the containers), or in a
 * loop printing one snapshot per line read from stdin ("lite" or not). The
 * containers looked up are dsv41-r0 .. dsv41-r<nranks-1>. */
enum snapshot_mode { SNAPSHOT_FULL, SNAPSHOT_LITE, SNAPSHOT_LOOP };

int snapshot_cmd(struct shcmd *c, const char *marker, const char *proc_root,
                 const char *sys_root, const char *runtime, int nranks, enum snapshot_mode mode);
/* Pure: parses the script's output. */
int snapshot_parse(const char *text, const char *marker, const struct rdma_override *ov,
                   struct snapshot *s);
/* The ct and ct_rc sections' reading: the lines the runtime's inspect
 * printed (or the engine's answers written as those lines) and its exit
 * status into s's containers, as a full frame would set them. */
void snapshot_apply_ct(struct snapshot *s, const char *ct, int code);
/* Runs the script on the node and parses it. Always fills s; returns -1 when
 * the node could not be reached (s->error says why). */
int snapshot_collect(struct node *n, const char *runtime, int nranks,
                     const struct rdma_override *ov, int timeout_ms, struct snapshot *s);
/* lite: without the containers (the runtime CLI is the dearest part of a
 * sample; a watcher asks for them less often). The script reads $W. The
 * local node is read directly (snapshot_local_text). */
int snapshot_collect_opt(struct node *n, const char *runtime, int nranks,
                         const struct rdma_override *ov, int timeout_ms, bool lite,
                         struct snapshot *s);
/* Always through the script and node_run (also for the local node). */
int snapshot_collect_script(struct node *n, const char *runtime, int nranks,
                            const struct rdma_override *ov, int timeout_ms, bool lite,
                            struct snapshot *s);
/* The text the script would print, from the local node's files directly
 * (snapshot_local.c); only nvidia-smi and the runtime CLI are run. */
int snapshot_local_text(const struct node *n, const char *runtime, int nranks, bool lite,
                        const char *marker, struct buf *out);
/* The container dsv41-r<rank> in the snapshot, or NULL. */
const struct container_info *snapshot_rank_container(const struct snapshot *s, int rank);
/* A fresh random marker. */
int snapshot_marker(char *out, size_t outsz);

#endif
