/* benchtab: bench results as a table for the console's jobs tab: the
 * reference figures (REFERENCE.md, historical image) beside the newest
 * runs found in a directory of bench JSON files (the shape bench writes and
 * the script-era bench wrote). */
#ifndef DSV41_BENCHTAB_H
#define DSV41_BENCHTAB_H

#include <stdbool.h>

#define BENCHTAB_RUNS 4
#define BENCHTAB_ROWS 24

struct benchtab {
    int nruns;
    char run[BENCHTAB_RUNS][40];      /* label and time, newest first */
    int nrows;
    struct {
        char name[40];                /* "prefill 8192", "decode C=1 code" */
        double ref;                   /* -1: no reference figure */
        double v[BENCHTAB_RUNS];      /* -1: not measured in that run */
    } row[BENCHTAB_ROWS];
};

/* Adds one run (the JSON text) as column `col`. -1 when it is not bench JSON. */
int benchtab_add(struct benchtab *t, int col, const char *json, const char *fallback_name);
/* The newest bench*.json files of dir, newest first. Returns the runs found. */
int benchtab_load(const char *dir, struct benchtab *t);

#endif
