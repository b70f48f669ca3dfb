/* wire: the fields of our line formats between the head and a helper on a
 * worker (verify_wire, xfer_wire, the copy's plan and state): decimal
 * numbers, sha256 in hex, and a path last on the line, escaped as sha256sum
 * escapes names ("\\" and "\n") so that a file name cannot forge a line. A
 * parser never trusts the other side: anything malformed is refused. */
#ifndef DSV41_WIRE_H
#define DSV41_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* A decimal integer at *s followed by a space (or the end of the string when
 * last); *s moves past it. No sign but '-', no blanks, no '+'. */
bool wire_num(const char **s, int64_t *v, bool last);
/* 64 lowercase hex digits at *s followed by a space (or the end when last). */
bool wire_hex32(const char **s, unsigned char out[32], bool last);
/* n bytes from 2n lowercase hex digits, then a blank (or the end: last). */
bool wire_hex(const char **s, unsigned char *out, int n, bool last);
/* The path, escaped. */
void wire_path_put(struct buf *out, const char *path);
/* The rest of s unescaped into out; false when malformed, empty or too long. */
bool wire_path_get(const char *s, char *out, size_t sz);

#endif
