/* Golden tests of the deployment plan against REFERENCE.md §1: the defaults
 * flag by flag, then every override. The expected strings are written from
 * the reference, not from the code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deploy.h"

#define COMP_DEFAULT                                                                               \
    "{\"cudagraph_mode\":\"FULL_DECODE_ONLY\",\"custom_ops\":[\"all\"],"                           \
    "\"cudagraph_capture_sizes\":[1,2,3,4,5,6,7,8,12,16]}"
#define ENGRAM                                                                                     \
    "{\"cpu_offload\":false,\"table_memory\":\"disk\",\"disk_resident_scales\":false,"            \
    "\"disk_prefetch_max_tokens\":0,\"projection_tp\":false}"
#define SPEC(n, tp)                                                                                \
    "{\"method\":\"dspark\",\"num_speculative_tokens\":" n ",\"draft_tensor_parallel_size\":" tp \
    ",\"attention_backend\":\"B12X\",\"draft_sample_method\":\"greedy\","                         \
    "\"rejection_sample_method\":\"standard\",\"enable_adaptive_verification\":true}"

static const char *COMMON =
    "/model --served-model-name deepseek-v4.1-flash --dtype bfloat16 --tensor-parallel-size 2 "
    "--nnodes 2 --master-addr 10.10.10.13 --master-port 29655 --kv-cache-dtype fp8 --block-size "
    "256 --swa-block-size 128 --kv-cache-memory-bytes 2700000000 --gpu-memory-utilization 0.88 "
    "--max-model-len 262144 --max-num-seqs 2 --max-num-batched-tokens 2048 "
    "--max-cudagraph-capture-size 16 --compilation-config " COMP_DEFAULT
    " --enable-chunked-prefill --async-scheduling --enable-prefix-caching "
    "--safetensors-load-strategy lazy --engram-config " ENGRAM
    " --attention-backend B12X --linear-backend b12x --moe-backend b12x --speculative-config " SPEC(
        "7", "2") " --generation-config vllm --tokenizer-mode deepseek_v41 --limit-mm-per-prompt "
                  "{\"image\":1}";

#define ENV_FMT \
    "CUDA_VISIBLE_DEVICES=0 CUTE_DSL_ARCH=sm_121a HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 " \
    "VLLM_WORKER_MULTIPROC_METHOD=spawn VLLM_USE_V2_MODEL_RUNNER=1 VLLM_USE_BREAKABLE_CUDAGRAPH=0 " \
    "VLLM_USE_FLASHINFER_SAMPLER=1 VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 " \
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 OMP_NUM_THREADS=16 MALLOC_ARENA_MAX=2 " \
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True SAFETENSORS_FAST_GPU=1 " \
    "VLLM_ENABLE_PCIE_ALLREDUCE=0 NCCL_IB_DISABLE=0 NCCL_NET_PLUGIN=none NCCL_IB_GID_INDEX=%d " \
    "NCCL_IB_HCA=%s NCCL_IB_MERGE_NICS=1 NCCL_SOCKET_IFNAME=%s GLOO_SOCKET_IFNAME=%s " \
    "NCCL_DEBUG=WARN VLLM_ENABLE_ROCE_ALLREDUCE=1 VLLM_ROCE_ALLREDUCE_MAX_SIZE=2MB " \
    "VLLM_ROCE_ALLGATHER_MAX_SIZE=16MB B12X_ROCE_CACHE_DIR=/cache/b12x-roce " \
    "B12X_ROCE_TRAFFIC_CLASS=106 NCCL_IB_TC=106 B12X_COMPILE_CACHE_DIR=/cache/b12x " \
    "XDG_CACHE_HOME=/cache ST_EXL3_PLAN=/plans/%s ST_EXL3_PREFILL=st ST_EXL3_PREFILL_MIN_ROWS=1 " \
    "VLLM_HOST_IP=%s"

static struct deploy_node NODES[4] = {
    {"head", "enp1s0f0np0", "10.10.10.13", "rocep1s0f0,roceP2p1s0f0", 3, "/m/head", "/s/head", NULL},
    {"worker", "enP2p1s0f0np0", "10.10.10.11", "roceP2p1s0f0", 5, "/m/worker", "/s/worker", NULL},
    {"worker2", "enp1s0f0np0", "10.10.10.12", "rocep1s0f0", -1, "/m/w2", "/s/w2", NULL},
    {"worker3", "enp1s0f0np0", "10.10.10.14", "rocep1s0f0", 3, "/m/w3", "/s/w3", NULL},
};

static char *joined(const struct strv *v)
{
    struct buf b = BUF_INIT;
    for (int i = 0; i < v->n; i++)
        buf_printf(&b, "%s%s", i ? " " : "", v->v[i]);
    return b.data;
}

static void load(struct config *c, char **flags, int n)
{
    static const char *clear[] = {"KV_BYTES", "MAX_LEN", "MAX_SEQS", "NSPEC", "BATCH", "GPU_UTIL",
                                  "PORT", "MPORT", "IMG", "EXTRA", "GRAPH_MODE", "PLAN_NAME",
                                  "GPUS", "TP", "PP", "VLLM_CMD", "EXTRA_ENV", "RUNTIME",
                                  "ULIMITS", "LOG_MAX_SIZE", "LOG_MAX_FILES"};
    for (size_t i = 0; i < sizeof clear / sizeof *clear; i++)
        unsetenv(clear[i]);
    struct buf err = BUF_INIT;
    assert_int_equal(config_load(c, "/nonexistent/config", flags, n, &err), 0);
    buf_free(&err);
}

static void build(char **flags, int nflags, int nnodes, struct deploy_plan *p)
{
    struct config c;
    struct buf err = BUF_INIT;
    load(&c, flags, nflags);
    int rc = deploy_build(&c, NODES, nnodes, p, &err);
    if (rc)
        fprintf(stderr, "%s\n", buf_str(&err));
    assert_int_equal(rc, 0);
    config_free(&c);
    buf_free(&err);
}

static void capture_sizes(void **st)
{
    (void)st;
    int s[64];
    int n = deploy_capture_sizes(2, 7, s, 64);
    int want[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
    assert_int_equal(n, 10);
    assert_memory_equal(s, want, sizeof want);
    n = deploy_capture_sizes(4, 7, s, 64);
    int want4[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 28, 32};
    assert_int_equal(n, 14);
    assert_memory_equal(s, want4, sizeof want4);
    n = deploy_capture_sizes(1, 7, s, 64); /* CAP 8 */
    assert_int_equal(n, 8);
    n = deploy_capture_sizes(3, 2, s, 64); /* CAP 9: 1..3, then 3,7, plus 9 */
    int want3[] = {1, 2, 3, 7, 9};
    assert_int_equal(n, 5);
    assert_memory_equal(s, want3, sizeof want3);
}

