/* completion: what one OpenAI-compatible completion said, assembled from the
 * streamed chunks (or one non-streamed body): content, reasoning (vLLM's
 * `reasoning`, older `reasoning_content`), tool calls concatenated per index,
 * finish reason, usage, and a timestamp per chunk for TTFT/ITL. Pure. */
#ifndef DSV41_COMPLETION_H
#define DSV41_COMPLETION_H

#include <stdbool.h>

#include "buf.h"

#define COMPLETION_MAX_TOOLS 16

struct completion_tool {
    int index;
    char id[64];
    char name[128];
    struct buf args;
};

struct completion {
    struct buf content, reasoning;
    int ntools;
    struct completion_tool tools[COMPLETION_MAX_TOOLS];
    char finish[32];
    /* usage; -1 when the server sent none */
    long prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens;
    /* times in seconds on one clock; first = first chunk with choices */
    double t_start, t_first, t_last;
    int nchunks;
    double *chunk_t; /* arrival of each chunk with choices */
    int chunk_cap;
    bool done;       /* [DONE] seen */
    char error[512]; /* an error event, or why the stream is unusable */
};

void completion_init(struct completion *c, double t_start);
/* One SSE event's data at time t. Returns 1 after [DONE], 0 to go on, -1 for
 * a malformed chunk (c->error says which). */
int completion_event(struct completion *c, const char *data, size_t len, double t);
/* A non-streamed response body. */
int completion_body(struct completion *c, const char *body, double t);
void completion_free(struct completion *c);

#endif
