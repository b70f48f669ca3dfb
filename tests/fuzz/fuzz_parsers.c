/* libFuzzer target for every parser that reads text from a node: the first
 * byte picks the parser, the rest is the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "rdma.h"
#include "snapshot.h"
#include "completion.h"
#include "sse.h"
#include "metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_event(void *ctx, const char *d, size_t len)
{
    return completion_event(ctx, d, len, 1.0) < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    switch (data[0] % 8) {
    case 0: {
        struct probe_mem m;
        struct pval v;
        probe_parse_meminfo(s, &m);
        probe_parse_vmstat_oom(s, &v);
        break;
    }
    case 1: {
        struct probe_gpu g[4];
        probe_parse_gpu_csv(s, g, 4);
        break;
    }
    case 2: {
        struct probe_gpu_proc p[4];
        probe_parse_compute_apps(s, p, 4);
        break;
    }
    case 3: {
        struct probe_container c;
        probe_parse_inspect_line(s, &c);
        break;
    }
    case 4: {
        struct rdma_port p[RDMA_MAX_PORTS];
        struct rdma_ifaddr a[8];
        int n = rdma_parse_sysfs(s, p, RDMA_MAX_PORTS);
        int na = rdma_parse_ipv4(s, a, 8);
        rdma_resolve(p, n < 0 ? 0 : n, a, na);
        struct rdma_fabric f;
        rdma_detect_fabric(p, n < 0 ? 0 : n, a, na, NULL, &f);
        break;
    }
    case 7: {
        struct completion c;
        completion_init(&c, 0);
        struct sse_parser p;
        sse_init(&p, fuzz_event, &c, 1 << 16);
        /* fed in two pieces at a point the input picks */
        size_t cut = size > 2 ? data[1] % (size - 1) : 0;
        if (!sse_feed(&p, s, cut) && !sse_feed(&p, s + cut, size - 1 - cut))
            sse_finish(&p);
        sse_free(&p);
        completion_free(&c);
        completion_init(&c, 0);
        completion_body(&c, s, 0);
        completion_free(&c);
        break;
    }
    case 6: {
        struct metrics a, b;
        struct metrics_rates r;
        metrics_parse(s, &a);
        metrics_parse(s + (size - 1) / 2, &b);
        metrics_rates(&a, &b, 1.0, &r);
        break;
    }
    case 5: {
        static struct snapshot snap;
        snapshot_parse(s, "@@M@@", NULL, &snap);
        break;
    }
    }
    free(s);
    return 0;
}
