/* benchhist: every bench run of this deployment kept, with what it ran on:
 * STATE_DIR/bench/history.jsonl, a JSON line per run (time, label, image,
 * its digest, vLLM's version, the configuration's hash, each figure). The
 * baseline an acceptance recorded is STATE_DIR/bench/baseline.json (the
 * same shape): a newer run of the same configuration more than
 * ACCEPT_BENCH_TOL below it is a regression, which status, watch and the
 * console show as a warning. Runs of another configuration are never
 * compared: a different MAX_SEQS is not a slower image. */
#ifndef DSV41_BENCHHIST_H
#define DSV41_BENCHHIST_H

#include <stdbool.h>
#include <stdio.h>

#include "benchtab.h"
#include "buf.h"

#define BENCHHIST_MAX 64
/* The label of a candidate's bench during accept: kept, but never the run a
 * regression is judged on (the deployment went back to the baseline). */
#define BENCHHIST_CANDIDATE "candidate"

struct benchhist_rec {
    char time[24];     /* local, YYYY-mm-dd HH:MM:SS */
    char label[40];
    char image[200];   /* IMG as set */
    char digest[20];   /* "sha256:" and 12 hex, or "unpinned" */
    char vllm[40];     /* the server's /version, or n/a */
    char hash[17];     /* config_hash */
    int n;
    char name[BENCHTAB_ROWS][40];
    double v[BENCHTAB_ROWS];
};

struct benchhist {
    int n; /* oldest first */
    struct benchhist_rec r[BENCHHIST_MAX];
};

/* Fills a record's figures from a bench JSON document (the shape bench
 * writes); -1 when it is not one. The meta fields are the caller's. */
int benchhist_figures(struct benchhist_rec *r, const char *bench_json);
/* A run of this deployment recorded: r filled (now, label, IMG and its
 * digest, vLLM's /version at base, config_hash) with the figures of the
 * bench JSON at bench_path, and appended to the history. */
struct config;
int benchhist_record(const struct config *c, const char *base, const char *key, const char *label,
                     const char *bench_path, struct benchhist_rec *r, struct buf *err);
/* Appends r to STATE_DIR/bench/history.jsonl (made 0700/0600). */
int benchhist_append(const char *state_dir, const struct benchhist_rec *r, struct buf *err);
/* Writes r as the accepted baseline (STATE_DIR/bench/baseline.json). */
int benchhist_set_baseline(const char *state_dir, const struct benchhist_rec *r,
                           struct buf *err);
/* The newest BENCHHIST_MAX runs; a line that is not a record is skipped. */
int benchhist_load(const char *state_dir, struct benchhist *h);
/* The baseline; -1 when there is none. */
int benchhist_baseline(const char *state_dir, struct benchhist_rec *r);
/* A figure by name; -1 when the run did not measure it. */
double benchhist_figure(const struct benchhist_rec *r, const char *name);
/* The history as a table: a row per run, a column per main figure. */
void benchhist_print(const struct benchhist *h, FILE *out);
/* The newest run of configuration hash (a candidate's excepted) against
 * the baseline of the same hash: 1 with why filled when a figure is more than tol (a fraction)
 * below; 0 when none is; -1 when there is nothing to compare. */
int benchhist_regression(const char *state_dir, const char *hash, double tol, char *why,
                         size_t sz);

#endif
