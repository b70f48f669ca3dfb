/* Output drift: vLLM's prompt_logprobs read (tests/fixtures/logprobs: the
 * shape of vllm/entrypoints/openai/completion/protocol.py and
 * vllm/v1/engine/logprobs.py), the KLD with its tail bucket, top-1
 * agreement, the comparison and its bootstrap interval, and the saved form
 * read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "outdrift.h"

static void reads_vllms_shape(void **state)
{
    (void)state;
    struct buf b = fixture_load("logprobs/vllm-completion.json");
    struct outdrift_window w = {.name = "w"};
    assert_int_equal(outdrift_parse(b.data, b.len, &w), 0);
    assert_int_equal(w.npos, 4);
    assert_int_equal(w.pos[0].n, 0); /* the first token has no logprob */
    /* the prompt token's own entry of rank 41 is not in the top k */
    assert_int_equal(w.pos[1].n, 2);
    assert_int_equal(w.pos[1].id[0], 271);
    assert_true(fabs(w.pos[1].lp[1] + 1.5625) < 1e-12);
    assert_int_equal(w.pos[3].id[0], 42);
    free(w.pos);
    buf_free(&b);
}

static void refuses_what_is_no_distribution(void **state)
{
    (void)state;
    const char *bad[] = {
        "<html>502 Bad Gateway</html>",
        "{\"choices\":[{\"text\":\"x\"}]}", /* no prompt_logprobs: not vLLM, or not asked */
        "{\"choices\":[{\"prompt_logprobs\":[null,{\"x\":{\"logprob\":-1,\"rank\":1}}]}]}",
        "{\"choices\":[{\"prompt_logprobs\":[null,{\"5\":{\"logprob\":3,\"rank\":1}}]}]}",
        "{\"choices\":[{\"prompt_logprobs\":[null,{\"5\":{\"logprob\":-1,\"rank\":0.5}}]}]}",
        "{\"choices\":[{\"prompt_logprobs\":[null,7]}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct outdrift_window w = {.name = "w"};
        assert_int_equal(outdrift_parse(bad[i], strlen(bad[i]), &w), -1);
        assert_true(w.error[0] != '\0');
        assert_null(w.pos);
    }
}

static struct outdrift_pos dist(int n, const long *id, const double *p)
{
    struct outdrift_pos d = {.n = n};
    for (int i = 0; i < n; i++) {
        d.id[i] = id[i];
        d.lp[i] = log(p[i]);
    }
    return d;
}

static void kld_by_hand(void **state)
{
    (void)state;
    long ids[] = {1, 2, 3};
    struct outdrift_pos p = dist(3, ids, (double[]){0.5, 0.3, 0.1});
    assert_true(outdrift_kld(&p, &p) < 1e-12);
    assert_true(outdrift_top1_same(&p, &p));
    /* the same tokens, other mass: buckets 1,2,3 and the tail (0.1 | 0.1) */
    long swapped[] = {2, 1, 3}; /* by rank, as parse leaves them */
    struct outdrift_pos q = dist(3, swapped, (double[]){0.5, 0.3, 0.1});
    double want = 0.5 * log(0.5 / 0.3) + 0.3 * log(0.3 / 0.5);
    assert_true(fabs(outdrift_kld(&p, &q) - want) < 1e-9);
    assert_false(outdrift_top1_same(&p, &q));
    /* a token q does not list goes to the tail on both sides */
    long other[] = {1, 2, 9};
    struct outdrift_pos r = dist(3, other, (double[]){0.5, 0.3, 0.15});
    want = 0.2 * log(0.2 / 0.2); /* shared 1,2 identical; tails 0.2 and 0.2 */
    assert_true(fabs(outdrift_kld(&p, &r) - want) < 1e-9);
}

/* A set of n windows whose every position is the distribution d. */
static void fill(struct outdrift_set *s, int n, int npos, const struct outdrift_pos *d,
                 const struct outdrift_pos *odd, int odd_window)
{
    memset(s, 0, sizeof *s);
    snprintf(s->windows_sha, sizeof s->windows_sha, "%064d", 0);
    s->n = n;
    for (int i = 0; i < n; i++) {
        snprintf(s->w[i].name, sizeof s->w[i].name, "w%02d", i);
        s->w[i].npos = npos;
        s->w[i].pos = calloc((size_t)npos, sizeof *s->w[i].pos);
        for (int p = 1; p < npos; p++)
            s->w[i].pos[p] = i == odd_window && odd ? *odd : *d;
    }
}

