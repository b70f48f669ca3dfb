/* gates: the six acceptance gates of REFERENCE.md §4 (load, chat, reasoning,
 * tools, context, speed), each with its evidence (request, response excerpt,
 * token counts, timings, verdict) in a JSON file. All six must pass. */
#ifndef DSV41_GATES_H
#define DSV41_GATES_H

#include <stdio.h>

struct gates_opts {
    const char *base, *key, *out;
    int ctx_tokens; /* the context gate's prompt length */
    int timeout_s;
    double speed_window_s; /* 30 */
    double speed_min_tps;  /* 15 */
};

/* Returns the number of gates that passed (6 = all); prints a line each. */
int gates_run(const struct gates_opts *o, FILE *out);

#endif
