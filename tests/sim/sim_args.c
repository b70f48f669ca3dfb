/* Argument checking for dsv41-sim: the vLLM flags launch passes, with values
 * checked where a wrong one would break a real deployment. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum kind { VAL, JSON, FLAG };

static const struct {
    const char *name;
    enum kind kind;
} KNOWN[] = {
    {"served-model-name", VAL}, {"dtype", VAL}, {"tensor-parallel-size", VAL},
    {"pipeline-parallel-size", VAL}, {"nnodes", VAL}, {"node-rank", VAL},
    {"master-addr", VAL}, {"master-port", VAL}, {"kv-cache-dtype", VAL},
    {"block-size", VAL}, {"swa-block-size", VAL}, {"kv-cache-memory-bytes", VAL},
    {"gpu-memory-utilization", VAL}, {"max-model-len", VAL}, {"max-num-seqs", VAL},
    {"max-num-batched-tokens", VAL}, {"max-cudagraph-capture-size", VAL},
    {"compilation-config", JSON}, {"safetensors-load-strategy", VAL},
    {"engram-config", JSON}, {"attention-backend", VAL}, {"linear-backend", VAL},
    {"moe-backend", VAL}, {"speculative-config", JSON}, {"generation-config", VAL},
    {"override-generation-config", JSON},
    {"tokenizer-mode", VAL}, {"limit-mm-per-prompt", JSON}, {"host", VAL}, {"port", VAL},
    {"reasoning-parser", VAL}, {"tool-call-parser", VAL}, {"api-key", VAL},
    {"enable-chunked-prefill", FLAG}, {"async-scheduling", FLAG},
    {"enable-prefix-caching", FLAG}, {"headless", FLAG}, {"enable-auto-tool-choice", FLAG},
    {"enable-prompt-tokens-details", FLAG}, {"enable-force-include-usage", FLAG},
};

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints like vLLM's argparse and fails. */
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dsv41-sim: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static int to_int(const char *flag, const char *v, long lo, long hi, long *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi)
        return bad("argument --%s: invalid value '%s'", flag, v);
    *out = n;
    return 0;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static double env_double(const char *name, double dflt)
{
    const char *v = getenv(name);
    return v && *v ? atof(v) : dflt;
}

