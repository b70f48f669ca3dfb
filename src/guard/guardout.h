/* guardout: the guard's writes to STATE_DIR (its log lines and heartbeat),
 * made by a thread of their own. A STATE_DIR on NFS, or any file system in a
 * writeback stall under memory pressure, can block a write for as long as it
 * likes; the sampling thread must then still read MemAvailable and kill, so
 * it only hands its lines and heartbeats over (a bounded queue: when the
 * writer cannot keep up the oldest lines go, and it says how many) and the
 * kill path touches no file. The writer catches up when writes go through. */
#ifndef DSV41_GUARDOUT_H
#define DSV41_GUARDOUT_H

#include <stdbool.h>
#include <stddef.h>

struct guard;

/* Starts the writer on g's log and heartbeat fds; -1 when no thread could
 * be made (the lines are then written by whoever logs, as before). */
int guardout_start(struct guard *g);
/* Queues a whole line (with its newline); never blocks on a write. */
void guardout_log(struct guard *g, const char *line, size_t n);
/* The latest heartbeat, written over the file's last when the writer comes
 * to it (older ones never matter). */
void guardout_heartbeat(struct guard *g, const char *hb, size_t n);
/* Waits up to timeout_ms until everything queued so far is written; true
 * when it was (the tests, and a guard that ends). */
bool guardout_flush(struct guard *g, int timeout_ms);
/* Flushes (up to 2 s: a file system that takes nothing does not hold the
 * guard's exit) and ends the writer. */
void guardout_stop(struct guard *g);

#endif
