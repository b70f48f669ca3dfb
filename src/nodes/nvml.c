/* NVML through dlopen: the few calls the GPU pane needs, each looked up by
 * name, the newer versions first (a symbol an older driver lacks is simply
 * not used). The declarations below are the library's documented ABI. */
#include "nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;
typedef struct nvml_dev *nvml_dev;

enum {
    NVML_OK = 0,
    NVML_INSUFFICIENT_SIZE = 7,
    NVML_TEMP_GPU = 0,
    NVML_CLOCK_SM = 1,
    NVML_NAME_LEN = 96,
    NVML_MAX_PROCS = 64, /* room asked for first */
};
#define NVML_NO_VALUE 0xFFFFFFFFFFFFFFFFull /* usedGpuMemory not known */

struct nvml_util {
    unsigned gpu, memory;
};
struct nvml_mem1 {
    unsigned long long total, free, used;
};
/* v2 leaves the driver's reserved memory out of used, as nvidia-smi does
 * (v1 counted it: 9817 vs nvidia-smi's 9203 MiB on the H200) */
struct nvml_mem2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
struct nvml_proc1 {
    unsigned pid;
    unsigned long long used;
};
struct nvml_proc2 { /* _v2 and _v3 */
    unsigned pid;
    unsigned long long used;
    unsigned gpu_instance, compute_instance;
};

static struct {
    pthread_once_t once;
    int rc;
    char why[256];
    const char *(*error)(nvml_ret);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*handle)(unsigned, nvml_dev *);
    nvml_ret (*name)(nvml_dev, char *, unsigned);
    nvml_ret (*uuid)(nvml_dev, char *, unsigned);
    nvml_ret (*util)(nvml_dev, struct nvml_util *);
    nvml_ret (*temp)(nvml_dev, int, unsigned *);
    nvml_ret (*power)(nvml_dev, unsigned *);
    nvml_ret (*limit)(nvml_dev, unsigned *);
    nvml_ret (*mem1)(nvml_dev, struct nvml_mem1 *);
    nvml_ret (*mem2)(nvml_dev, struct nvml_mem2 *);
    nvml_ret (*clock)(nvml_dev, int, unsigned *);
    nvml_ret (*procs1)(nvml_dev, unsigned *, struct nvml_proc1 *);
    nvml_ret (*procs2)(nvml_dev, unsigned *, struct nvml_proc2 *);
    nvml_ret (*driver)(char *, unsigned);
} L = {.once = PTHREAD_ONCE_INIT, .rc = -1};

/* The first of the names the library has. */
static void *sym(void *h, const char *a, const char *b)
{
    void *p = dlsym(h, a);
    return p || !b ? p : dlsym(h, b);
}

static const char *err_name(nvml_ret r)
{
    const char *s = L.error ? L.error(r) : NULL;
    return s ? s : "unknown error";
}

