/* wedge: is the engine wedged? A dead peer rank leaves rank 0 answering
 * /health while no request makes progress, so the only sign is in the
 * metrics: requests running and the generation counter standing still.
 * One rule for every reader (status's one-shot wait, the console's
 * collector): fed successive scrapes, it says wedged once requests have run
 * with no new token for the limit plus a prefill allowance - a prompt that
 * just arrived may take a while before its first token, counted at a
 * conservative 500 prompt tok/s. Pure: time is passed in. */
#ifndef DSV41_WEDGE_H
#define DSV41_WEDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "metrics.h"

#define WEDGE_PREFILL_TPS 500.0

struct wedge {
    bool have_prev;
    struct pval prev_prompt, prev_gen;
    double moved_t; /* when tokens last moved, or the server was idle */
    double allow_s; /* prefill allowance for prompts since then */
};

#define WEDGE_INIT {0}

/* A scrape taken at now (seconds). limit_s <= 0 turns the rule off.
 * Returns true and writes the reason into why when the engine is wedged. */
bool wedge_feed(struct wedge *w, const struct metrics *m, double now, double limit_s, char *why,
                size_t n);
/* A failed scrape: the next one starts afresh. */
void wedge_reset(struct wedge *w);
/* Seconds the rule waits now before it could say wedged (limit plus the
 * prefill allowance so far). */
double wedge_window(const struct wedge *w, double limit_s);

#endif
