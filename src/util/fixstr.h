/* fixstr: text appended to a fixed-size char array, cut at its end and
 * never past it, without allocating: the guard's kill path, a struct's
 * message field, a list built in a stack buffer. One way instead of each
 * caller's own offset arithmetic, where a cut text left the offset past
 * the array's end for the next append to underflow. */
#ifndef DSV41_FIXSTR_H
#define DSV41_FIXSTR_H

#include <stdarg.h>
#include <stddef.h>

/* Formats at s + *len (the string's length so far) and advances *len to
 * the new end; s stays terminated and *len < sz. 0 when the whole text fit,
 * -1 when it was cut (or sz is 0, or the format failed: nothing added). */
int fixstr_appendf(char *s, size_t sz, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int fixstr_vappendf(char *s, size_t sz, size_t *len, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* The same for an entry of a list: all of it or none (-1, s and *len as
 * they were), so a cut never leaves part of a name another program could
 * take for a whole one (NCCL matches NCCL_IB_HCA's names by prefix). */
int fixstr_appendf_whole(char *s, size_t sz, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
