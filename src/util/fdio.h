/* fdio: whole writes at an offset - the loop every file writer needs (a
 * short write, EINTR) in one place; libc only, so the static helpers link
 * it too. */
#ifndef DSV41_FDIO_H
#define DSV41_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/* n bytes of p at off, all of them: 0, or the errno that stopped it (EIO
 * for a write that wrote nothing). */
int fdio_pwrite_all(int fd, const void *p, size_t n, off_t off);

#endif
