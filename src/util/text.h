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
/* Whether an environment variable's name looks like it holds a secret: it
 * contains TOKEN, KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL, in any case. */
int text_secret_name(const char *name, size_t len);
/* src with the value of every NAME=VALUE whose name looks secret replaced by
 * "(hidden)", appended to out. TEXT_HIDE_LINES: one assignment a line (an env
 * file), the value to the line's end; TEXT_HIDE_WORDS: shell words (EXTRA_ENV),
 * the value to the next blank outside quotes. */
enum text_hide { TEXT_HIDE_LINES, TEXT_HIDE_WORDS };
void text_hide_secrets(const char *src, size_t len, enum text_hide mode, struct buf *out);

/* Bounded copy into a struct's field that always terminates and replaces
 * control characters (C0, DEL, C1) and invalid UTF-8 with '?', never
 * splitting a character: remote text can carry no terminal escape or broken
 * encoding into a struct (what a node, a runtime or its API says). */
void text_copy_field(char *dst, size_t dstsz, const char *src, size_t len);

#endif
