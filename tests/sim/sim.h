/* dsv41-sim: a stand-in for one vLLM rank (and later the Hugging Face hub),
 * so launch, status, smoke and the console can be tested without Sparks. It
 * takes the arguments launch gives vLLM and rejects inconsistent ones. */
#ifndef DSV41_SIM_H
#define DSV41_SIM_H

#include <stdbool.h>

struct sim_opts {
    const char *model_path;
    const char *served_name;
    int tp, pp, nnodes, node_rank;
    bool headless;
    const char *master_addr;
    int master_port;
    const char *host;
    int port;
    long max_model_len;
    int max_num_seqs;
    long max_batched;    /* --max-num-batched-tokens: a prefill's chunk */
    long block_size;     /* --block-size: tokens a KV block holds */
    const char *api_key; /* from VLLM_API_KEY or --api-key */
    bool force_usage;    /* --enable-force-include-usage: usage on every chunk */
    /* simulator knobs, from the environment so launch's argv stays vLLM's */
    int boot_ms;         /* DSV41_SIM_BOOT_MS: spread over the startup lines */
    double prefill_tps;  /* DSV41_SIM_PREFILL_TPS */
    double decode_tps;   /* DSV41_SIM_DECODE_TPS */
    int join_timeout_ms; /* DSV41_SIM_JOIN_TIMEOUT_MS */
};

/* Returns 0, or -1 after printing what is wrong, like vLLM's argparse. */
int sim_parse_args(int argc, char **argv, struct sim_opts *o);
/* The KV cache the simulated rank logs at boot ("GPU KV cache size"), the
 * measured deployment's pool. */
#define SIM_KV_POOL_TOKENS 2023717L
/* Serves HTTP until *stop; returns -1 when the port cannot be bound. */
int sim_http_serve(const struct sim_opts *o, volatile int *stop, volatile int *peer_lost);
/* Rough token count of a text (4 bytes a token, at least 1). */
long sim_count_tokens(const char *s);
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Test chatter after boot (DSV41_SIM_LOG_FILE, DSV41_SIM_LOG_RATE). */
void sim_chatter_start(volatile int *stop);

#endif
