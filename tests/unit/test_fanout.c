/* fanout: every node's job runs at once, their output comes out in node
 * order whatever order they finish in, and the failures are counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fanout.h"

struct ctx {
    atomic_int inside, most; /* jobs running now, and at most */
};

/* Node i waits longer the lower its index: the last finishes first. */
static int job(int i, FILE *out, void *vctx)
{
    struct ctx *c = vctx;
    int now = atomic_fetch_add(&c->inside, 1) + 1;
    int m = atomic_load(&c->most);
    while (now > m && !atomic_compare_exchange_weak(&c->most, &m, now))
        ;
    fprintf(out, "node %d begins\n", i);
    /* long enough that all have started before the first ends, on a loaded machine too */
    struct timespec ts = {0, (long)(4 - i) * 100000000L};
    nanosleep(&ts, NULL);
    fprintf(out, "node %d ends\n", i);
    atomic_fetch_sub(&c->inside, 1);
    return i % 2; /* the odd ones fail */
}

static void output_in_node_order(void **st)
{
    (void)st;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    struct ctx c = {0, 0};
    int bad = fanout_run(4, job, &c, out);
    fclose(out);
    assert_int_equal(bad, 2);
    assert_string_equal(text, "node 0 begins\nnode 0 ends\nnode 1 begins\nnode 1 ends\n"
                              "node 2 begins\nnode 2 ends\nnode 3 begins\nnode 3 ends\n");
    assert_true(atomic_load(&c.most) >= 2); /* they overlapped */
    free(text);
}

static void none_is_nothing(void **st)
{
    (void)st;
    struct ctx c = {0, 0};
    assert_int_equal(fanout_run(0, job, &c, stdout), 0);
    assert_int_equal(atomic_load(&c.most), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(output_in_node_order),
        cmocka_unit_test(none_is_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
