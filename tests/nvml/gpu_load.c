/* gpu-load: keeps GPU 0 busy for N seconds through the CUDA driver API
 * (libcuda.so.1, opened with dlopen: no toolkit needed), holding SIZE MiB
 * of device memory, so nvml-probe can compare NVML and nvidia-smi under
 * load and see a compute process. Device memsets run on the SMs.
 *
 *   gpu-load SECONDS SIZE_MIB */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*cu_fn)();

static cu_fn need(void *h, const char *name)
{
    cu_fn f = (cu_fn)dlsym(h, name);
    if (!f) {
        fprintf(stderr, "gpu-load: %s missing in libcuda.so.1\n", name);
        exit(2);
    }
    return f;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gpu-load SECONDS SIZE_MIB\n");
        return 2;
    }
    int secs = atoi(argv[1]);
    unsigned long long size = strtoull(argv[2], NULL, 10) << 20;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "gpu-load: %s\n", dlerror());
        return 2;
    }
    int dev = 0;
    void *ctx = NULL;
    unsigned long long ptr = 0;
    int rc;
    if ((rc = need(h, "cuInit")(0)) || (rc = need(h, "cuDeviceGet")(&dev, 0)) ||
        (rc = need(h, "cuCtxCreate_v2")(&ctx, 0, dev)) ||
        (rc = need(h, "cuMemAlloc_v2")(&ptr, size))) {
        fprintf(stderr, "gpu-load: CUDA error %d\n", rc);
        return 1;
    }
    cu_fn memset32 = need(h, "cuMemsetD32_v2"), sync = need(h, "cuCtxSynchronize");
    time_t end = time(NULL) + secs;
    unsigned v = 0;
    while (time(NULL) < end) {
        for (int i = 0; i < 16; i++)
            memset32(ptr, v++, (size_t)(size / 4));
        sync();
    }
    return 0;
}