static void load(void)
{
    const char *path = getenv("DSV41_NVML_LIB");
    if (!path || !*path)
        path = NVML_SONAME;
    /* RTLD_LOCAL: its symbols stay out of ours; never closed: the driver's
     * threads may outlive a dlclose */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(L.why, sizeof L.why, "%s", e ? e : path);
        return;
    }
    nvml_ret (*init)(void) = (nvml_ret (*)(void))sym(h, "nvmlInit_v2", "nvmlInit");
    *(void **)&L.error = dlsym(h, "nvmlErrorString");
    *(void **)&L.count = sym(h, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    *(void **)&L.handle = sym(h, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    *(void **)&L.name = dlsym(h, "nvmlDeviceGetName");
    *(void **)&L.uuid = dlsym(h, "nvmlDeviceGetUUID");
    *(void **)&L.util = dlsym(h, "nvmlDeviceGetUtilizationRates");
    *(void **)&L.temp = dlsym(h, "nvmlDeviceGetTemperature");
    *(void **)&L.power = dlsym(h, "nvmlDeviceGetPowerUsage");
    *(void **)&L.limit = dlsym(h, "nvmlDeviceGetPowerManagementLimit");
    *(void **)&L.mem1 = dlsym(h, "nvmlDeviceGetMemoryInfo");
    *(void **)&L.mem2 = dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
    *(void **)&L.clock = dlsym(h, "nvmlDeviceGetClockInfo");
    *(void **)&L.procs1 = dlsym(h, "nvmlDeviceGetComputeRunningProcesses");
    *(void **)&L.procs2 = sym(h, "nvmlDeviceGetComputeRunningProcesses_v3",
                              "nvmlDeviceGetComputeRunningProcesses_v2");
    *(void **)&L.driver = dlsym(h, "nvmlSystemGetDriverVersion");
    if (!init || !L.count || !L.handle) {
        snprintf(L.why, sizeof L.why, "%s: not the NVIDIA management library (no nvmlInit)",
                 path);
        return;
    }
    nvml_ret r = init();
    if (r != NVML_OK) {
        snprintf(L.why, sizeof L.why, "nvmlInit: %s", err_name(r));
        return;
    }
    L.rc = 0;
}

int nvml_open(struct buf *why)
{
    pthread_once(&L.once, load);
    if (L.rc < 0 && why)
        buf_puts(why, L.why);
    return L.rc;
}

/* A field as nvidia-smi writes it: the number, or [N/A] when the call
 * failed (NOT_SUPPORTED on GB10's memory, a call the driver lacks). */
static void field_u(struct buf *out, bool ok, unsigned long long v)
{
    if (ok)
        buf_printf(out, ", %llu", v);
    else
        buf_puts(out, ", [N/A]");
}

static void field_w(struct buf *out, bool ok, unsigned mw)
{
    if (ok)
        buf_printf(out, ", %.2f", mw / 1000.0);
    else
        buf_puts(out, ", [N/A]");
}

/* Bytes in MiB, to the nearest as nvidia-smi rounds (8718.6 MiB used
 * reads 8719 there) */
static unsigned long long mib(unsigned long long bytes)
{
    return (bytes + (1ull << 19)) >> 20;
}

/* Text from the library or the kernel goes into comma-separated lines: a
 * comma or a line break in it would make fields of its own. */
static void plain_text(char *s)
{
    for (; *s; s++)
        if (*s == ',' || *s == '\n' || *s == '\r')
            *s = ' ';
}

static void gpu_line(struct buf *out, unsigned i, nvml_dev d)
{
    char name[NVML_NAME_LEN] = "", uuid[NVML_NAME_LEN] = "";
    if (!L.name || L.name(d, name, sizeof name) != NVML_OK)
        snprintf(name, sizeof name, "[N/A]");
    if (!L.uuid || L.uuid(d, uuid, sizeof uuid) != NVML_OK)
        snprintf(uuid, sizeof uuid, "[N/A]");
    plain_text(name);
    plain_text(uuid);
    buf_printf(out, "%u, %s, %s", i, name, uuid);
    /* each call before its field: a function's arguments are evaluated in
     * no set order, so the value must not be read in the same call */
    struct nvml_util u = {0};
    unsigned t = 0, pw = 0, lim = 0, clk = 0;
    bool u_ok = L.util && L.util(d, &u) == NVML_OK;
    bool t_ok = L.temp && L.temp(d, NVML_TEMP_GPU, &t) == NVML_OK;
    bool pw_ok = L.power && L.power(d, &pw) == NVML_OK;
    bool lim_ok = L.limit && L.limit(d, &lim) == NVML_OK;
    bool clk_ok = L.clock && L.clock(d, NVML_CLOCK_SM, &clk) == NVML_OK;
    field_u(out, u_ok, u.gpu);
    field_u(out, t_ok, t);
    field_w(out, pw_ok, pw);
    field_w(out, lim_ok, lim);
    struct nvml_mem2 m2 = {.version = (unsigned)sizeof m2 | 2u << 24};
    struct nvml_mem1 m1 = {0};
    bool mem = false;
    unsigned long long total = 0, used = 0, avail = 0;
    if (L.mem2 && L.mem2(d, &m2) == NVML_OK) {
        mem = true;
        total = m2.total, used = m2.used, avail = m2.free;
    } else if (L.mem1 && L.mem1(d, &m1) == NVML_OK) {
        mem = true;
        total = m1.total, used = m1.used, avail = m1.free;
    }
    field_u(out, mem, mib(total));
    field_u(out, mem, mib(used));
    field_u(out, mem, mib(avail));
    field_u(out, clk_ok, clk);
    buf_puts(out, "\n");
}

int nvml_gpu_csv(struct buf *out, struct buf *why)
{
    if (nvml_open(why) < 0)
        return -1;
    unsigned n = 0;
    nvml_ret r = L.count(&n);
    if (r != NVML_OK) {
        buf_printf(why, "nvmlDeviceGetCount: %s", err_name(r));
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        nvml_dev d;
        if (L.handle(i, &d) == NVML_OK)
            gpu_line(out, i, d);
    }
    return 0;
}

/* argv[0] of the process, as nvidia-smi names it ("VLLM::Worker" once vLLM
 * renamed its workers), else its comm. */
static void proc_name(unsigned pid, char *out, size_t sz)
{
    char path[64];
    snprintf(out, sz, "[N/A]");
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "/proc/%u/%s", pid, k ? "comm" : "cmdline");
        FILE *f = fopen(path, "re");
        if (!f)
            return;
        size_t n = fread(out, 1, sz - 1, f);
        fclose(f);
        out[n] = '\0';
        out[strcspn(out, "\n")] = '\0'; /* comm ends in one; cmdline's NUL ends argv[0] */
        if (out[0]) {
            plain_text(out);
            return;
        }
    }
    snprintf(out, sz, "[N/A]");
}

