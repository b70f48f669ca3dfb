/* config_keys: every setting's name, once, in the order the docs list them:
 * the enum the typed getters take (config.h), so a misspelled or removed
 * setting is a compile error. A setting is added here and to config.c's
 * KEYS table (its default, help and kind), which is indexed by this enum;
 * tests/unit/test_config.c checks that the two name each setting alike. */
#ifndef DSV41_CONFIG_KEYS_H
#define DSV41_CONFIG_KEYS_H

#define CONFIG_KEYS(X) \
    X(WORKER) \
    X(MODEL_DIR) \
    X(WORKER_MODEL_DIR) \
    X(STATE_DIR) \
    X(HEAD_IP) \
    X(WORKER_IP) \
    X(HEAD_IFNAME) \
    X(WORKER_IFNAME) \
    X(HEAD_HCAS) \
    X(WORKER_HCAS) \
    X(PORT) \
    X(MPORT) \
    X(IMG) \
    X(ACCEPT_BENCH_TOL) \
    X(ACCEPT_TOP1) \
    X(ACCEPT_KLD) \
    X(CANDIDATE_IMG) \
    X(API_KEY_FILE) \
    X(API_URL) \
    X(MEMGUARD_GIB) \
    X(MEMGUARD_WARN_GIB) \
    X(MEMGUARD_PSI_WARN) \
    X(MEMGUARD_PSI_KILL) \
    X(MEMGUARD_FRAG_WARN) \
    X(MEMGUARD_KMSG_WARN) \
    X(KV_BYTES) \
    X(WEIGHTS_GIB) \
    X(MAX_LEN) \
    X(MAX_SEQS) \
    X(NSPEC) \
    X(BATCH) \
    X(GPU_UTIL) \
    X(GRAPH_MODE) \
    X(PLAN_NAME) \
    X(EXTRA) \
    X(EXTRA_ENV) \
    X(TP) \
    X(PP) \
    X(WORKERS) \
    X(VLLM_CMD) \
    X(WEDGE_SECONDS) \
    X(PROBE_IDLE_S) \
    X(PROBE_DEADLINE_S) \
    X(EXPORTER_LISTEN) \
    X(EXPORTER_TOKEN_FILE) \
    X(ALERT_WEBHOOK) \
    X(ALERT_FORMAT) \
    X(ALERT_CMD) \
    X(ALERT_RATE) \
    X(SUPERVISE) \
    X(SUPERVISE_MAX) \
    X(SUPERVISE_AFTER_GUARD) \
    X(SUPERVISE_BACKOFF_S) \
    X(READY_TIMEOUT) \
    X(STOP_TIMEOUT) \
    X(LOG_MAX_SIZE) \
    X(LOG_MAX_FILES) \
    X(WORKER_STATE_DIR) \
    X(HF_REPO) \
    X(REVISION) \
    X(KEEP_PARTS) \
    X(DOWNLOAD_TO_WORKERS) \
    X(HF_TOKEN) \
    X(HF_TOKEN_PATH) \
    X(HF_ENDPOINT) \
    X(HF_STALL_S) \
    X(DSV41_API_KEY) \
    X(RUNTIME) \
    X(RUNTIME_SOCKET) \
    X(WORKER_RUNTIME_SOCKET) \
    X(GPUS) \
    X(ULIMITS) \
    X(SSH_KNOWN_HOSTS) \
    X(SSH_CONFIG) \
    X(SSH_TIMEOUT) \
    X(DSV41_PROC_ROOT) \
    X(DSV41_SYS_ROOT) \
    X(WORKER_PROC_ROOT) \
    X(WORKER_SYS_ROOT) \
    X(UNIT_DIR)

enum config_id {
#define CONFIG_ID(name) CFG_##name,
    CONFIG_KEYS(CONFIG_ID)
#undef CONFIG_ID
    CFG_COUNT
};

#endif
