/* phase: where a rank is in vLLM's startup, read from its log lines, and
 * which lines mean it has failed (REFERENCE.md §3). Pure. */
#ifndef DSV41_PHASE_H
#define DSV41_PHASE_H

#include <stdbool.h>
#include <stddef.h>

enum phase {
    PHASE_NONE,
    PHASE_STARTING,   /* vLLM API server version */
    PHASE_LOADING,    /* Loading safetensors checkpoint shards */
    PHASE_LOADED,     /* Loading weights took / Model loading took */
    PHASE_COMPILING,  /* torch.compile takes */
    PHASE_KV_CACHE,   /* Available KV cache memory / GPU KV cache size */
    PHASE_GRAPHS,     /* Capturing CUDA graphs */
    PHASE_ENGINE,     /* Graph capturing finished / init engine ... took */
    PHASE_SERVER,     /* Starting vLLM (API )?server */
    PHASE_READY,      /* Application startup complete. */
};

struct phase_state {
    enum phase phase;
    char detail[160];   /* the line that set the phase, cleaned */
    bool failed;
    char fatal[256];    /* the first fatal line */
    long kv_tokens;     /* from "GPU KV cache size: N tokens"; -1 until seen */
    double weights_gib; /* "Model loading took X GiB memory"; -1 until seen */
    double graphs_gib;  /* "Graph capturing finished in N secs, took X GiB"; -1 until seen */
};

void phase_init(struct phase_state *st);
/* Feeds one log line (tqdm redraws with '\r': the last redraw counts). */
void phase_feed(struct phase_state *st, const char *line, size_t len);
const char *phase_name(enum phase p);
/* The fatal marker the line carries, or NULL. */
const char *phase_fatal_marker(const char *line, size_t len);

#endif
