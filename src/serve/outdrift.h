/* outdrift: output drift between two images, teacher-forced. The 64 text
 * windows shipped in src/serve/drift_windows.txt (built into the program)
 * are each sent once to /v1/completions with vLLM's prompt_logprobs (20),
 * max_tokens 1 at temperature 0: the server scores every prompt token, so
 * two images are compared on exactly the same tokens, never on what each
 * chose to generate. Per position: top-1 agreement, and KL divergence
 * (baseline || candidate) over the top 20 with the rest of the mass as one
 * bucket; the mean over all positions with a bootstrap 95 % interval over
 * windows, as the seed's KLD panel reports it.
 *
 * The response's shape (vLLM, vllm/entrypoints/openai/completion/protocol.py
 * at 002032ee: CompletionResponseChoice.prompt_logprobs:
 * list[dict[int, Logprob] | None]; vllm/v1/engine/logprobs.py,
 * _make_logprob_dict: the prompt token's own entry, with its true rank, then
 * ranks 1..k): position 0 is null; keys are token ids as strings; an entry is
 * {"logprob", "rank", "decoded_token"}. Only ranks 1..20 are kept. */
#ifndef DSV41_OUTDRIFT_H
#define DSV41_OUTDRIFT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "buf.h"

#define OUTDRIFT_K 20
#define OUTDRIFT_WINDOWS_MAX 256

/* One prompt position: the top k, by rank (n 0: no logprobs there). */
struct outdrift_pos {
    int n;
    long id[OUTDRIFT_K];
    double lp[OUTDRIFT_K];
};

struct outdrift_window {
    char name[48];
    int npos;
    struct outdrift_pos *pos;
    char error[256]; /* why this window has no measurement; "" when it has one */
};

/* One image's measurement of every window. */
struct outdrift_set {
    char windows_sha[65]; /* of the windows text it measured */
    int n;
    struct outdrift_window w[OUTDRIFT_WINDOWS_MAX];
};

/* The shipped windows: count, and each one's name and text (NUL-ended). */
int outdrift_window_count(void);
const char *outdrift_window(int i, char name[48]);
/* The SHA-256 of the shipped windows' text, hex. */
void outdrift_windows_sha(char out[65]);

/* A /v1/completions body's choices[0].prompt_logprobs into w (its name kept).
 * -1 with a reason in w->error when malformed or absent. */
int outdrift_parse(const char *json, size_t len, struct outdrift_window *w);
/* Sends every window to base (key, model) one at a time, a line per window
 * to progress (may be NULL); stops early when *cancel. Returns the number
 * of windows measured. */
int outdrift_measure(const char *base, const char *key, const char *model, int timeout_s,
                     const atomic_int *cancel, struct outdrift_set *s, FILE *progress);
void outdrift_free(struct outdrift_set *s);

/* A set as text (a line per position: window, index, id:logprob ...) and back. */
int outdrift_save(const struct outdrift_set *s, const char *path, struct buf *err);
int outdrift_load(struct outdrift_set *s, const char *path, struct buf *err);

/* KL(p || q) over p's top k: the tokens both have, and one bucket for the
 * rest of each side's mass (floored at 1e-9, so a side that puts all its
 * mass on the shared tokens still gives a finite figure). */
double outdrift_kld(const struct outdrift_pos *p, const struct outdrift_pos *q);
/* The two top-1 tokens are the same. */
bool outdrift_top1_same(const struct outdrift_pos *p, const struct outdrift_pos *q);

struct outdrift_score {
    char name[48];
    int npos;         /* positions compared */
    double top1, kld; /* means; -1 when nothing was compared */
    char note[128];   /* why a window was not compared, or "" */
};

struct outdrift_report {
    int n; /* windows */
    struct outdrift_score win[OUTDRIFT_WINDOWS_MAX];
    struct outdrift_score all;
    double top1_lo, top1_hi, kld_lo, kld_hi; /* bootstrap 95 % over windows */
    int compared; /* windows with positions compared */
};

/* Compares the candidate with the baseline, window by window; -1 with err
 * when they measured different windows texts. */
int outdrift_compare(const struct outdrift_set *base, const struct outdrift_set *cand,
                     struct outdrift_report *r, struct buf *err);

#endif
