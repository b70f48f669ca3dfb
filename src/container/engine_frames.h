/* engine_frames: Docker's multiplexed log stream (the body of
 * /containers/NAME/logs and /attach for a container without a TTY), taken
 * apart incrementally. Each frame: one byte for the stream (0 stdin, 1
 * stdout, 2 stderr), three zero bytes, the payload's length as a big-endian
 * uint32, the payload. A header split across reads is kept; a payload is
 * handed on as it arrives, so a frame's size costs no memory, only a bound
 * (ENGINE_FRAME_MAX: an engine writes a log line per frame, 16 KiB at most
 * for docker's json-file). Anything else in the header is garbage, an error:
 * a raw (TTY) stream read as frames fails at once instead of showing noise. */
#ifndef DSV41_ENGINE_FRAMES_H
#define DSV41_ENGINE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define ENGINE_FRAME_MAX (1u << 24) /* 16 MiB */

/* stream 0, 1 or 2; a payload may come in several calls. Non-zero stops. */
typedef int (*engine_frame_fn)(void *ctx, int stream, const char *data, size_t n);

struct engine_frames {
    unsigned char hdr[8];
    size_t hdr_len;  /* bytes of the current header read so far */
    uint32_t left;   /* payload bytes of the current frame still to come */
    int stream;
    const char *error; /* static text once engine_frames_feed returned -1 */
};

void engine_frames_init(struct engine_frames *f);
/* 0: all taken; 1: fn stopped it; -1: garbage (f->error), and every later
 * call fails too. */
int engine_frames_feed(struct engine_frames *f, const char *data, size_t n, engine_frame_fn fn,
                       void *ctx);
/* 0 when the stream ended between frames, -1 (f->error) inside one. */
int engine_frames_end(struct engine_frames *f);

#endif
