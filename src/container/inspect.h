/* inspect: a container's state as the runtime's inspect prints it
 * (INSPECT_FORMAT, one line) or its API says it (engine_inspect fills the
 * same struct): parsed into struct container_info, and the line printed
 * back, so both paths go through one parser. Pure: no I/O. */
#ifndef DSV41_INSPECT_H
#define DSV41_INSPECT_H

#include <stdbool.h>
#include <time.h>

#include "buf.h"

#define INSPECT_NAME_MAX 96

struct container_info {
    char name[INSPECT_NAME_MAX];
    bool running;
    long pid;
    char started[64];
    int exit_code;
    bool oom_killed;
    char image[80]; /* image id */
    char id[72];    /* the container's own id (64 hex); "" when not said */
    bool managed;   /* carries our label: launch made it */
};

/* Separator-delimited so that podman's StartedAt, which holds spaces, parses. */
#define INSPECT_FORMAT                                                                       \
    "{{.Name}}|{{.State.Running}}|{{.State.Pid}}|{{.State.StartedAt}}|{{.State.ExitCode}}|"         \
    "{{.State.OOMKilled}}|{{.Image}}|{{index .Config.Labels \"dsv41-top.managed\"}}"

/* One line of INSPECT_FORMAT output; -1 when malformed. */
int inspect_parse_line(const char *line, struct container_info *c);
/* The line inspect would print for c (with its newline): what the engine's
 * API said goes through the same parser as the CLI's output. */
void inspect_format_line(struct buf *out, const struct container_info *c);

/* StartedAt as docker ("2026-11-30T10:38:33.77Z") or podman ("2026-11-30
 * 10:38:33.77 +0100 CET") print it; -1 when it is neither. */
int inspect_parse_started(const char *s, time_t *out);

#endif