/* The compute processes of one GPU: asked with room for cap, and again
 * with the room the library says it needs (processes come and go). */
static void apps_of(struct buf *out, nvml_dev d)
{
    char uuid[NVML_NAME_LEN] = "";
    if (!L.uuid || L.uuid(d, uuid, sizeof uuid) != NVML_OK)
        snprintf(uuid, sizeof uuid, "[N/A]");
    plain_text(uuid);
    bool v2 = L.procs2 != NULL;
    if (!v2 && !L.procs1)
        return;
    size_t each = v2 ? sizeof(struct nvml_proc2) : sizeof(struct nvml_proc1);
    unsigned cap = NVML_MAX_PROCS, n = 0;
    void *ps = NULL;
    nvml_ret r = NVML_INSUFFICIENT_SIZE;
    for (int tries = 0; tries < 3 && r == NVML_INSUFFICIENT_SIZE; tries++) {
        free(ps);
        if (!(ps = calloc(cap, each)))
            return;
        n = cap;
        r = v2 ? L.procs2(d, &n, ps) : L.procs1(d, &n, ps);
        cap = n > cap ? n + 8 : cap * 2;
    }
    for (unsigned k = 0; r == NVML_OK && k < n; k++) {
        const struct nvml_proc2 *a = v2 ? (const struct nvml_proc2 *)ps + k : NULL;
        const struct nvml_proc1 *b = v2 ? NULL : (const struct nvml_proc1 *)ps + k;
        unsigned pid = a ? a->pid : b->pid;
        unsigned long long used = a ? a->used : b->used;
        char name[128];
        proc_name(pid, name, sizeof name);
        buf_printf(out, "%s, %u, %s", uuid, pid, name);
        field_u(out, used != NVML_NO_VALUE, mib(used));
        buf_puts(out, "\n");
    }
    free(ps);
}

int nvml_apps_csv(struct buf *out, struct buf *why)
{
    if (nvml_open(why) < 0)
        return -1;
    unsigned n = 0;
    if (L.count(&n) != NVML_OK)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        nvml_dev d;
        if (L.handle(i, &d) == NVML_OK)
            apps_of(out, d);
    }
    return 0;
}

int nvml_driver_version(char *out, size_t sz, struct buf *why)
{
    out[0] = '\0';
    if (nvml_open(why) < 0)
        return -1;
    if (!L.driver) {
        buf_puts(why, "the library has no nvmlSystemGetDriverVersion");
        return -1;
    }
    char v[96] = ""; /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80 */
    nvml_ret r = L.driver(v, sizeof v);
    if (r != NVML_OK) {
        buf_printf(why, "nvmlSystemGetDriverVersion: %s", err_name(r));
        return -1;
    }
    v[sizeof v - 1] = '\0';
    snprintf(out, sz, "%s", v);
    return 0;
}
