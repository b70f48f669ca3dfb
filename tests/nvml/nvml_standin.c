/* A stand-in for libnvidia-ml.so.1 where no NVIDIA driver is (CI): the
 * library's ABI for the calls src/nodes/nvml.c makes, answering as the
 * GPU named by DSV41_NVML_STANDIN does:
 *   h200  the values captured on the device tool's H200 under load
 *         (tests/fixtures/nvidia-smi/h200-nvml-load.csv), this process
 *         as its one compute process;
 *   gb10  a DGX Spark: memory and the power limit NOT_SUPPORTED, two
 *         processes, one without a memory figure (REFERENCE §5);
 *   many  100 compute processes (more than the first call has room for);
 *   down  nvmlInit fails as with no driver loaded.
 * Loaded through DSV41_NVML_LIB; what the real library answers was checked
 * on the H200 (tests/bench/device_nvml.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OK = 0, NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7, DRIVER_NOT_LOADED = 9 };

struct util {
    unsigned gpu, memory;
};
struct mem1 {
    unsigned long long total, free, used;
};
struct mem2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
struct proc {
    unsigned pid;
    unsigned long long used;
    unsigned gi, ci;
};

static int is(const char *p)
{
    const char *v = getenv("DSV41_NVML_STANDIN");
    return v && strcmp(v, p) == 0;
}

static void *const DEV = (void *)&is; /* any non-NULL handle */

const char *nvmlErrorString(int r)
{
    return r == DRIVER_NOT_LOADED ? "Driver Not Loaded"
           : r == NOT_SUPPORTED   ? "Not Supported"
                                  : "Unknown Error";
}
int nvmlInit_v2(void) { return is("down") ? DRIVER_NOT_LOADED : OK; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 1; return OK; }
/* the H200's driver (tests/fixtures/nvidia-smi) */
int nvmlSystemGetDriverVersion(char *s, unsigned n)
{
    if (n < 10)
        return INSUFFICIENT_SIZE;
    snprintf(s, n, "%s", "580.159.04");
    return OK;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    if (i)
        return 2; /* INVALID_ARGUMENT */
    *d = DEV;
    return OK;
}
int nvmlDeviceGetName(void *d, char *s, unsigned n)
{
    (void)d;
    strncpy(s, is("gb10") ? "NVIDIA GB10" : "NVIDIA H200", n);
    return OK;
}
int nvmlDeviceGetUUID(void *d, char *s, unsigned n)
{
    (void)d;
    strncpy(s, is("gb10") ? "GPU-5a1c3e2f-8b0d-4c7e-9f11-2d3e4f5a6b7c"
                          : "GPU-f0f9f763-1b99-6737-76cb-3fd72b1216d3", n);
    return OK;
}
int nvmlDeviceGetUtilizationRates(void *d, struct util *u)
{
    (void)d;
    u->gpu = is("gb10") ? 37 : 100;
    u->memory = 0;
    return OK;
}
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned *t)
{
    (void)d;
    *t = sensor ? 0 : is("gb10") ? 48 : 47;
    return sensor ? 2 : OK;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned *mw)
{
    (void)d;
    *mw = is("gb10") ? 23510 : 527320;
    return OK;
}
int nvmlDeviceGetPowerManagementLimit(void *d, unsigned *mw)
{
    (void)d;
    if (is("gb10"))
        return NOT_SUPPORTED;
    *mw = 700000;
    return OK;
}
/* v1 counts the driver's reservation as used; v2 does not (the H200's
 * 615 MiB) */
int nvmlDeviceGetMemoryInfo(void *d, struct mem1 *m)
{
    (void)d;
    if (is("gb10"))
        return NOT_SUPPORTED;
    m->total = 143771ull << 20;
    m->free = 134437ull << 20;
    m->used = m->total - m->free;
    return OK;
}
int nvmlDeviceGetMemoryInfo_v2(void *d, struct mem2 *m)
{
    (void)d;
    if (is("gb10"))
        return NOT_SUPPORTED;
    if (m->version != (sizeof *m | 2u << 24))
        return 25; /* ARGUMENT_VERSION_MISMATCH */
    m->total = 143771ull << 20;
    m->reserved = 615ull << 20;
    m->free = 134437ull << 20;
    m->used = (8719ull << 20) - 300000; /* rounds up to 8719 MiB */
    return OK;
}
int nvmlDeviceGetClockInfo(void *d, int type, unsigned *mhz)
{
    (void)d;
    *mhz = is("gb10") ? 2418 : 1980;
    return type == 1 ? OK : NOT_SUPPORTED;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct proc *p)
{
    (void)d;
    unsigned want = is("many") ? 100 : is("gb10") ? 2 : 1;
    if (*n < want) {
        *n = want;
        return INSUFFICIENT_SIZE;
    }
    *n = want;
    for (unsigned k = 0; k < want; k++) {
        p[k].pid = k == 0 ? (unsigned)getpid() : (unsigned)getppid();
        p[k].used = is("gb10") && k == 1 ? ~0ull : 8710ull << 20;
        p[k].gi = p[k].ci = ~0u;
    }
    return OK;
}
