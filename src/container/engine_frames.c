#include "engine_frames.h"

#include <string.h>

void engine_frames_init(struct engine_frames *f)
{
    memset(f, 0, sizeof *f);
}

int engine_frames_feed(struct engine_frames *f, const char *data, size_t n, engine_frame_fn fn,
                       void *ctx)
{
    if (f->error)
        return -1;
    size_t i = 0;
    while (i < n) {
        if (f->left) {
            size_t take = n - i < f->left ? n - i : f->left;
            f->left -= (uint32_t)take;
            i += take;
            if (fn && fn(ctx, f->stream, data + i - take, take))
                return 1;
            continue;
        }
        size_t take = 8 - f->hdr_len < n - i ? 8 - f->hdr_len : n - i;
        memcpy(f->hdr + f->hdr_len, data + i, take);
        f->hdr_len += take;
        i += take;
        if (f->hdr_len < 8)
            return 0;
        f->hdr_len = 0;
        if (f->hdr[0] > 2 || f->hdr[1] || f->hdr[2] || f->hdr[3]) {
            f->error = "not a multiplexed stream (a frame header with a bad stream byte)";
            return -1;
        }
        uint32_t len = (uint32_t)f->hdr[4] << 24 | (uint32_t)f->hdr[5] << 16 |
                       (uint32_t)f->hdr[6] << 8 | f->hdr[7];
        if (len > ENGINE_FRAME_MAX) {
            f->error = "a frame larger than 16 MiB";
            return -1;
        }
        f->stream = f->hdr[0];
        f->left = len;
    }
    return 0;
}

int engine_frames_end(struct engine_frames *f)
{
    if (f->error)
        return -1;
    if (f->hdr_len || f->left) {
        f->error = "the stream ended inside a frame";
        return -1;
    }
    return 0;
}
