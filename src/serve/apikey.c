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
#include "fdio.h"

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

/* A new key: 32 random bytes, URL-safe base64 without padding (43
 * characters), NUL-terminated in out. -1 when OpenSSL has no randomness. */
static int new_key(char out[64])
{
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return -1;
    int n = EVP_EncodeBlock((unsigned char *)out, raw, sizeof raw);
    memset(raw, 0, sizeof raw);
    while (n > 0 && out[n - 1] == '=')
        n--;
    for (int i = 0; i < n; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    out[n] = '\0';
    return n;
}

int apikey_ensure(const char *path, struct buf *key, struct buf *why)
{
    if (access(path, F_OK) == 0)
        return apikey_read(path, key, why);
    char b64[64];
    int n = new_key(b64);
    if (n < 0) {
        buf_puts(why, "OpenSSL could not produce random bytes for the API key");
        return -1;
    }
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
    int rc = buf_append(key, b64, (size_t)n);
    memset(b64, 0, sizeof b64);
    return rc;
}

void apikey_fingerprint(const char *key, size_t len, char out[APIKEY_FP_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    unsigned char b64[64];
    if (EVP_Digest(key, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        snprintf(out, APIKEY_FP_SIZE, "n/a");
        return;
    }
    int n = EVP_EncodeBlock(b64, md, mdlen);
    while (n > 0 && b64[n - 1] == '=')
        n--;
    snprintf(out, APIKEY_FP_SIZE, "SHA256:%.*s", n, (const char *)b64);
}

/* Zeros over the old key's bytes, then nothing: for an inode no name points
 * at any more, which only open descriptors (a running rank's bind mount)
 * still reach. Journaling or copy-on-write file systems may keep older
 * blocks; this is what can be done from user space. */
static void wipe(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return;
    char zero[4096] = {0};
    for (off_t off = 0; off < st.st_size; off += (off_t)sizeof zero) {
        size_t n =
            (size_t)(st.st_size - off) < sizeof zero ? (size_t)(st.st_size - off) : sizeof zero;
        if (fdio_pwrite_all(fd, zero, n, off) != 0)
            break;
    }
    fdatasync(fd);
    if (ftruncate(fd, 0) == 0)
        fsync(fd);
}

int apikey_rotate(const char *path, char fp[APIKEY_FP_SIZE], enum apikey_old *old, struct buf *why)
{
    *old = APIKEY_OLD_NONE;
    struct stat st;
    bool had = lstat(path, &st) == 0;
    if (had && S_ISLNK(st.st_mode)) {
        char to[1024];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = '\0';
        buf_printf(why,
                   "refusing to rotate: %s is a symbolic link (to %s), and a key is never "
                   "written through a link (launch refuses to read one too): remove the link, "
                   "or set API_KEY_FILE to the file itself",
                   path, to);
        return -1;
    }
    if (had && !S_ISREG(st.st_mode)) {
        buf_printf(why, "refusing to rotate: %s is not a regular file: remove it", path);
        return -1;
    }
    if (!had && errno != ENOENT) {
        buf_printf(why, "cannot look at %s: %s", path, strerror(errno));
        return -1;
    }
    char key[64];
    int n = new_key(key);
    if (n < 0) {
        buf_puts(why, "OpenSSL could not produce random bytes for the API key");
        return -1;
    }
    if (mkdir_parents(path) < 0) {
        buf_printf(why, "cannot create the directory of %s: %s", path, strerror(errno));
        memset(key, 0, sizeof key);
        return -1;
    }
    /* opened before the rename, wiped after it only when the rename took the
     * last name it had: never a file that another name still shares */
    int ofd = had ? open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    key[n] = '\n';
    int rc = buf_write_file(path, key, (size_t)n + 1, 0600);
    int e = errno;
    if (rc == 0)
        apikey_fingerprint(key, (size_t)n, fp);
    memset(key, 0, sizeof key);
    if (rc < 0) {
        if (ofd >= 0)
            close(ofd);
        buf_printf(why, "cannot write a new key beside %s: %s%s; the old key is unchanged", path,
                   strerror(e),
                   e == EROFS || e == EACCES || e == EPERM
                       ? " (the directory must be writable: its owner, its mode, a read-only "
                         "mount)"
                       : "");
        return -1;
    }
    if (had)
        *old = APIKEY_OLD_UNLINKED;
    if (ofd >= 0) {
        if (fstat(ofd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0) {
            wipe(ofd);
            *old = APIKEY_OLD_WIPED;
        }
        close(ofd);
    }
    return 0;
}
