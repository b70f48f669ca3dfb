/* accept: a candidate image measured beside the accepted one. The suite
 * (smoke, the six gates, the seed's bench table, output drift) runs against
 * whatever serves at the API and leaves its evidence in a folder; the
 * verdict compares a candidate's folder with the baseline's; the report is
 * that folder's report.md and report.json. Stopping, launching, promoting
 * and rolling back are the command's (src/cmd/accept_cmd.c): this module
 * changes no deployment.
 *
 * STATE_DIR/accept/ holds: accepted (the accepted image's reference, one
 * line), baseline/ (the evidence of the accepted image on this deployment),
 * and one folder per run, TIME-DIGEST12/. */
#ifndef DSV41_ACCEPT_H
#define DSV41_ACCEPT_H

#include <stdbool.h>
#include <stdio.h>

#include "benchtab.h"
#include "buf.h"
#include "config.h"
#include "outdrift.h"
#include "smoke.h"

/* NAME@sha256:<64 hex>; the digest's hex, lower case. */
struct accept_ref {
    char ref[400];
    char digest[72]; /* "sha256:..." */
};
/* 0, or -1 with the fix in err (a tag alone, a malformed digest). */
int accept_ref_parse(const char *s, struct accept_ref *r, struct buf *err);
/* Does a runtime's RepoDigests text (["name@sha256:..", ...]) hold digest? */
bool accept_digest_listed(const char *repo_digests, const char *digest);

struct accept_thresholds {
    double bench_tol; /* ACCEPT_BENCH_TOL, a fraction (0.05) */
    double top1;      /* ACCEPT_TOP1 */
    double kld;       /* ACCEPT_KLD, nats */
};

struct accept_suite_opts {
    const char *base, *key, *dir; /* the API, its key, the evidence folder */
    int gates_ctx;                /* the context gate's filler tokens */
    int timeout_s;                /* one request's limit */
};

/* What a suite measured, as the verdict reads it. */
struct accept_evidence {
    int smoke_passed, smoke_total;
    struct smoke_result smoke[SMOKE_CHECKS]; /* each check with its evidence */
    int gates_passed;
    bool bench_ok;  /* bench.json written with every figure */
    int drift_windows; /* measured */
    char vllm_version[64];
    char error[256]; /* why the suite stopped early, "" when it ran through */
};

/* Runs the suite against o->base, the evidence into o->dir (made):
 * smoke.txt, gates.json, bench.json, drift.tsv, meta; a line per step to
 * out. Stops between steps on an interrupt. */
int accept_suite(const struct accept_suite_opts *o, struct accept_evidence *ev, FILE *out);

struct accept_verdict {
    bool pass;
    char reasons[1024]; /* each failed check, "; " between */
    struct outdrift_report drift;
    bool drift_compared;
};

/* Judges the candidate's folder against the baseline's. */
void accept_judge(const char *base_dir, const char *cand_dir, const struct accept_evidence *ev,
                  const struct accept_thresholds *t, struct accept_verdict *v);

/* The report, both forms, into the candidate's folder. what: the action
 * taken ("promoted", "rolled back", "baseline recorded", ...). */
struct accept_report_in {
    const char *dir, *base_dir;
    const char *candidate, *baseline; /* image references */
    const char *node_digests;          /* "head sha256:..; worker sha256:.." */
    const char *config_hash;
    const struct accept_evidence *ev;
    const struct accept_verdict *v; /* NULL for a baseline record */
    const struct accept_thresholds *t;
    const char *what;
};
int accept_report(const struct accept_report_in *in, struct buf *err);

/* The baseline's bench.json (column 0) and the candidate's (column 1) as
 * one table, for the verdict and the report alike: bit 1 set when the
 * baseline's was read, bit 2 the candidate's. */
int accept_bench_pair(const char *base_dir, const char *cand_dir, struct benchtab *t);
/* DIR/NAME written whole (buf_write_file: 0600, renamed over); -1 with
 * errno kept and, when err is not NULL, the path in it. */
int accept_write(const char *dir, const char *name, const char *text, struct buf *err);

/* The history: one line per run folder, oldest first. */
int accept_list(const char *accept_dir, FILE *out);

/* STATE_DIR/accept/images.tsv: "IMAGE-ID<TAB>REFERENCE" for every image an
 * acceptance measured, so that a rank's container, which its runtime
 * reports by image id, can be named by its pinned reference. */
int accept_note_image(const char *accept_dir, const char *image_id, const char *ref);

/* What the console shows (local files, re-read by the caller now and then). */
struct accept_view {
    char accepted[400];  /* the accepted image's reference; "" none yet */
    int nimg;
    struct {
        char id[72]; /* without "sha256:" */
        char ref[400];
    } img[32];           /* the newest 32 of images.tsv */
    char last[200];      /* the newest run: "pass, promoted, 20261203-194800" or "" */
};
void accept_view_load(const char *accept_dir, struct accept_view *v);
/* A rank's image id named: its short digest (sha256:0123456789ab) and
 * whether it is the accepted image; "" with false when it is not known. */
void accept_view_name(const struct accept_view *v, const char *image_id, char *out, size_t sz,
                      bool *accepted);

#endif
