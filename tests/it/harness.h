/* Shared by the test and bench programs that hold a cluster in-process:
 * configuration from the environment, libraries initialised, cluster open. */
#ifndef DSV41_TEST_HARNESS_H
#define DSV41_TEST_HARNESS_H

#include <stdio.h>

#include "api.h"
#include "cluster.h"

/* Exits with status 2 and the reason on failure. */
static inline void harness_open(struct config *c, struct cluster *cl)
{
    struct buf err = BUF_INIT;
    if (config_load(c, NULL, NULL, 0, &err) < 0 || ssh_global_init() < 0 ||
        api_global_init() < 0 || cluster_open(c, cl, &err) < 0) {
        fprintf(stderr, "harness: %s\n", buf_str(&err));
        exit(2);
    }
    buf_free(&err);
}

#endif
