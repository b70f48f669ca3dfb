/* nvml: the local node's GPUs through NVIDIA's management library, opened
 * with dlopen (libnvidia-ml.so.1 ships with the driver; it is never a build
 * dependency). One sample costs microseconds in this process, where an
 * nvidia-smi start costs tens of milliseconds and, on a fragmented GB10,
 * has blocked for minutes (REFERENCE §8). nvtop and nvitop read it the same
 * way.
 *
 * What it writes is what `nvidia-smi --query-gpu=PROBE_GPU_QUERY` and
 * `--query-compute-apps=PROBE_APPS_QUERY` print with
 * --format=csv,noheader,nounits, so the snapshot's one parser reads both
 * and a node without the library falls back to nvidia-smi unchanged. A
 * value the GPU does not report (GB10's memory: NOT_SUPPORTED) is "[N/A]",
 * as nvidia-smi writes it. */
#ifndef DSV41_NVML_H
#define DSV41_NVML_H

#include <stddef.h>

#include "buf.h"

/* The library's path: DSV41_NVML_LIB when set (a driver installed
 * elsewhere; the tests' stand-in), else the soname. */
#define NVML_SONAME "libnvidia-ml.so.1"

/* Opens and initialises the library once per process (later calls return
 * what the first found). 0 when it answers; -1 with why ("libnvidia-ml.so.1:
 * cannot open shared object file", "nvmlInit: Driver Not Loaded"). */
int nvml_open(struct buf *why);

/* One line per GPU in nvidia-smi's order and format; -1 (with why) when
 * NVML is not there or the device count fails: the caller runs nvidia-smi
 * instead. */
int nvml_gpu_csv(struct buf *out, struct buf *why);

/* The compute processes on every GPU, one line each (gpu_uuid, pid,
 * process_name, used_memory in MiB); -1 when NVML is not there. */
int nvml_apps_csv(struct buf *out, struct buf *why);

/* The driver's version ("580.95.05"), as nvidia-smi's driver_version;
 * -1 (with why) when NVML is not there or does not say. */
int nvml_driver_version(char *out, size_t sz, struct buf *why);

#endif
