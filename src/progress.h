/* progress: one line for a long byte job (verify; later download and copy):
 * "[#####.....] 12.3 of 462.0 GB  2.7 %  1.10 GB/s  6m12s left". Sizes in
 * decimal units, as the hub and disk vendors show them. Rate and time left
 * are left out until they mean something. Pure. */
#ifndef DSV41_PROGRESS_H
#define DSV41_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* bar_width 0: no bar (a line for a log or a pipe). */
void progress_format(struct buf *out, int64_t done, int64_t total, double elapsed_s,
                     int bar_width);
/* "0 B", "512 B", "4.2 kB", "49.9 GB", "1.20 TB" */
void progress_bytes(char *out, size_t n, double bytes);
/* "45s", "6m12s", "1h02m" */
void progress_duration(char *out, size_t n, double s);

#endif