int sim_parse_args(int argc, char **argv, struct sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tp = o->pp = o->nnodes = 1;
    o->host = "0.0.0.0";
    o->port = 8000;
    o->master_port = 29500;
    o->max_model_len = 262144;
    o->max_num_seqs = 2;
    o->max_batched = 2048; /* vLLM's default for chunked prefill; launch gives BATCH */
    o->block_size = 256;
    o->api_key = getenv("VLLM_API_KEY");
    o->boot_ms = env_int("DSV41_SIM_BOOT_MS", 3000);
    o->prefill_tps = env_double("DSV41_SIM_PREFILL_TPS", 2000);
    o->decode_tps = env_double("DSV41_SIM_DECODE_TPS", 40);
    /* a slower build of the image (a test image bakes it in): every rate divided */
    double slow = env_double("DSV41_SIM_SLOWDOWN", 1);
    if (slow > 0) {
        o->prefill_tps /= slow;
        o->decode_tps /= slow;
    }
    o->join_timeout_ms = env_int("DSV41_SIM_JOIN_TIMEOUT_MS", 600000);
    bool seen_rank = false, seen_port = false, seen_host = false;
    int i = 1;
    /* launch may run "vllm serve /model ..." or just "serve /model ..." */
    if (i < argc && strcmp(argv[i], "vllm") == 0)
        i++;
    if (i < argc && strcmp(argv[i], "serve") == 0)
        i++;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] != '-') {
            if (o->model_path)
                return bad("unrecognized arguments: %s", a);
            o->model_path = a;
            continue;
        }
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(a + 2, '=');
        size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (nl >= sizeof name)
            return bad("unrecognized arguments: %s", a);
        memcpy(name, a + 2, nl);
        name[nl] = '\0';
        int k = -1;
        for (size_t j = 0; j < sizeof KNOWN / sizeof KNOWN[0]; j++)
            if (strcmp(KNOWN[j].name, name) == 0)
                k = (int)j;
        if (k < 0)
            return bad("unrecognized arguments: %s", a);
        if (KNOWN[k].kind == FLAG) {
            if (eq)
                return bad("argument --%s: ignored explicit argument '%s'", name, eq + 1);
            if (strcmp(name, "headless") == 0)
                o->headless = true;
            if (strcmp(name, "enable-force-include-usage") == 0)
                o->force_usage = true;
            continue;
        }
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return bad("argument --%s: expected one argument", name);
        if (KNOWN[k].kind == JSON) {
            cJSON *j = cJSON_Parse(val);
            bool ok = cJSON_IsObject(j);
            cJSON_Delete(j);
            if (!ok)
                return bad("argument --%s: value is not a JSON object: %s", name, val);
        }
        long n;
        if (strcmp(name, "served-model-name") == 0) {
            o->served_name = val;
        } else if (strcmp(name, "tensor-parallel-size") == 0) {
            if (to_int(name, val, 1, 64, &n))
                return -1;
            o->tp = (int)n;
        } else if (strcmp(name, "pipeline-parallel-size") == 0) {
            if (to_int(name, val, 1, 64, &n))
                return -1;
            o->pp = (int)n;
        } else if (strcmp(name, "nnodes") == 0) {
            if (to_int(name, val, 1, 64, &n))
                return -1;
            o->nnodes = (int)n;
        } else if (strcmp(name, "node-rank") == 0) {
            if (to_int(name, val, 0, 63, &n))
                return -1;
            o->node_rank = (int)n;
            seen_rank = true;
        } else if (strcmp(name, "master-addr") == 0) {
            o->master_addr = val;
        } else if (strcmp(name, "master-port") == 0) {
            if (to_int(name, val, 1, 65535, &n))
                return -1;
            o->master_port = (int)n;
        } else if (strcmp(name, "host") == 0) {
            o->host = val;
            seen_host = true;
        } else if (strcmp(name, "port") == 0) {
            if (to_int(name, val, 1, 65535, &n))
                return -1;
            o->port = (int)n;
            seen_port = true;
        } else if (strcmp(name, "max-model-len") == 0) {
            if (to_int(name, val, 16, 1L << 30, &n))
                return -1;
            o->max_model_len = n;
        } else if (strcmp(name, "max-num-seqs") == 0) {
            if (to_int(name, val, 1, 4096, &n))
                return -1;
            o->max_num_seqs = (int)n;
        } else if (strcmp(name, "max-num-batched-tokens") == 0) {
            if (to_int(name, val, 1, 1L << 30, &n))
                return -1;
            o->max_batched = n;
        } else if (strcmp(name, "block-size") == 0) {
            if (to_int(name, val, 1, 1L << 20, &n))
                return -1;
            o->block_size = n;
        } else if (strcmp(name, "api-key") == 0) {
            o->api_key = val;
        }
    }
    if (!o->model_path)
        return bad("the model path is required (e.g. /model)");
    if (!o->served_name)
        o->served_name = o->model_path;
    if (o->nnodes > 1 && !o->master_addr)
        return bad("--nnodes > 1 needs --master-addr");
    if (o->nnodes > 1 && !seen_rank)
        return bad("--nnodes > 1 needs --node-rank");
    if (o->node_rank >= o->nnodes)
        return bad("--node-rank must be below --nnodes");
    if (o->node_rank > 0 && !o->headless)
        return bad("--node-rank > 0 needs --headless (only rank 0 serves the API)");
    if (o->headless && (seen_port || seen_host))
        return bad("--headless ranks serve no API: drop --host/--port");
    if (o->tp * o->pp % o->nnodes != 0)
        return bad("tensor x pipeline parallel size must be a multiple of --nnodes");
    return 0;
}
