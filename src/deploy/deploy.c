#include "deploy.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

int deploy_capture_sizes(int max_seqs, int nspec, int *sizes, int max)
{
    int cap = max_seqs * (nspec + 1);
    int n = 0;
    bool seen[4097] = {false};
    int lim = nspec + 1 < cap ? nspec + 1 : cap;
    for (int i = 1; i <= lim && i <= 4096; i++)
        seen[i] = true;
    for (int i = nspec + 1; i <= cap && i <= 4096; i += 4)
        seen[i] = true;
    if (cap <= 4096)
        seen[cap] = true;
    for (int i = 1; i <= 4096 && n < max; i++)
        if (seen[i])
            sizes[n++] = i;
    return n;
}

/* Compact JSON of a cJSON tree, appended to v as one argument. */
/* A fact of the node, or what stands for it when the node could not say. */
static const char *fact(const struct deploy_node *n, const char *v)
{
    return n->unknown ? n->unknown : v;
}

static int add_json(struct strv *v, cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s)
        return -1;
    int rc = strv_add(v, s);
    free(s);
    return rc;
}

static cJSON *compilation_config(const struct config *c, const struct deploy_plan *p)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "cudagraph_mode", config_str(c, CFG_GRAPH_MODE));
    cJSON *ops = cJSON_AddArrayToObject(j, "custom_ops");
    cJSON_AddItemToArray(ops, cJSON_CreateString("all"));
    cJSON_AddItemToObject(j, "cudagraph_capture_sizes",
                          cJSON_CreateIntArray(p->capture_sizes, p->ncapture));
    return j;
}

static cJSON *speculative_config(long nspec, int tp)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "method", "dspark");
    cJSON_AddNumberToObject(j, "num_speculative_tokens", (double)nspec);
    cJSON_AddNumberToObject(j, "draft_tensor_parallel_size", tp);
    cJSON_AddStringToObject(j, "attention_backend", "B12X");
    cJSON_AddStringToObject(j, "draft_sample_method", "greedy");
    cJSON_AddStringToObject(j, "rejection_sample_method", "standard");
    cJSON_AddBoolToObject(j, "enable_adaptive_verification", true);
    return j;
}

static cJSON *engram_config(void)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "cpu_offload", false);
    cJSON_AddStringToObject(j, "table_memory", "disk");
    cJSON_AddBoolToObject(j, "disk_resident_scales", false);
    cJSON_AddNumberToObject(j, "disk_prefetch_max_tokens", 0);
    cJSON_AddBoolToObject(j, "projection_tp", false);
    return j;
}

