/* probe: pure parsers that turn what a node prints (/proc files, nvidia-smi
 * CSV) into structs (a container's inspect line is src/container/inspect.h's).
 * No I/O here: collection lives in
 * snapshot.c, so every parser is tested on fixtures. A value that a node does
 * not report is marked invalid ("n/a"), never 0. */
#ifndef DSV41_PROBE_H
#define DSV41_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "buf.h"

/* A measured number, or n/a. */
struct pval {
    bool ok;
    double v;
};

struct probe_mem {
    struct pval total_kib, available_kib, free_kib, cached_kib;
};

#define PROBE_NAME_MAX 96

struct probe_gpu {
    int index;
    char name[PROBE_NAME_MAX];
    char uuid[PROBE_NAME_MAX];
    struct pval util_pct, temp_c, power_w, power_limit_w;
    struct pval mem_total_mib, mem_used_mib, mem_free_mib, sm_clock_mhz;
};

struct probe_gpu_proc {
    char gpu_uuid[PROBE_NAME_MAX];
    int pid;
    char name[PROBE_NAME_MAX];
    struct pval used_mib;
};


/* The --query-gpu field list the parsers expect, in this order. */
#define PROBE_GPU_QUERY                                                                            \
    "index,name,uuid,utilization.gpu,temperature.gpu,power.draw,power.limit,memory.total,"         \
    "memory.used,memory.free,clocks.sm"
#define PROBE_APPS_QUERY "gpu_uuid,pid,process_name,used_memory"

/* Returns 0 when MemTotal and MemAvailable were found, -1 otherwise (fields
 * that were found are still filled in). */
int probe_parse_meminfo(const char *text, struct probe_mem *out);
/* oom_kill from /proc/vmstat; -1 when absent (older kernels). */
int probe_parse_vmstat_oom(const char *text, struct pval *oom_kill);
/* Parses one number from nvidia-smi CSV; "[N/A]", "[Not Supported]", "N/A",
 * empty and garbage give n/a. Units after the number ("35 %", "123 W") are
 * accepted so that the with-units format parses too. */
struct pval probe_parse_smi_number(const char *field);
/* Returns the number of GPUs parsed (at most max), -1 on a malformed line. */
int probe_parse_gpu_csv(const char *text, struct probe_gpu *gpus, int max);
int probe_parse_compute_apps(const char *text, struct probe_gpu_proc *procs, int max);

/* Splits text into lines; calls fn for each (without the newline). Stops
 * when fn returns non-zero and returns that value. */
int probe_for_each_line(const char *text, int (*fn)(const char *line, size_t len, void *ctx),
                        void *ctx);

#endif
