/* dirs: see dirs.h. */
#include "dirs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

int dirs_make(const char *dir, mode_t mode)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, mode) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, mode) < 0 && errno != EEXIST ? -1 : 0;
}
