/* text: bytes from another machine (a rank's log, a remote command's output,
 * a file name) made safe to show: terminal control sequences (CSI, OSC, DCS,
 * 2-byte ESC), C0/C1 controls and bidi overrides are removed, invalid UTF-8
 * becomes '?', tabs become spaces and a carriage return keeps what a
 * terminal would show (the text after it). What comes out can never move the
 * cursor or change colours. The log panes and every message that quotes a
 * node use it. */
#ifndef DSV41_TEXT_H
#define DSV41_TEXT_H

#include <stddef.h>

#include "buf.h"

/* One line: the cleaned form of src in dst (always terminated); returns its
 * length. A newline in src vanishes like any control. */
size_t text_clean(char *dst, size_t dstsz, const char *src, size_t len);
/* The same, and how many bytes of src fit (*used). */
size_t text_clean_used(char *dst, size_t dstsz, const char *src, size_t len, size_t *used);
/* Every non-blank line of src cleaned and joined with " / ", at most max
 * bytes appended: remote output quoted in a one-line message. */
int text_one_line(struct buf *out, const char *src, size_t len, size_t max);

#endif
