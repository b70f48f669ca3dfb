/* jscan: a small, strict JSON scanner that finds one value by its path and
 * reads it, for code that cannot link cJSON (the static guard) or must not
 * build a tree for a few fields (the engine's inspect, every few seconds).
 * The whole document is checked against RFC 8259's grammar on every call,
 * so malformed text anywhere is refused, never half-read; nesting deeper
 * than JSCAN_DEPTH is refused; nothing is read past len (no NUL needed).
 * Strings keep their bytes >= 0x80 as they are: a caller showing them
 * cleans them (text_copy_field, text_clean). */
#ifndef DSV41_JSCAN_H
#define DSV41_JSCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

#define JSCAN_DEPTH 64
#define JSCAN_KEY_MAX 256 /* a longer key is read, never matched */

enum jscan_type {
    JSCAN_ABSENT,
    JSCAN_NULL,
    JSCAN_BOOL,
    JSCAN_NUMBER,
    JSCAN_STRING,
    JSCAN_OBJECT,
    JSCAN_ARRAY,
};

struct jscan_val {
    enum jscan_type type;
    const char *raw; /* the value's text in the document (a string's with its quotes) */
    size_t raw_len;
    bool b;          /* JSCAN_BOOL */
};

/* The value at path (object keys, outermost first; a key is matched whole,
 * so "dsv41-top.managed" is one component; no array indexing). npath 0
 * names the document itself. 0 with out->type JSCAN_ABSENT when the path is
 * not there (or crosses a value that is no object), -1 with *why (static
 * text, may be NULL) when the document is malformed. With duplicate keys the
 * first one counts. */
int jscan_get(const char *json, size_t len, const char *const *path, int npath,
              struct jscan_val *out, const char **why);
/* The same with a dotted path, "State.Pid": for keys without dots. */
int jscan_get_dotted(const char *json, size_t len, const char *dotted, struct jscan_val *out,
                     const char **why);
/* A string value unescaped (\uXXXX and surrogate pairs to UTF-8; a lone
 * surrogate becomes U+FFFD) and appended to out; -1 when v is no string. */
int jscan_string(const struct jscan_val *v, struct buf *out);
/* An integer (no fraction, no exponent) that fits a long; -1 otherwise. */
int jscan_long(const struct jscan_val *v, long *out);

#endif
