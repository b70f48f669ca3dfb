/* The hub simulator's repository: revisions on disk, hashed as the hub
 * reports them (sha256 for LFS files, git blob sha1 otherwise; the LFS
 * pointer file's sha1 as an LFS file's oid). */
#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "sim_hub.h"

static void hex(const unsigned char *d, int n, char *out)
{
    for (int i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* sha256 (and git's blob sha1) of a file. */
static int hash_file(const char *path, int64_t size, char sha256[65], char sha1[41])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *a = EVP_MD_CTX_new(), *b = EVP_MD_CTX_new();
    EVP_DigestInit_ex(a, EVP_sha256(), NULL);
    EVP_DigestInit_ex(b, EVP_sha1(), NULL);
    char head[64];
    int hl = snprintf(head, sizeof head, "blob %lld", (long long)size);
    EVP_DigestUpdate(b, head, (size_t)hl + 1); /* with its NUL */
    static char buf[1 << 20];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        EVP_DigestUpdate(a, buf, (size_t)n);
        EVP_DigestUpdate(b, buf, (size_t)n);
    }
    close(fd);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl;
    EVP_DigestFinal_ex(a, d, &dl);
    hex(d, 32, sha256);
    EVP_DigestFinal_ex(b, d, &dl);
    hex(d, 20, sha1);
    EVP_MD_CTX_free(a);
    EVP_MD_CTX_free(b);
    return n < 0 ? -1 : 0;
}

static void sha1_text(const char *text, char out[41])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl;
    char head[64];
    int hl = snprintf(head, sizeof head, "blob %zu", strlen(text));
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha1(), NULL);
    EVP_DigestUpdate(c, head, (size_t)hl + 1);
    EVP_DigestUpdate(c, text, strlen(text));
    EVP_DigestFinal_ex(c, d, &dl);
    EVP_MD_CTX_free(c);
    hex(d, 20, out);
}

static int add(struct hub_rev *v, int *cap, struct hub_entry e)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        struct hub_entry *p = realloc(v->e, sizeof *p * (size_t)*cap);
        if (!p)
            return -1;
        v->e = p;
    }
    v->e[v->n++] = e;
    return 0;
}

static int walk(struct hub_rev *v, int *cap, const char *rel)
{
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", v->dir, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char r[1024], full[2048];
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        snprintf(full, sizeof full, "%s/%s", v->dir, r);
        struct stat st;
        if (stat(full, &st) < 0)
            continue;
        struct hub_entry e = {0};
        e.path = strdup(r);
        if (S_ISDIR(st.st_mode)) {
            e.dir = true;
            sha1_text(r, e.oid); /* a tree id: any stable sha1 does */
            rc = add(v, cap, e) < 0 ? -1 : walk(v, cap, r);
            continue;
        }
        e.size = st.st_size;
        e.lfs = strstr(r, ".safetensors") != NULL;
        char blob_sha1[41];
        if (hash_file(full, e.size, e.sha256, blob_sha1) < 0) {
            fprintf(stderr, "dsv41-sim hub: cannot read %s\n", full);
            rc = -1;
            break;
        }
        if (e.lfs) {
            char ptr[256];
            e.pointer_size = snprintf(ptr, sizeof ptr,
                                      "version https://git-lfs.github.com/spec/v1\n"
                                      "oid sha256:%s\nsize %lld\n",
                                      e.sha256, (long long)e.size);
            sha1_text(ptr, e.oid);
        } else {
            memcpy(e.oid, blob_sha1, sizeof e.oid);
        }
        rc = add(v, cap, e);
    }
    closedir(d);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct hub_entry *)a)->path, ((const struct hub_entry *)b)->path);
}

int hub_repo_load(const char *root, struct hub_repo *r)
{
    memset(r, 0, sizeof *r);
    char path[1024];
    snprintf(path, sizeof path, "%s/refs/main", root);
    struct buf main = BUF_INIT;
    if (buf_read_file(&main, path, 128) < 0 || main.len < 40) {
        fprintf(stderr, "dsv41-sim hub: %s holds no commit\n", path);
        return -1;
    }
    snprintf(r->main_commit, sizeof r->main_commit, "%.40s", buf_str(&main));
    buf_free(&main);
    snprintf(path, sizeof path, "%s/revs", root);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "dsv41-sim hub: no revisions in %s\n", path);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strlen(de->d_name) != 40)
            continue;
        struct hub_rev *nv = realloc(r->rev, sizeof *nv * (size_t)(r->nrev + 1));
        if (!nv)
            break;
        r->rev = nv;
        struct hub_rev *v = &r->rev[r->nrev++];
        memset(v, 0, sizeof *v);
        memcpy(v->commit, de->d_name, 40); /* 40 hex digits, checked above; NUL from memset */
        snprintf(v->dir, sizeof v->dir, "%s/revs/%s", root, de->d_name);
        int cap = 0;
        if (walk(v, &cap, "") < 0) {
            closedir(d);
            return -1;
        }
        qsort(v->e, (size_t)v->n, sizeof *v->e, by_path);
    }
    closedir(d);
    if (!hub_repo_find(r, "main")) {
        fprintf(stderr, "dsv41-sim hub: main names %s, which is no revision\n", r->main_commit);
        return -1;
    }
    return 0;
}

const struct hub_rev *hub_repo_find(const struct hub_repo *r, const char *rev)
{
    const char *want = strcmp(rev, "main") == 0 ? r->main_commit : rev;
    for (int i = 0; i < r->nrev; i++)
        if (strcmp(r->rev[i].commit, want) == 0)
            return &r->rev[i];
    return NULL;
}

const struct hub_entry *hub_rev_file(const struct hub_rev *v, const char *path)
{
    for (int i = 0; i < v->n; i++)
        if (!v->e[i].dir && strcmp(v->e[i].path, path) == 0)
            return &v->e[i];
    return NULL;
}