static void compares_and_bootstraps(void **state)
{
    (void)state;
    long ids[] = {1, 2, 3};
    struct outdrift_pos p = dist(3, ids, (double[]){0.5, 0.3, 0.1});
    long swapped[] = {2, 1, 3};
    struct outdrift_pos q = dist(3, swapped, (double[]){0.5, 0.3, 0.1});
    static struct outdrift_set a, b;
    fill(&a, 8, 11, &p, NULL, -1);
    fill(&b, 8, 11, &p, &q, 3); /* one window of eight drifted */
    struct outdrift_report r;
    struct buf err = BUF_INIT;
    assert_int_equal(outdrift_compare(&a, &b, &r, &err), 0);
    assert_int_equal(r.compared, 8);
    assert_int_equal(r.all.npos, 80);
    assert_true(fabs(r.all.top1 - 70.0 / 80) < 1e-12);
    assert_true(r.win[3].top1 == 0 && r.win[0].top1 == 1);
    assert_true(r.top1_lo <= r.all.top1 && r.all.top1 <= r.top1_hi);
    assert_true(r.top1_lo < r.top1_hi); /* one odd window makes the interval wide */
    assert_true(r.kld_lo >= 0 && r.kld_lo <= r.all.kld && r.all.kld <= r.kld_hi);
    /* the saved form reads back to the same comparison */
    char path[] = "/tmp/outdrift-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(outdrift_save(&b, path, &err), 0);
    static struct outdrift_set c;
    assert_int_equal(outdrift_load(&c, path, &err), 0);
    struct outdrift_report r2;
    assert_int_equal(outdrift_compare(&a, &c, &r2, &err), 0);
    assert_true(fabs(r2.all.kld - r.all.kld) < 1e-7 && r2.all.top1 == r.all.top1);
    /* an answer thinner than the baseline's (fewer entries) is no measurement:
     * its buckets would make the KLD small */
    struct outdrift_pos thin = dist(1, ids, (double[]){0.5});
    static struct outdrift_set d;
    fill(&d, 8, 11, &p, &thin, 5);
    struct outdrift_report r3;
    assert_int_equal(outdrift_compare(&a, &d, &r3, &err), 0);
    assert_int_equal(r3.compared, 7);
    assert_true(r3.win[5].top1 < 0 && strstr(r3.win[5].note, "1 entries, the baseline 3"));
    outdrift_free(&d);
    /* a measurement of other windows is never compared */
    c.windows_sha[0] = 'f';
    assert_int_equal(outdrift_compare(&a, &c, &r2, &err), -1);
    assert_non_null(strstr(buf_str(&err), "accept --baseline"));
    /* a damaged file is refused with its line */
    FILE *f = fopen(path, "a");
    fputs("w01\t3\t1:x\n", f);
    fclose(f);
    buf_reset(&err);
    outdrift_free(&c);
    assert_int_equal(outdrift_load(&c, path, &err), -1);
    assert_non_null(strstr(buf_str(&err), path));
    unlink(path);
    outdrift_free(&a);
    outdrift_free(&b);
    buf_free(&err);
}

static void the_shipped_windows(void **state)
{
    (void)state;
    assert_int_equal(outdrift_window_count(), 64);
    char name[48], sha[65], sha2[65];
    char *t = (char *)outdrift_window(0, name);
    assert_string_equal(name, "prose-01");
    assert_true(strlen(t) > 1000 && strstr(t, "=== ") == NULL);
    free(t);
    t = (char *)outdrift_window(63, name);
    assert_string_equal(name, "reasoning-08");
    assert_true(t[strlen(t) - 1] != '\n');
    free(t);
    assert_null(outdrift_window(64, name));
    outdrift_windows_sha(sha);
    outdrift_windows_sha(sha2);
    assert_int_equal(strlen(sha), 64);
    assert_string_equal(sha, sha2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_vllms_shape), cmocka_unit_test(refuses_what_is_no_distribution),
        cmocka_unit_test(kld_by_hand),       cmocka_unit_test(compares_and_bootstraps),
        cmocka_unit_test(the_shipped_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
