/* smoke: the one-key check before handing the box to users. Three requests,
 * no output caps: text ("What is 17 * 23?" -> 391), a tool call (get_weather
 * for Warsaw), vision (a generated PNG, left half red, right half blue; the
 * answer names red before blue). PASS/FAIL per check with the evidence. */
#ifndef DSV41_SMOKE_H
#define DSV41_SMOKE_H

#include <stdbool.h>
#include <stdio.h>

#include "completion.h"

#define SMOKE_CHECKS 3

struct smoke_result {
    const char *name;
    bool pass;
    char evidence[600];
};

/* The request body of check i (0 text, 1 tool, 2 vision); caller frees. */
char *smoke_request(int i);
/* Judges check i on what came back (error: transport/server error or ""). */
void smoke_judge(int i, const struct completion *c, const char *error, struct smoke_result *r);
/* Runs the three checks against base with key; prints a line per check to
 * out. Returns the number that passed. */
int smoke_run(const char *base, const char *key, int timeout_ms, FILE *out,
              struct smoke_result res[SMOKE_CHECKS]);

#endif
