/* child: the one way we start a program - in its own process group (a
 * cancel or a timeout reaches all it starts, and the terminal's Ctrl-C does
 * not), stdin from /dev/null, stdout and stderr into the descriptors given,
 * and signals as a fresh process has them (none blocked; SIGPIPE, SIGINT and
 * SIGTERM at their defaults whatever we set). No shell: argv as it is. Used
 * for console jobs, rsync, local node commands and the guard's runtime. */
#ifndef DSV41_CHILD_H
#define DSV41_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* path is looked up in PATH when search is set; err_fd may be out_fd. 0, or
 * an errno. */
int child_spawn(const char *path, bool search, char *const argv[], int out_fd, int err_fd,
                pid_t *pid);
/* The same with stdin from in_fd (-1: /dev/null). */
int child_spawn_in(const char *path, bool search, char *const argv[], int in_fd, int out_fd,
                   int err_fd, pid_t *pid);

#endif
