/* dirs: see dirs.h. */
#include "dirs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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

int dirs_is_home_relative(const char *path)
{
    return path[0] == '~' && (path[1] == '/' || path[1] == '\0');
}

int dirs_expand_home(const char *home, const char *path, char *out, size_t sz)
{
    int n;
    if (!dirs_is_home_relative(path))
        n = snprintf(out, sz, "%s", path);
    else if (!home || home[0] != '/')
        return -1;
    else if (strcmp(home, "/") == 0 && path[1]) /* "~/x" is "/x", not "//x" */
        n = snprintf(out, sz, "%s", path + 1);
    else
        n = snprintf(out, sz, "%s%s", home, path + 1);
    return n < 0 || (size_t)n >= sz ? -1 : 0;
}

int dirs_exe_dir(char *out, size_t sz)
{
    ssize_t n = sz > 1 ? readlink("/proc/self/exe", out, sz - 1) : -1;
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    return 0;
}
