/* fdio: see fdio.h. */
#include "fdio.h"

#include <errno.h>
#include <unistd.h>

int fdio_pwrite_all(int fd, const void *p, size_t n, off_t off)
{
    const char *c = p;
    for (size_t w = 0; w < n;) {
        ssize_t k = pwrite(fd, c + w, n - w, off + (off_t)w);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        w += (size_t)k;
    }
    return 0;
}
