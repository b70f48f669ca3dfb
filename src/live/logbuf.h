/* logbuf: a bounded ring of log lines from remote ranks. Every line is
 * cleaned on the way in (text.h), so a line drawn from here can never move
 * the cursor or change colours. Lines carry increasing sequence numbers, so a
 * reader's position survives lines falling off the front. Not locked: the
 * owner (state) holds its mutex around every call. */
#ifndef DSV41_LOGBUF_H
#define DSV41_LOGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A longer line is cut there and says how much was cut. */
#define LOGBUF_LINE_MAX 4096

struct logline {
    char *text;
    uint32_t len;
    bool error; /* looks like an error (logbuf_is_error) */
};

struct logbuf {
    struct logline *ring;
    size_t cap;         /* lines */
    size_t max_bytes;   /* text bytes held at most */
    size_t bytes;
    uint64_t first;     /* sequence number of the oldest line held */
    uint64_t end;       /* one past the newest */
    uint64_t dropped;   /* lines that fell off the front */
};

int logbuf_init(struct logbuf *lb, size_t max_lines, size_t max_bytes);
void logbuf_free(struct logbuf *lb);
void logbuf_clear(struct logbuf *lb);
/* Cleans and appends one line (without its newline). */
void logbuf_push(struct logbuf *lb, const char *raw, size_t len);
/* The line with sequence number seq, or NULL when it is gone or not there yet. */
const struct logline *logbuf_get(const struct logbuf *lb, uint64_t seq);

/* An error line: Python tracebacks, ERROR/CRITICAL log levels, CUDA/NCCL
 * failures. Case matters where vLLM's format makes it matter. */
bool logbuf_is_error(const char *text);
/* Case-insensitive substring search. */
bool logbuf_match(const char *text, const char *needle);
/* From seq (exclusive) in direction dir (+1 newer, -1 older): the first line
 * that contains needle (or, with needle NULL, is an error). -1 when none. */
int64_t logbuf_find(const struct logbuf *lb, uint64_t seq, int dir, const char *needle);

#endif
