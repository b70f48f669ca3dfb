/* runtime: the container runtime CLI on a node, docker or podman (RUNTIME),
 * through the verbs both share. It only builds commands (run on a node
 * through node_run, or inside the sampling script); parsing of what they
 * print is probe.c's. Names and images are operands after "--", so a value
 * that starts with '-' is never read as an option. */
#ifndef DSV41_RUNTIME_H
#define DSV41_RUNTIME_H

#include <stdbool.h>

#include "buf.h"
#include "inspect.h"
#include "shcmd.h"

/* 0 when rt is a runtime we drive, else -1 with a message. */
int runtime_check(const char *rt, struct buf *err);
/* Whether rt's CLI prints an image id bare (podman) rather than as
 * sha256:HEX (docker): an id read from the engine API is cut to the same
 * form, so that it compares with the other nodes' CLI answers. */
bool runtime_ids_bare(const char *rt);

/* For scripts that keep the runtime in $RT, an image in $IMG and container
 * names in $NAMES (a list of plain dsv41-rN words: unquoted on purpose). */
#define RUNTIME_SH_INSPECT "\"$RT\" container inspect -f '" INSPECT_FORMAT "' -- $NAMES"
#define RUNTIME_SH_IMAGE_PRESENT "\"$RT\" image inspect -- \"$IMG\" >/dev/null 2>&1"
/* ...its id on stdout, or an exit status not 0 when it is not there */
#define RUNTIME_SH_IMAGE_ID "\"$RT\" image inspect -f '{{.Id}}' -- \"$IMG\" 2>/dev/null"

/* Commands of their own. inspect: one INSPECT_FORMAT line per name
 * ("no such" errors for missing ones); logs: stdout and stderr as one stream;
 * image_present: exit 0 when the image is there, nothing printed. */
void runtime_cmd_inspect(struct shcmd *c, const char *rt, const struct strv *names);
void runtime_cmd_image_present(struct shcmd *c, const char *rt, const char *image);
void runtime_cmd_logs(struct shcmd *c, const char *rt, const char *name, bool follow, int tail);
void runtime_cmd_kill(struct shcmd *c, const char *rt, const char *name);
/* rm -f: the container killed (SIGKILL, no grace) and removed. */
void runtime_cmd_rm(struct shcmd *c, const char *rt, const char *name);
/* `stop -t SEC`: SIGTERM (the image's stop signal), up to timeout_s for the
 * process to exit, then SIGKILL; the container stays (its exit code says
 * which ended it: 137 for the kill). */
void runtime_cmd_stop(struct shcmd *c, const char *rt, const char *name, int timeout_s);
/* The `run` options that bound a container's log: max_size (k/m/g, as
 * config_check allows; empty: none, the runtime's own settings apply) and
 * the files kept. The driver is named so the options always apply (a
 * docker daemon configured for journald would refuse max-size): docker's
 * json-file rotates max_files files; podman's k8s-file has no max-file
 * (4.x: ignored), conmon cuts its one file at max_size instead. */
int runtime_log_args(struct strv *v, const char *rt, const char *max_size, const char *max_files);
/* The rank names dsv41-r0 .. dsv41-r<n-1>. */
void runtime_rank_names(struct strv *names, int n);

#endif
