/* wire: see wire.h. */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool wire_num(const char **s, int64_t *v, bool last)
{
    char *end;
    const char *d = **s == '-' ? *s + 1 : *s;
    if (*d < '0' || *d > '9') /* strtoll would also take spaces and '+' */
        return false;
    errno = 0;
    long long x = strtoll(*s, &end, 10);
    if (end == *s || errno == ERANGE || (last ? *end != '\0' : *end != ' '))
        return false;
    *v = x;
    *s = last ? end : end + 1;
    return true;
}

bool wire_hex32(const char **s, unsigned char out[32], bool last)
{
    return wire_hex(s, out, 32, last);
}

bool wire_hex(const char **s, unsigned char *out, int n, bool last)
{
    const char *p = *s;
    for (int i = 0; i < 2 * n; i++) {
        char c = p[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return false;
        out[i / 2] = (unsigned char)(i % 2 ? out[i / 2] | v : v << 4);
    }
    if (last ? p[2 * n] != '\0' : p[2 * n] != ' ')
        return false;
    *s = last ? p + 2 * n : p + 2 * n + 1;
    return true;
}

void wire_path_put(struct buf *out, const char *path)
{
    for (const char *p = path; *p; p++) {
        if (*p == '\\')
            buf_puts(out, "\\\\");
        else if (*p == '\n')
            buf_puts(out, "\\n");
        else
            buf_append(out, p, 1);
    }
}

bool wire_path_get(const char *s, char *out, size_t sz)
{
    size_t o = 0;
    for (; *s && o + 1 < sz; s++) {
        if (*s == '\\') {
            s++;
            if (*s != '\\' && *s != 'n')
                return false;
            out[o++] = *s == 'n' ? '\n' : '\\';
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
    return !*s && o > 0;
}