static int vllm_args(const struct config *c, const struct deploy_plan *p, int rank,
                     const struct deploy_node *head, long nspec, struct strv *a)
{
    int rc = 0;
    rc |= strv_add(a, "/model");
    rc |= strv_add(a, "--served-model-name");
    rc |= strv_add(a, DEPLOY_SERVED_NAME);
    rc |= strv_add(a, "--dtype");
    rc |= strv_add(a, "bfloat16");
    rc |= strv_add(a, "--tensor-parallel-size");
    rc |= strv_addf(a, "%d", p->tp);
    if (p->pp > 1) {
        rc |= strv_add(a, "--pipeline-parallel-size");
        rc |= strv_addf(a, "%d", p->pp);
    }
    rc |= strv_add(a, "--nnodes");
    rc |= strv_addf(a, "%d", p->nnodes);
    rc |= strv_add(a, "--master-addr");
    rc |= strv_add(a, fact(head, head->ipv4));
    rc |= strv_add(a, "--master-port");
    rc |= strv_add(a, config_str(c, CFG_MPORT));
    static const char *fixed1[] = {"--kv-cache-dtype", "fp8", "--block-size", "256",
                                   "--swa-block-size", "128"};
    for (size_t i = 0; i < sizeof fixed1 / sizeof *fixed1; i++)
        rc |= strv_add(a, fixed1[i]);
    rc |= strv_add(a, "--kv-cache-memory-bytes");
    rc |= strv_add(a, config_str(c, CFG_KV_BYTES));
    rc |= strv_add(a, "--gpu-memory-utilization");
    rc |= strv_add(a, config_str(c, CFG_GPU_UTIL));
    rc |= strv_add(a, "--max-model-len");
    rc |= strv_add(a, config_str(c, CFG_MAX_LEN));
    rc |= strv_add(a, "--max-num-seqs");
    rc |= strv_add(a, config_str(c, CFG_MAX_SEQS));
    rc |= strv_add(a, "--max-num-batched-tokens");
    rc |= strv_add(a, config_str(c, CFG_BATCH));
    rc |= strv_add(a, "--max-cudagraph-capture-size");
    rc |= strv_addf(a, "%d", p->cap);
    rc |= strv_add(a, "--compilation-config");
    rc |= add_json(a, compilation_config(c, p));
    static const char *fixed2[] = {"--enable-chunked-prefill", "--async-scheduling",
                                   "--enable-prefix-caching", "--safetensors-load-strategy",
                                   "lazy"};
    for (size_t i = 0; i < sizeof fixed2 / sizeof *fixed2; i++)
        rc |= strv_add(a, fixed2[i]);
    rc |= strv_add(a, "--engram-config");
    rc |= add_json(a, engram_config());
    static const char *fixed3[] = {"--attention-backend", "B12X", "--linear-backend", "b12x",
                                   "--moe-backend", "b12x"};
    for (size_t i = 0; i < sizeof fixed3 / sizeof *fixed3; i++)
        rc |= strv_add(a, fixed3[i]);
    rc |= strv_add(a, "--speculative-config");
    rc |= add_json(a, speculative_config(nspec, p->tp));
    static const char *fixed4[] = {"--generation-config", "vllm", "--tokenizer-mode",
                                   "deepseek_v41", "--limit-mm-per-prompt", "{\"image\":1}"};
    for (size_t i = 0; i < sizeof fixed4 / sizeof *fixed4; i++)
        rc |= strv_add(a, fixed4[i]);
    rc |= strv_add(a, "--node-rank");
    rc |= strv_addf(a, "%d", rank);
    if (rank > 0)
        return rc | strv_add(a, "--headless");
    rc |= strv_add(a, "--host");
    rc |= strv_add(a, "0.0.0.0");
    rc |= strv_add(a, "--port");
    rc |= strv_add(a, config_str(c, CFG_PORT));
    /* the API key reaches vLLM as VLLM_API_KEY, read from its file inside
     * the container (run_args) */
    static const char *fixed5[] = {"--reasoning-parser",       "deepseek_v41",
                                   "--tool-call-parser",       "deepseek_v41",
                                   "--enable-auto-tool-choice", "--enable-prompt-tokens-details",
                                   "--enable-force-include-usage"};
    for (size_t i = 0; i < sizeof fixed5 / sizeof *fixed5; i++)
        rc |= strv_add(a, fixed5[i]);
    return rc | strv_add_shell_words(a, config_str(c, CFG_EXTRA), NULL);
}