static void defaults_rank1(void **st)
{
    (void)st;
    struct deploy_plan p;
    build(NULL, 0, 2, &p);
    char want[8192];
    snprintf(want, sizeof want, "%s --node-rank 1 --headless", COMMON);
    char *got = joined(&p.ranks[1].args);
    assert_string_equal(got, want);
    free(got);
    snprintf(want, sizeof want, ENV_FMT, 5, "roceP2p1s0f0", "enP2p1s0f0np0", "enP2p1s0f0np0",
             "J268-ho-v31-K5n.json", "10.10.10.11");
    got = joined(&p.ranks[1].env);
    assert_string_equal(got, want);
    free(got);
    assert_string_equal(p.ranks[1].container, "dsv41-r1");
    assert_string_equal(p.ranks[1].env_file, "/s/worker/dsv41-r1.env");
    deploy_free(&p);
}

static void defaults_rank0_and_run(void **st)
{
    (void)st;
    struct deploy_plan p;
    build(NULL, 0, 2, &p);
    char want[8192];
    const char *key_file = getenv("HOME");
    char kf[600];
    snprintf(kf, sizeof kf, "%s/.dsv41-two-sparks/api_key", key_file ? key_file : "");
    key_file = kf;
    snprintf(want, sizeof want,
             "%s --node-rank 0 --host 0.0.0.0 --port 8000 --reasoning-parser deepseek_v41 "
             "--tool-call-parser deepseek_v41 --enable-auto-tool-choice "
             "--enable-prompt-tokens-details --enable-force-include-usage",
             COMMON);
    char *got = joined(&p.ranks[0].args);
    assert_string_equal(got, want);
    free(got);
    snprintf(want, sizeof want, ENV_FMT, 3, "rocep1s0f0,roceP2p1s0f0", "enp1s0f0np0",
             "enp1s0f0np0", "J268-ho-v31-K5n.json", "10.10.10.13");
    got = joined(&p.ranks[0].env);
    assert_string_equal(got, want);
    free(got);
    snprintf(want, sizeof want,
             "run -d --name dsv41-r0 --label dsv41-top.managed=1 --label dsv41-top.rank=0 --gpus "
             "all --network host --ipc host --privileged --ulimit memlock=-1 --shm-size 32g "
             "--log-driver json-file --log-opt max-size=100m --log-opt max-file=5 -v "
             "/m/head:/model:ro -v /s/head/plans:/plans:ro -v /s/head/cache:/cache -v "
             "%s:/run/dsv41/api_key:ro --env-file /s/head/dsv41-r0.env -- "
             "ghcr.io/0xsero/deepseek-v4.1-flash-spark@sha256:"
             "5668e35e5ee021da4b9ce88a1964caf0e082e8ca01d81d1d64b6213a55c6add5 /bin/sh -c "
             DEPLOY_KEY_SCRIPT " dsv41-r0 vllm serve %s",
             key_file, got = joined(&p.ranks[0].args));
    free(got);
    got = joined(&p.ranks[0].run);
    assert_string_equal(got, want);
    free(got);
    /* the key file's path is in argv (and so in `docker inspect`), the key
     * never: not in argv, not in the env list, not in the env file */
    struct buf env = BUF_INIT;
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < p.ranks[r].run.n; i++)
            assert_null(strstr(p.ranks[r].run.v[i], "VLLM_API_KEY="));
        assert_null(strv_env_get(&p.ranks[r].env, "VLLM_API_KEY"));
        buf_reset(&env);
        deploy_env_text(&p.ranks[r], &env);
        assert_null(strstr(buf_str(&env), "API_KEY"));
    }
    buf_free(&env);
    /* only rank 0 gets the key */
    got = joined(&p.ranks[1].run);
    assert_null(strstr(got, "/run/dsv41"));
    assert_non_null(strstr(got, "-- ghcr.io/"));
    free(got);
    deploy_free(&p);
}

