/* Helpers shared by the unit tests: fixture paths and file loading, and
 * the engine's log frames built by hand. */
#ifndef DSV41_TEST_FIXTURE_H
#define DSV41_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* One frame of the engine's multiplexed log stream (REFERENCE §7): stream,
 * three zero bytes, the payload's length big-endian, the payload. */
static inline void fixture_frame(struct buf *out, int stream, const char *payload)
{
    size_t n = strlen(payload);
    unsigned char h[8] = {(unsigned char)stream, 0, 0, 0, (unsigned char)(n >> 24),
                          (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n};
    buf_append(out, (const char *)h, 8);
    buf_append(out, payload, n);
}

#endif
