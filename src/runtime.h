/* runtime: the container runtime CLI on a node, docker or podman (RUNTIME),
 * through the verbs both share. It only builds command lines (run on a node
 * through node_run or inside the sampling script); parsing of what they print
 * is probe.c's. Names and images are shell-quoted here, once. */
#ifndef DSV41_RUNTIME_H
#define DSV41_RUNTIME_H

#include <stdbool.h>

#include "buf.h"

/* 0 when rt is a runtime we drive, else -1 with a message. */
int runtime_check(const char *rt, struct buf *err);
/* State of the named containers, one PROBE_INSPECT_FORMAT line each;
 * missing ones print "no such" errors. names_var names a shell variable
 * holding the names (unquoted on purpose: a list). */
int runtime_cmd_inspect(struct buf *out, const char *rt, const char *names_var);
int runtime_cmd_image_present(struct buf *out, const char *rt, const char *image);
int runtime_cmd_logs(struct buf *out, const char *rt, const char *name, bool follow, int tail);
int runtime_cmd_kill(struct buf *out, const char *rt, const char *name);
int runtime_cmd_rm(struct buf *out, const char *rt, const char *name);

#endif
