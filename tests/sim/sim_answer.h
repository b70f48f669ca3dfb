/* What the simulated model answers: a few prompts it knows (arithmetic with
 * reasoning, the weather tool, the colours of an image), a story otherwise,
 * as a list of items streamed one per token. */
#ifndef DSV41_SIM_ANSWER_H
#define DSV41_SIM_ANSWER_H

#include <cjson/cJSON.h>
#include <stdbool.h>

enum sim_item_kind { ITEM_REASONING, ITEM_CONTENT, ITEM_TOOL_START, ITEM_TOOL_ARGS };

struct sim_item {
    enum sim_item_kind kind;
    char *text; /* ITEM_TOOL_START: the function name */
};

struct sim_answer {
    struct sim_item *items;
    int n, cap;
    const char *finish; /* "stop", "length", "tool_calls" */
    char tool_id[40];
    long reasoning_tokens;
};

/* Builds the answer for a request body; limit < 0 means no cap. */
int sim_answer_build(cJSON *req, bool chat, long limit, struct sim_answer *a);
void sim_answer_free(struct sim_answer *a);
/* The colours of the left and right halves of a PNG (for the vision check);
 * -1 when it is not a PNG the simulator can read. */
int sim_png_halves(const unsigned char *png, size_t len, const char **left, const char **right);

#endif