static int rank_env(const struct config *c, const struct deploy_node *n, struct deploy_rank *r)
{
    static const char *fixed[] = {
        "CUDA_VISIBLE_DEVICES=0",
        "CUTE_DSL_ARCH=sm_121a",
        "HF_HUB_OFFLINE=1",
        "TRANSFORMERS_OFFLINE=1",
        "VLLM_WORKER_MULTIPROC_METHOD=spawn",
        "VLLM_USE_V2_MODEL_RUNNER=1",
        "VLLM_USE_BREAKABLE_CUDAGRAPH=0",
        "VLLM_USE_FLASHINFER_SAMPLER=1",
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1",
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
        "OMP_NUM_THREADS=16",
        "MALLOC_ARENA_MAX=2",
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "SAFETENSORS_FAST_GPU=1",
        "VLLM_ENABLE_PCIE_ALLREDUCE=0",
        "NCCL_IB_DISABLE=0",
        "NCCL_NET_PLUGIN=none",
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        rc |= strv_add(&r->env, fixed[i]);
    /* measured 3; the index differs between setups, so each node gets its own */
    r->gid_guessed = !n->unknown && n->gid_index < 0;
    if (n->unknown)
        rc |= strv_addf(&r->env, "NCCL_IB_GID_INDEX=%s", n->unknown);
    else
        rc |= strv_addf(&r->env, "NCCL_IB_GID_INDEX=%d", n->gid_index < 0 ? 3 : n->gid_index);
    rc |= strv_addf(&r->env, "NCCL_IB_HCA=%s", fact(n, n->hcas));
    rc |= strv_add(&r->env, "NCCL_IB_MERGE_NICS=1");
    rc |= strv_addf(&r->env, "NCCL_SOCKET_IFNAME=%s", fact(n, n->ifname));
    rc |= strv_addf(&r->env, "GLOO_SOCKET_IFNAME=%s", fact(n, n->ifname));
    static const char *fixed2[] = {
        "NCCL_DEBUG=WARN",
        "VLLM_ENABLE_ROCE_ALLREDUCE=1",
        "VLLM_ROCE_ALLREDUCE_MAX_SIZE=2MB",
        "VLLM_ROCE_ALLGATHER_MAX_SIZE=16MB",
        "B12X_ROCE_CACHE_DIR=/cache/b12x-roce",
        "B12X_ROCE_TRAFFIC_CLASS=106",
        "NCCL_IB_TC=106",
        "B12X_COMPILE_CACHE_DIR=/cache/b12x",
        "XDG_CACHE_HOME=/cache",
    };
    for (size_t i = 0; i < sizeof fixed2 / sizeof *fixed2; i++)
        rc |= strv_add(&r->env, fixed2[i]);
    rc |= strv_addf(&r->env, "ST_EXL3_PLAN=/plans/%s", config_str(c, CFG_PLAN_NAME));
    rc |= strv_add(&r->env, "ST_EXL3_PREFILL=st");
    rc |= strv_add(&r->env, "ST_EXL3_PREFILL_MIN_ROWS=1");
    rc |= strv_addf(&r->env, "VLLM_HOST_IP=%s", fact(n, n->ipv4));
    return rc | strv_add_shell_words(&r->env, config_str(c, CFG_EXTRA_ENV), NULL);
}

static int run_args(const struct config *c, const struct deploy_node *n, struct deploy_rank *r)
{
    int rc = 0;
    struct strv *v = &r->run;
    rc |= strv_add(v, "run");
    rc |= strv_add(v, "-d");
    rc |= strv_add(v, "--name");
    rc |= strv_add(v, r->container);
    rc |= strv_add(v, "--label");
    rc |= strv_addf(v, "%s=1", DEPLOY_LABEL);
    rc |= strv_add(v, "--label");
    rc |= strv_addf(v, "dsv41-top.rank=%d", r->rank);
    const char *gpus = config_str(c, CFG_GPUS);
    if (gpus && *gpus) {
        rc |= strv_add(v, "--gpus");
        rc |= strv_add(v, gpus);
    }
    static const char *fixed[] = {"--network", "host", "--ipc", "host", "--privileged"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        rc |= strv_add(v, fixed[i]);
    struct strv lim = STRV_INIT;
    rc |= strv_add_words(&lim, config_str(c, CFG_ULIMITS));
    for (int i = 0; i < lim.n; i++) {
        rc |= strv_add(v, "--ulimit");
        rc |= strv_add(v, lim.v[i]);
    }
    strv_free(&lim);
    /* With the host's IPC namespace /dev/shm is the host's: docker ignores
     * --shm-size then, podman refuses it. */
    if (strcmp(config_str(c, CFG_RUNTIME), "podman") != 0) {
        rc |= strv_add(v, "--shm-size");
        rc |= strv_add(v, "32g");
    }
    /* a deployment runs for weeks: its logs must not fill the disk */
    rc |= runtime_log_args(v, config_str(c, CFG_RUNTIME), config_str(c, CFG_LOG_MAX_SIZE),
                           config_str(c, CFG_LOG_MAX_FILES));
    rc |= strv_add(v, "-v");
    rc |= strv_addf(v, "%s:/model:ro", n->model_dir);
    rc |= strv_add(v, "-v");
    rc |= strv_addf(v, "%s/plans:/plans:ro", n->state_dir);
    rc |= strv_add(v, "-v");
    rc |= strv_addf(v, "%s/cache:/cache", n->state_dir);
    if (r->rank == 0) {
        /* the key file itself, read-only: `docker inspect` shows this path,
         * never the key, as it would show an environment variable */
        rc |= strv_add(v, "-v");
        rc |= strv_addf(v, "%s:" DEPLOY_KEY_PATH ":ro", config_str(c, CFG_API_KEY_FILE));
    }
    rc |= strv_add(v, "--env-file");
    rc |= strv_add(v, r->env_file);
    rc |= strv_add(v, "--"); /* the image and its command: never options of run */
    rc |= strv_add(v, config_str(c, CFG_IMG));
    if (r->rank == 0) {
        rc |= strv_add(v, "/bin/sh");
        rc |= strv_add(v, "-c");
        rc |= strv_add(v, DEPLOY_KEY_SCRIPT);
        rc |= strv_add(v, r->container);
    }
    rc |= strv_add_shell_words(v, config_str(c, CFG_VLLM_CMD), NULL);
    for (int i = 0; i < r->args.n; i++)
        rc |= strv_add(v, r->args.v[i]);
    return rc;
}

int deploy_build(const struct config *c, const struct deploy_node *nodes, int n,
                 struct deploy_plan *p, struct buf *err)
{
    memset(p, 0, sizeof *p);
    long max_seqs, nspec, tp = n, pp = 1;
    if (n < 1 || n > DEPLOY_MAX_NODES) {
        buf_printf(err, "%d nodes: between 1 and %d are supported", n, DEPLOY_MAX_NODES);
        return -1;
    }
    if (config_get_long(c, CFG_MAX_SEQS, &max_seqs, err) < 0 ||
        config_get_long(c, CFG_NSPEC, &nspec, err) < 0)
        return -1;
    if (*config_str(c, CFG_TP) && config_get_long(c, CFG_TP, &tp, err) < 0)
        return -1;
    if (*config_str(c, CFG_PP) && config_get_long(c, CFG_PP, &pp, err) < 0)
        return -1;
    /* each value's form and range was checked when the settings loaded;
     * the word lists are split once more here so that a plan built from
     * settings that did not load that way still fails with a reason */
    static const enum config_id lists[] = {CFG_EXTRA, CFG_EXTRA_ENV, CFG_VLLM_CMD};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        struct strv w = STRV_INIT;
        struct buf why = BUF_INIT;
        int bad = strv_add_shell_words(&w, config_str(c, lists[i]), &why);
        if (bad)
            buf_printf(err, "%s: %s", config_name(lists[i]), buf_str(&why));
        strv_free(&w);
        buf_free(&why);
        if (bad)
            return -1;
    }
    if (tp * pp != n) {
        buf_printf(err, "TP=%ld x PP=%ld must equal the number of nodes (%d)", tp, pp, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        p->incomplete |= nodes[i].unknown != NULL;
        if (!nodes[i].unknown &&
            (!nodes[i].ipv4 || !*nodes[i].ipv4 || !nodes[i].ifname || !*nodes[i].ifname)) {
            buf_printf(err, "%s: no fabric address (see `dsv41-top doctor`)", nodes[i].name);
            return -1;
        }
    }
    p->nnodes = n;
    p->tp = (int)tp;
    p->pp = (int)pp;
    p->cap = (int)(max_seqs * (nspec + 1));
    p->ncapture = deploy_capture_sizes((int)max_seqs, (int)nspec, p->capture_sizes, 64);
    for (int i = 0; i < n; i++) {
        struct deploy_rank *r = &p->ranks[i];
        r->rank = i;
        snprintf(r->container, sizeof r->container, "dsv41-r%d", i);
        snprintf(r->env_file, sizeof r->env_file, "%s/dsv41-r%d.env", nodes[i].state_dir, i);
        if (vllm_args(c, p, i, &nodes[0], nspec, &r->args) || rank_env(c, &nodes[i], r) ||
            run_args(c, &nodes[i], r)) {
            buf_puts(err, "out of memory building the plan");
            deploy_free(p);
            return -1;
        }
    }
    return 0;
}

int deploy_env_text(const struct deploy_rank *r, struct buf *out)
{
    buf_puts(out, "# written by dsv41-top launch; mode 0600\n");
    for (int i = 0; i < r->env.n; i++)
        buf_printf(out, "%s\n", r->env.v[i]);
    return 0;
}

void deploy_free(struct deploy_plan *p)
{
    for (int i = 0; i < DEPLOY_MAX_NODES; i++) {
        strv_free(&p->ranks[i].run);
        strv_free(&p->ranks[i].args);
        strv_free(&p->ranks[i].env);
    }
}
