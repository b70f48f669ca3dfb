/* dirs: a directory made with its parents, as mkdir -p does. */
#ifndef DSV41_DIRS_H
#define DSV41_DIRS_H

#include <stddef.h>
#include <sys/types.h>

/* 0 when dir exists afterwards (made with mode where missing); -1, errno set. */
int dirs_make(const char *dir, mode_t mode);
/* path with a leading "~" or "~/" replaced by home (another node's home,
 * so never this process's $HOME); any other path is copied as it is. "~user"
 * is not expanded. 0; -1 when home is needed and empty or not absolute, or
 * the result does not fit in sz. */
int dirs_expand_home(const char *home, const char *path, char *out, size_t sz);
/* The running binary's directory (/proc/self/exe's, without the name):
 * PREFIX/bin when installed, the checkout or build/ otherwise; what its
 * themes, Pi files, unit templates and helpers are found beside. 0; -1 when
 * the link cannot be read. */
int dirs_exe_dir(char *out, size_t sz);
/* true when path starts with "~" followed by "/" or nothing. */
int dirs_is_home_relative(const char *path);

#endif
