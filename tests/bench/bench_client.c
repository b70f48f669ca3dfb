/* Figures for make bench about the API client: SSE + chunk parsing
 * throughput on one core, and the TTFT our client measures for a request
 * (compared with curl's time_starttransfer by run.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "completion.h"
#include "sse.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int on_event(void *ctx, const char *data, size_t len)
{
    return completion_event(ctx, data, len, 0) < 0 ? -1 : 0;
}

static int count_event(void *ctx, const char *data, size_t len)
{
    (void)data;
    *(size_t *)ctx += len;
    return 0;
}

/* A vLLM-shaped stream: content deltas with usage on every chunk. */
static void make_stream(struct buf *b, size_t bytes)
{
    for (long i = 0; b->len < bytes; i++)
        buf_printf(b,
                   "data: {\"id\":\"chatcmpl-5b1e\",\"object\":\"chat.completion.chunk\","
                   "\"created\":1796035000,\"model\":\"deepseek-v4.1-flash\",\"choices\":[{"
                   "\"index\":0,\"delta\":{\"content\":\" word%ld\"},\"logprobs\":null,"
                   "\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":17,\"total_tokens\":%ld,"
                   "\"completion_tokens\":%ld}}\n\n",
                   i, 17 + i, i);
    buf_puts(b, "data: [DONE]\n\n");
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "sse") == 0) {
        struct buf b = BUF_INIT;
        make_stream(&b, (size_t)atol(argv[2]) << 20);
        /* fed in 16 KiB reads, as libcurl hands them over */
        for (int full = 0; full < 2; full++) {
            struct completion c;
            size_t events = 0;
            completion_init(&c, 0);
            struct sse_parser p;
            sse_init(&p, full ? on_event : count_event, full ? (void *)&c : (void *)&events,
                     1 << 20);
            double t0 = now_s();
            for (size_t off = 0; off < b.len; off += 16384)
                sse_feed(&p, b.data + off, b.len - off < 16384 ? b.len - off : 16384);
            sse_finish(&p);
            double dt = now_s() - t0;
            printf("%s_mb_s %.1f\n", full ? "sse_and_chunks" : "sse_framing",
                   (double)b.len / 1048576.0 / dt);
            if (full && (!c.done || c.content.len == 0))
                fprintf(stderr, "stream not assembled\n");
            sse_free(&p);
            completion_free(&c);
        }
        buf_free(&b);
        return 0;
    }
    if (argc >= 5 && strcmp(argv[1], "ttft") == 0) {
        api_global_init();
        int n = atoi(argv[4]);
        double *t = calloc((size_t)n, sizeof *t);
        for (int i = 0; i < n && t; i++) {
            struct api_call call = {0};
            call.path = "/v1/chat/completions";
            call.body = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\","
                        "\"content\":\"What is 17 * 23?\"}]}";
            call.stream = true;
            call.stop_after = 1;
            call.timeout_ms = 10000;
            api_run(argv[2], argv[3], &call, 1, NULL);
            t[i] = call.c.nchunks ? call.c.t_first - call.c.t_start : -1;
            api_call_free(&call);
        }
        qsort(t, (size_t)n, sizeof *t, cmp);
        printf("ttft_median_ms %.3f\n", t[n / 2] * 1e3);
        free(t);
        return 0;
    }
    fprintf(stderr, "usage: bench_client sse MB | ttft BASE KEY N\n");
    return 2;
}
