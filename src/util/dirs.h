/* dirs: a directory made with its parents, as mkdir -p does. */
#ifndef DSV41_DIRS_H
#define DSV41_DIRS_H

#include <sys/types.h>

/* 0 when dir exists afterwards (made with mode where missing); -1, errno set. */
int dirs_make(const char *dir, mode_t mode);

#endif
