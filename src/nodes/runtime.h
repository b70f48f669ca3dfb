/* runtime: the container runtime CLI on a node, docker or podman (RUNTIME),
 * through the verbs both share. It only builds commands (run on a node
 * through node_run, or inside the sampling script); parsing of what they
 * print is probe.c's. Names and images are operands after "--", so a value
 * that starts with '-' is never read as an option. */
#ifndef DSV41_RUNTIME_H
#define DSV41_RUNTIME_H

#include <stdbool.h>

#include "buf.h"
#include "probe.h"
#include "shcmd.h"

/* 0 when rt is a runtime we drive, else -1 with a message. */
int runtime_check(const char *rt, struct buf *err);

/* For scripts that keep the runtime in $RT, an image in $IMG and container
 * names in $NAMES (a list of plain dsv41-rN words: unquoted on purpose). */
#define RUNTIME_SH_INSPECT "\"$RT\" container inspect -f '" PROBE_INSPECT_FORMAT "' -- $NAMES"
#define RUNTIME_SH_IMAGE_PRESENT "\"$RT\" image inspect -- \"$IMG\" >/dev/null 2>&1"

/* Commands of their own. inspect: one PROBE_INSPECT_FORMAT line per name
 * ("no such" errors for missing ones); logs: stdout and stderr as one stream;
 * image_present: exit 0 when the image is there, nothing printed. */
void runtime_cmd_inspect(struct shcmd *c, const char *rt, const struct strv *names);
void runtime_cmd_image_present(struct shcmd *c, const char *rt, const char *image);
void runtime_cmd_logs(struct shcmd *c, const char *rt, const char *name, bool follow, int tail);
void runtime_cmd_kill(struct shcmd *c, const char *rt, const char *name);
void runtime_cmd_rm(struct shcmd *c, const char *rt, const char *name);
/* The rank names dsv41-r0 .. dsv41-r<n-1>. */
void runtime_rank_names(struct strv *names, int n);

#endif