/* One override at a time: the flag it drives changes and nothing else. */
static void each_override(void **st)
{
    (void)st;
    struct {
        const char *set;
        const char *want; /* appears in rank 0's joined run line */
    } cases[] = {
        {"KV_BYTES=3100000000", "--kv-cache-memory-bytes 3100000000 "},
        {"MAX_LEN=131072", "--max-model-len 131072 "},
        {"BATCH=4096", "--max-num-batched-tokens 4096 "},
        {"GPU_UTIL=0.85", "--gpu-memory-utilization 0.85 "},
        {"PORT=8100", "--port 8100 "},
        {"MPORT=29700", "--master-port 29700 "},
        {"IMG=localhost/other@sha256:ab", " -- localhost/other@sha256:ab /bin/sh -c "},
        {"EXTRA=--max-log-len 100  --disable-log-requests",
         "--enable-force-include-usage --max-log-len 100 --disable-log-requests"},
        {"GRAPH_MODE=PIECEWISE", "\"cudagraph_mode\":\"PIECEWISE\""},
        {"MAX_SEQS=4", "--max-num-seqs 4 "},
        {"MAX_SEQS=4", "--max-cudagraph-capture-size 32 "},
        {"MAX_SEQS=4", "\"cudagraph_capture_sizes\":[1,2,3,4,5,6,7,8,12,16,20,24,28,32]"},
        {"NSPEC=3", "\"num_speculative_tokens\":3,"},
        {"NSPEC=3", "--max-cudagraph-capture-size 8 "},
        {"VLLM_CMD=/opt/serve --x", "dsv41-r0 /opt/serve --x /model "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *flags[] = {(char *)cases[i].set};
        struct deploy_plan p;
        build(flags, 1, 2, &p);
        char *got = joined(&p.ranks[0].run);
        if (!strstr(got, cases[i].want))
            fail_msg("%s: '%s' not in %s", cases[i].set, cases[i].want, got);
        free(got);
        deploy_free(&p);
    }
    /* env overrides */
    {
        char *ex[] = {"EXTRA_ENV=NCCL_DEBUG_SUBSYS=INIT FOO=bar"};
        struct deploy_plan q;
        build(ex, 1, 2, &q);
        assert_string_equal(strv_env_get(&q.ranks[1].env, "FOO"), "bar");
        assert_string_equal(q.ranks[1].env.v[q.ranks[1].env.n - 2], "NCCL_DEBUG_SUBSYS=INIT");
        deploy_free(&q);
    }
    /* quoted argument lists: each word one argument, the env file one line
     * per word with its blanks */
    {
        char *q[] = {"EXTRA=--override-generation-config '{\"temperature\": 0.6}' ''",
                     "EXTRA_ENV=A='two  words' \"B=it's\"", "VLLM_CMD='/opt/my serve' --x"};
        struct deploy_plan d;
        build(q, 3, 2, &d);
        const struct strv *a = &d.ranks[0].args;
        assert_string_equal(a->v[a->n - 3], "--override-generation-config");
        assert_string_equal(a->v[a->n - 2], "{\"temperature\": 0.6}");
        assert_string_equal(a->v[a->n - 1], "");
        assert_string_equal(d.ranks[1].args.v[d.ranks[1].args.n - 1], "--headless");
        const struct strv *run = &d.ranks[1].run;
        int k = 0;
        while (k < run->n && strcmp(run->v[k], "--") != 0)
            k++;
        assert_true(k + 3 < run->n);
        assert_string_equal(run->v[k + 2], "/opt/my serve");
        assert_string_equal(run->v[k + 3], "--x");
        for (int r = 0; r < 2; r++) {
            assert_string_equal(strv_env_get(&d.ranks[r].env, "A"), "two  words");
            assert_string_equal(strv_env_get(&d.ranks[r].env, "B"), "it's");
            struct buf text = BUF_INIT;
            deploy_env_text(&d.ranks[r], &text);
            assert_non_null(strstr(buf_str(&text), "\nA=two  words\nB=it's\n"));
            buf_free(&text);
        }
        deploy_free(&d);
    }
    {
        char *pod[] = {"RUNTIME=podman"};
        struct deploy_plan q;
        build(pod, 1, 2, &q);
        char *line = joined(&q.ranks[0].run);
        assert_null(strstr(line, "--shm-size"));
        /* podman 4's k8s-file has no max-file: conmon cuts its one file */
        assert_non_null(strstr(line, "--ipc host --privileged --ulimit memlock=-1 --log-driver "
                                     "k8s-file --log-opt max-size=100m -v "));
        assert_null(strstr(line, "max-file"));
        free(line);
        deploy_free(&q);
    }
    {
        char *logs[] = {"LOG_MAX_SIZE=20k", "LOG_MAX_FILES=2"};
        struct deploy_plan q;
        build(logs, 2, 2, &q);
        for (int r = 0; r < 2; r++) {
            char *line = joined(&q.ranks[r].run);
            assert_non_null(strstr(line, " --log-driver json-file --log-opt max-size=20k "
                                         "--log-opt max-file=2 -v "));
            free(line);
        }
        deploy_free(&q);
    }
    {
        /* empty: the runtime's own log settings, no option of ours */
        char *logs[] = {"LOG_MAX_SIZE="};
        struct deploy_plan q;
        build(logs, 1, 2, &q);
        char *line = joined(&q.ranks[0].run);
        assert_null(strstr(line, "--log-"));
        free(line);
        deploy_free(&q);
    }
    {
        char *lim[] = {"ULIMITS="};
        struct deploy_plan q;
        build(lim, 1, 2, &q);
        char *line = joined(&q.ranks[0].run);
        assert_null(strstr(line, "--ulimit"));
        free(line);
        deploy_free(&q);
    }
    char *flags[] = {"PLAN_NAME=other.json", "GPUS="};
    struct deploy_plan p;
    build(flags, 2, 2, &p);
    assert_string_equal(strv_env_get(&p.ranks[1].env, "ST_EXL3_PLAN"), "/plans/other.json");
    char *got = joined(&p.ranks[0].run);
    assert_null(strstr(got, "--gpus"));
    free(got);
    deploy_free(&p);
}

static void more_nodes(void **st)
{
    (void)st;
    struct deploy_plan p;
    build(NULL, 0, 3, &p);
    assert_int_equal(p.tp, 3);
    char *got = joined(&p.ranks[2].args);
    assert_non_null(strstr(got, "--tensor-parallel-size 3 --nnodes 3 --master-addr 10.10.10.13 "));
    assert_non_null(strstr(got, "\"draft_tensor_parallel_size\":3,"));
    assert_non_null(strstr(got, "--node-rank 2 --headless"));
    free(got);
    /* no GID detected on worker2: the measured 3, flagged */
    assert_true(p.ranks[2].gid_guessed);
    assert_string_equal(strv_env_get(&p.ranks[2].env, "NCCL_IB_GID_INDEX"), "3");
    assert_string_equal(strv_env_get(&p.ranks[2].env, "VLLM_HOST_IP"), "10.10.10.12");
    deploy_free(&p);
    char *flags[] = {"TP=2", "PP=2"};
    build(flags, 2, 4, &p);
    got = joined(&p.ranks[3].args);
    assert_non_null(strstr(got, "--tensor-parallel-size 2 --pipeline-parallel-size 2 --nnodes 4"));
    free(got);
    deploy_free(&p);
}

static void refused(void **st)
{
    (void)st;
    struct {
        const char *set;
        int nodes;
        const char *why;
    } cases[] = {
        /* values of a bad form never load (test_config); what is left is
         * what only the plan can judge */
        {"TP=3", 2, "TP=3 x PP=1 must equal the number of nodes (2)"},
        {"PP=2", 3, "TP=3 x PP=2 must equal the number of nodes (3)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct config c;
        char *flags[] = {(char *)cases[i].set};
        load(&c, flags, 1);
        struct deploy_plan p;
        struct buf err = BUF_INIT;
        assert_int_equal(deploy_build(&c, NODES, cases[i].nodes, &p, &err), -1);
        if (!strstr(buf_str(&err), cases[i].why))
            fail_msg("%s: got '%s'", cases[i].set, buf_str(&err));
        buf_free(&err);
        config_free(&c);
    }
    struct config c;
    load(&c, NULL, 0);
    /* a word list that did not come through config_load's check (a caller
     * that sets values itself) still fails with the setting and the column */
    for (int i = 0; i < c.count; i++)
        if (strcmp(c.values[i].key, "EXTRA_ENV") == 0) {
            free(c.values[i].value);
            c.values[i].value = strdup("A=1 'B=2");
        }
    struct deploy_plan q;
    struct buf why = BUF_INIT;
    assert_int_equal(deploy_build(&c, NODES, 2, &q, &why), -1);
    assert_string_equal(buf_str(&why), "EXTRA_ENV: column 5: the ' there is never closed (a ' "
                                       "inside '...' cannot be escaped: write '\\'' for it)");
    buf_free(&why);
    config_free(&c);
    load(&c, NULL, 0);
    struct deploy_node bad[2] = {NODES[0], NODES[1]};
    bad[1].ipv4 = "";
    struct deploy_plan p;
    struct buf err = BUF_INIT;
    assert_int_equal(deploy_build(&c, bad, 2, &p, &err), -1);
    assert_non_null(strstr(buf_str(&err), "worker: no fabric address"));
    buf_free(&err);
    config_free(&c);
}

/* A dry run's node that could not be asked: the plan is still built, its
 * facts read as the reason they are unknown, nothing made up (no GID 3), and
 * the plan says it must not run. */
static void unknown_node(void **st)
{
    (void)st;
    struct config c;
    load(&c, NULL, 0);
    struct deploy_node nodes[2] = {NODES[0], NODES[1]};
    const char *why = "unknown (worker unreachable)";
    nodes[1] = (struct deploy_node){"worker", "", "", "", -1, "/m/worker", "/s/worker", why};
    struct deploy_plan p;
    struct buf err = BUF_INIT;
    assert_int_equal(deploy_build(&c, nodes, 2, &p, &err), 0);
    assert_true(p.incomplete);
    const struct strv *env = &p.ranks[1].env;
    assert_string_equal(strv_env_get(env, "VLLM_HOST_IP"), why);
    assert_string_equal(strv_env_get(env, "NCCL_IB_GID_INDEX"), why);
    assert_string_equal(strv_env_get(env, "NCCL_IB_HCA"), why);
    assert_string_equal(strv_env_get(env, "NCCL_SOCKET_IFNAME"), why);
    assert_false(p.ranks[1].gid_guessed);
    /* the known node keeps its facts; the unknown one's mounts are as given */
    assert_string_equal(strv_env_get(&p.ranks[0].env, "VLLM_HOST_IP"), "10.10.10.13");
    assert_string_equal(strv_env_get(&p.ranks[0].env, "NCCL_IB_GID_INDEX"), "3");
    char *run = joined(&p.ranks[1].run);
    assert_non_null(strstr(run, "-v /m/worker:/model:ro -v /s/worker/plans:/plans:ro"));
    assert_non_null(strstr(run, "--master-addr 10.10.10.13 "));
    free(run);
    deploy_free(&p);
    /* the head unknown: every rank's master address says so */
    nodes[0] = (struct deploy_node){"head", "", "", "", -1, "/m/head", "/s/head",
                                    "unknown (no fabric port on head)"};
    nodes[1] = NODES[1];
    assert_int_equal(deploy_build(&c, nodes, 2, &p, &err), 0);
    assert_true(p.incomplete);
    run = joined(&p.ranks[1].args);
    assert_non_null(strstr(run, "--master-addr unknown (no fabric port on head) "));
    free(run);
    assert_string_equal(strv_env_get(&p.ranks[1].env, "VLLM_HOST_IP"), "10.10.10.11");
    deploy_free(&p);
    /* every node known: a plan to run */
    assert_int_equal(deploy_build(&c, NODES, 2, &p, &err), 0);
    assert_false(p.incomplete);
    deploy_free(&p);
    buf_free(&err);
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capture_sizes),  cmocka_unit_test(defaults_rank1),
        cmocka_unit_test(defaults_rank0_and_run), cmocka_unit_test(each_override),
        cmocka_unit_test(more_nodes),     cmocka_unit_test(refused),
        cmocka_unit_test(unknown_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
