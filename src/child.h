/* child: a program started apart from us - in its own process group (a
 * cancel reaches all it starts, and the terminal's Ctrl-C does not), stdin
 * from /dev/null, stdout and stderr into one descriptor, and signals as a
 * fresh process has them (none blocked; SIGPIPE, SIGINT and SIGTERM at
 * their defaults whatever we set). Used for console jobs and for rsync. */
#ifndef DSV41_CHILD_H
#define DSV41_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* path is looked up in PATH when search is set. 0, or an errno. */
int child_spawn(const char *path, bool search, char *const argv[], int out_fd, pid_t *pid);

#endif
