#include "phase.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static const struct {
    const char *needle;
    enum phase phase;
} MARKS[] = {
    {"vLLM API server version", PHASE_STARTING},
    {"Loading safetensors checkpoint shards", PHASE_LOADING},
    {"Loading weights took", PHASE_LOADED},
    {"Model loading took", PHASE_LOADED},
    {"torch.compile takes", PHASE_COMPILING},
    {"Available KV cache memory", PHASE_KV_CACHE},
    {"GPU KV cache size", PHASE_KV_CACHE},
    {"Capturing CUDA graphs", PHASE_GRAPHS},
    {"Graph capturing finished", PHASE_ENGINE},
    {"init engine", PHASE_ENGINE},
    {"Starting vLLM API server", PHASE_SERVER},
    {"Starting vLLM server", PHASE_SERVER},
    {"Application startup complete.", PHASE_READY},
};

/* "Watchdog caught collective operation timeout" is how PyTorch's NCCL
 * watchdog says it (capital W), and "died, exit code" how vLLM's multiproc
 * executor says a worker is gone (tests/fixtures/logs/: a real capture). */
static const char *FATAL[] = {"Traceback", "out of memory", "OutOfMemory", "NCCL WARN",
                              "RuntimeError", "Killed", "watchdog", "Watchdog caught",
                              "died, exit code"};

void phase_init(struct phase_state *st)
{
    memset(st, 0, sizeof *st);
    st->kv_tokens = -1;
    st->weights_gib = st->graphs_gib = -1;
}

const char *phase_name(enum phase p)
{
    static const char *names[] = {"not started", "starting", "loading weights", "weights loaded",
                                  "compiling", "sizing KV cache", "capturing CUDA graphs",
                                  "starting engine", "starting API server", "ready"};
    return p <= PHASE_READY ? names[p] : "?";
}

static const char *memmem_str(const char *hay, size_t len, const char *needle)
{
    return memmem(hay, len, needle, strlen(needle));
}

const char *phase_fatal_marker(const char *line, size_t len)
{
    for (size_t i = 0; i < sizeof FATAL / sizeof *FATAL; i++)
        if (memmem_str(line, len, FATAL[i]))
            return FATAL[i];
    return NULL;
}

/* "GPU KV cache size: 2,023,717 tokens" -> 2023717 */
static long kv_tokens(const char *p, size_t len)
{
    const char *s = memmem_str(p, len, "GPU KV cache size:");
    if (!s)
        return -1;
    s += strlen("GPU KV cache size:");
    long v = 0;
    bool any = false;
    for (; s < p + len && (*s == ' ' || *s == ',' || (*s >= '0' && *s <= '9')); s++)
        if (*s >= '0' && *s <= '9') {
            if (v > 100000000000L)
                return -1;
            v = v * 10 + (*s - '0');
            any = true;
        }
    return any ? v : -1;
}

/* The GiB figure after `after` in "Model loading took 61.37 GiB memory"
 * or "Graph capturing finished in 4 secs, took 0.31 GiB"; -1 when absent. */
static double gib_after(const char *p, size_t len, const char *mark, const char *after)
{
    const char *s = memmem_str(p, len, mark);
    if (!s)
        return -1;
    size_t rest = len - (size_t)(s - p);
    const char *a = memmem_str(s, rest, after);
    if (!a)
        return -1;
    a += strlen(after);
    char num[32];
    size_t k = 0;
    while (a < p + len && k < sizeof num - 1 && ((*a >= '0' && *a <= '9') || *a == '.'))
        num[k++] = *a++;
    num[k] = '\0';
    if (!k || a + 4 > p + len || memcmp(a, " GiB", 4) != 0)
        return -1;
    double v = atof(num);
    return v >= 0 && v < 1e6 ? v : -1;
}

void phase_feed(struct phase_state *st, const char *line, size_t len)
{
    /* tqdm: "...\r...\r" - the last non-empty redraw is the state now */
    const char *cr;
    while ((cr = memchr(line, '\r', len)) && (size_t)(cr - line) + 1 < len) {
        len -= (size_t)(cr - line) + 1;
        line = cr + 1;
    }
    if (len && line[len - 1] == '\r')
        len--;
    const char *f = phase_fatal_marker(line, len);
    if (f && !st->failed) {
        st->failed = true;
        text_copy_field(st->fatal, sizeof st->fatal, line, len);
    }
    for (size_t i = 0; i < sizeof MARKS / sizeof *MARKS; i++)
        if (memmem_str(line, len, MARKS[i].needle)) {
            /* phases only move forward: a late line of an earlier phase
             * (a second worker's tqdm) does not move the display back */
            if (MARKS[i].phase >= st->phase) {
                st->phase = MARKS[i].phase;
                text_copy_field(st->detail, sizeof st->detail, line, len);
            }
            long kv = kv_tokens(line, len);
            if (kv >= 0)
                st->kv_tokens = kv;
            double w = gib_after(line, len, "Model loading took", "took ");
            if (w >= 0)
                st->weights_gib = w;
            double g = gib_after(line, len, "Graph capturing finished", ", took ");
            if (g >= 0)
                st->graphs_gib = g;
            break;
        }
}
