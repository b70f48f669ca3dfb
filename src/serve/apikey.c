#include "apikey.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirs.h"

void apikey_scrub(struct buf *b)
{
    if (b->data)
        memset(b->data, 0, b->cap);
    buf_free(b);
}

int apikey_read(const char *path, struct buf *key, struct buf *why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        buf_printf(why, "API key file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        buf_printf(why, "API key file %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        buf_printf(why, "API key file %s is readable by others (mode %03o): run chmod 600 %s", path,
                   (unsigned)(st.st_mode & 0777), path);
        close(fd);
        return -1;
    }
    char tmp[512];
    ssize_t n = read(fd, tmp, sizeof tmp - 1);
    close(fd);
    if (n < 0) {
        buf_printf(why, "API key file %s: %s", path, strerror(errno));
        return -1;
    }
    size_t l = (size_t)n;
    while (l && (tmp[l - 1] == '\n' || tmp[l - 1] == '\r' || tmp[l - 1] == ' '))
        l--;
    int rc = 0;
    if (!l) {
        buf_printf(why, "API key file %s is empty (remove it and launch again)", path);
        rc = -1;
    } else if (buf_append(key, tmp, l) < 0) {
        rc = -1;
    }
    memset(tmp, 0, sizeof tmp);
    return rc;
}

/* The directory the key file goes in, made 0700 where missing. */
static int mkdir_parents(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    return dirs_make(dir, 0700);
}

int apikey_ensure(const char *path, struct buf *key, struct buf *why)
{
    if (access(path, F_OK) == 0)
        return apikey_read(path, key, why);
    unsigned char raw[32];
    unsigned char b64[64];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        buf_puts(why, "OpenSSL could not produce random bytes for the API key");
        return -1;
    }
    int n = EVP_EncodeBlock(b64, raw, sizeof raw);
    memset(raw, 0, sizeof raw);
    while (n > 0 && b64[n - 1] == '=')
        n--;
    for (int i = 0; i < n; i++)
        b64[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    if (mkdir_parents(path) < 0) {
        buf_printf(why, "cannot create the directory of %s: %s", path, strerror(errno));
        return -1;
    }
    /* O_EXCL: two launches at once must not write two keys */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        memset(b64, 0, sizeof b64);
        if (errno == EEXIST)
            return apikey_read(path, key, why);
        buf_printf(why, "cannot create API key file %s: %s", path, strerror(errno));
        return -1;
    }
    b64[n] = '\n';
    bool ok = fchmod(fd, 0600) == 0 && write(fd, b64, (size_t)n + 1) == n + 1 && fsync(fd) == 0;
    int e = errno;
    close(fd);
    if (!ok) {
        unlink(path);
        memset(b64, 0, sizeof b64);
        buf_printf(why, "cannot write API key file %s: %s", path, strerror(e));
        return -1;
    }
    int rc = buf_append(key, (const char *)b64, (size_t)n);
    memset(b64, 0, sizeof b64);
    return rc;
}
