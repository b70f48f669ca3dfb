/* config_file: one setting written into the operator's config file (accept
 * pins IMG there), every other line kept byte for byte; written whole and
 * renamed over (buf_write_file), so a crash leaves the old file or the new. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Does this line set key (KEY=..., export KEY=..., blanks around)? */
static bool sets_key(const char *line, size_t len, const char *key)
{
    size_t i = 0, kl = strlen(key);
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (len - i > 7 && strncmp(line + i, "export ", 7) == 0)
        for (i += 7; i < len && (line[i] == ' ' || line[i] == '\t');)
            i++;
    if (len - i < kl || strncmp(line + i, key, kl) != 0)
        return false;
    for (i += kl; i < len && (line[i] == ' ' || line[i] == '\t');)
        i++;
    return i < len && line[i] == '=';
}

/* VALUE as the loader reads it back: bare when it is plain, else in double
 * quotes with \ " $ ` escaped, one quoted string, which the loader's
 * unquote takes off as a shell sourcing the file would. */
static void put_value(struct buf *b, const char *v)
{
    if (*v && strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/:@+,-") ==
                  strlen(v)) {
        buf_puts(b, v);
        return;
    }
    buf_puts(b, "\"");
    for (; *v; v++) {
        if (strchr("\\\"$`", *v))
            buf_puts(b, "\\");
        buf_append(b, v, 1);
    }
    buf_puts(b, "\"");
}

int config_file_set(const char *path, const char *key, const char *value, struct buf *err)
{
    if (strpbrk(value, "\n\r")) {
        buf_printf(err, "%s: a value with a line break cannot be one line of %s", key, path);
        return -1;
    }
    struct buf old = BUF_INIT, out = BUF_INIT, bak = BUF_INIT;
    struct stat st;
    mode_t mode = 0600;
    /* a config file that is a link (to a dotfiles checkout): its target is
     * the file to change, the link stays */
    char *real = realpath(path, NULL);
    if (real)
        path = real;
    bool exists = stat(path, &st) == 0;
    if (exists)
        mode = st.st_mode & 07777;
    if (exists && buf_read_file(&old, path, 1 << 20) < 0) {
        buf_printf(err, "cannot read %s: %s", path, strerror(errno));
        free(real);
        return -1;
    }
    if (exists && strlen(buf_str(&old)) != old.len) {
        buf_printf(err, "%s holds a NUL byte: not a config file this can edit", path);
        buf_free(&old);
        free(real);
        return -1;
    }
    /* the last line that sets it is the one that counts when loading */
    const char *d = buf_str(&old), *last = NULL;
    size_t last_len = 0;
    for (const char *p = d; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (sets_key(p, len, key)) {
            last = p;
            last_len = len;
        }
        p += len + (nl != NULL);
    }
    struct buf line = BUF_INIT;
    buf_printf(&line, "%s=", key);
    put_value(&line, value);
    if (last) {
        buf_append(&out, d, (size_t)(last - d));
        buf_puts(&out, buf_str(&line));
        buf_puts(&out, last + last_len);
    } else {
        buf_puts(&out, d);
        if (out.len && out.data[out.len - 1] != '\n')
            buf_puts(&out, "\n");
        buf_printf(&out, "%s\n", buf_str(&line));
    }
    buf_free(&line);
    int rc = 0;
    buf_printf(&bak, "%s.bak", path);
    if (exists && buf_write_file(buf_str(&bak), buf_str(&old), old.len, mode) < 0) {
        buf_printf(err, "cannot write %s: %s", buf_str(&bak), strerror(errno));
        rc = -1;
    }
    if (rc == 0 && buf_write_file(path, buf_str(&out), out.len, mode) < 0) {
        buf_printf(err, "cannot write %s: %s", path, strerror(errno));
        rc = -1;
    }
    buf_free(&old);
    buf_free(&out);
    buf_free(&bak);
    free(real);
    return rc;
}
