/* progress: one line for a long byte job (verify, copy-to-peer; later
 * download): "[#####.....] 12.3 of 462.0 GB  2.7 %  1.10 GB/s  6m12s left".
 * Sizes in decimal units, as the hub and disk vendors show them. Rate and
 * time left are left out until they mean something. The formatting is pure;
 * progress_out shows it: on a terminal one line redrawn in place on stderr,
 * otherwise a line every so many seconds (a pipe, a console job). */
#ifndef DSV41_PROGRESS_H
#define DSV41_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"

/* bar_width 0: no bar (a line for a log or a pipe). */
void progress_format(struct buf *out, int64_t done, int64_t total, double elapsed_s,
                     int bar_width);
/* "0 B", "512 B", "4.2 kB", "49.9 GB", "1.20 TB" */
void progress_bytes(char *out, size_t n, double bytes);
/* "45s", "6m12s", "1h02m" */
void progress_duration(char *out, size_t n, double s);

struct progress_out {
    bool tty;      /* stderr is a terminal: redraw in place */
    bool shown;    /* a redrawn line is on the terminal now */
    double every_s; /* otherwise a line this often (0: none) */
    double last;
    FILE *lines;   /* where those lines go */
};

void progress_out_init(struct progress_out *o, double every_s, FILE *lines);
/* True when a show now would reach the screen: on a terminal always,
 * otherwise once the period has passed since the last line. */
bool progress_out_due(const struct progress_out *o);
/* Shows text if due: redrawn on stderr, or as a line on o->lines. */
void progress_out_show(struct progress_out *o, const char *text);
/* Takes a redrawn line away before other output. */
void progress_out_clear(struct progress_out *o);

#endif
