/* fixstr: see fixstr.h. */
#include "fixstr.h"

#include <stdio.h>

int fixstr_vappendf(char *s, size_t sz, size_t *len, const char *fmt, va_list ap)
{
    if (!sz)
        return -1;
    if (*len >= sz) /* a caller's length past the end: the end, not beyond */
        *len = sz - 1;
    size_t room = sz - *len;
    int w = vsnprintf(s + *len, room, fmt, ap);
    if (w < 0) {
        s[*len] = '\0';
        return -1;
    }
    if ((size_t)w >= room) {
        *len = sz - 1;
        return -1;
    }
    *len += (size_t)w;
    return 0;
}

int fixstr_appendf_whole(char *s, size_t sz, size_t *len, const char *fmt, ...)
{
    size_t was = *len < sz ? *len : (sz ? sz - 1 : 0);
    va_list ap;
    va_start(ap, fmt);
    int rc = fixstr_vappendf(s, sz, len, fmt, ap);
    va_end(ap);
    if (rc < 0 && sz) {
        s[was] = '\0';
        *len = was;
    }
    return rc;
}

int fixstr_appendf(char *s, size_t sz, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fixstr_vappendf(s, sz, len, fmt, ap);
    va_end(ap);
    return rc;
}
