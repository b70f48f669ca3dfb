/* Helpers shared by the unit tests: fixture paths and file loading. */
#ifndef DSV41_TEST_FIXTURE_H
#define DSV41_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "buf.h"

static inline const char *fixture_dir(void)
{
    const char *d = getenv("DSV41_FIXTURES");
    return d && *d ? d : "tests/fixtures";
}

/* Returns the fixture's text (caller frees with buf_free) or aborts. */
static inline struct buf fixture_load(const char *rel)
{
    struct buf path = BUF_INIT, b = BUF_INIT;
    buf_printf(&path, "%s/%s", fixture_dir(), rel);
    if (buf_read_file(&b, buf_str(&path), 1 << 24) < 0) {
        fprintf(stderr, "cannot read fixture %s\n", buf_str(&path));
        abort();
    }
    buf_free(&path);
    if (!b.data)
        buf_puts(&b, "");
    return b;
}

#endif
