/* hub: the Hugging Face hub as the download needs it - the revision resolved
 * to a commit, the tree of that commit through every page, and where a
 * file's bytes come from (resolve: a redirect to the CDN for LFS files, the
 * hub itself for small ones). The token goes to the hub's host only: no
 * request follows a redirect, so a CDN never sees it. The parsers are pure
 * (fuzzed): a listing comes from the network, so a path that would leave the
 * directory, a duplicate, or an absurd size refuses the whole listing. */
#ifndef DSV41_HUB_H
#define DSV41_HUB_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"

#define HUB_MAX_FILES 100000
#define HUB_MAX_FILE_SIZE (1LL << 40) /* the hub caps files at 50 GB */

struct hub_file {
    char *path;
    int64_t size;
    bool lfs;
    char sha256[65]; /* lfs.oid: the content's sha256 (LFS files) */
    char sha1[41];   /* oid: the git blob sha1 (small files) */
};

struct hub_tree {
    struct hub_file *f;
    int n, cap;
};

/* Why a file name from the listing, or one made from it (a split shard's
 * name from its ".partNN"), must not be written: one that would leave the
 * directory (absolute, a ".." or empty part), control characters, a name
 * dsv41-top keeps for its own files. NULL when it is fine. */
const char *hub_path_problem(const char *path);
/* The commit of /api/models/REPO/revision/REV's answer. */
int hub_parse_revision(const char *json, char commit[41], struct buf *err);
/* Appends one page of /api/models/REPO/tree/COMMIT (directories skipped). */
int hub_parse_tree(const char *json, struct hub_tree *t, struct buf *err);
/* Sorts by path; refuses duplicates and a file that is also a directory. */
int hub_tree_check(struct hub_tree *t, struct buf *err);
const struct hub_file *hub_tree_find(const struct hub_tree *t, const char *path);
void hub_tree_free(struct hub_tree *t);
/* The rel="next" URL of a Link header into out; false when there is none. */
bool hub_link_next(const char *header, char *out, size_t sz);

struct hub {
    char endpoint[512]; /* HF_ENDPOINT, without a trailing '/' */
    char repo[256];
    struct buf token;   /* "" without one */
    CURL *h;
    const atomic_int *stop; /* when set and non-zero: a request and its retries give up */
    long stall_s;           /* HF_STALL_S: no byte this long ends a try */
    /* told before each retry what the hub did and what comes next (the
     * download prints it); NULL: silent. Not copied by hub_dup. */
    void (*on_wait)(void *arg, const char *what);
    void *wait_arg;
};

/* HF_ENDPOINT, HF_REPO and the token (HF_TOKEN, else the file HF_TOKEN_PATH). */
int hub_open(struct hub *h, const struct config *c, struct buf *err);
/* Another handle to the same hub (its own connection), for another thread. */
int hub_dup(struct hub *dst, const struct hub *src);
void hub_close(struct hub *h);
int hub_revision(struct hub *h, const char *rev, char commit[41], struct buf *err);
int hub_list(struct hub *h, const char *commit, struct hub_tree *t, struct buf *err);
/* Where the bytes of path come from: the URL the hub redirects to, or the
 * hub's own URL when it serves the file itself (*with_token then: the
 * request goes to the hub's host). */
int hub_resolve(struct hub *h, const char *commit, const char *path, struct buf *url,
                bool *with_token, struct buf *err);
/* A small file's bytes (at most max), into out. */
int hub_fetch(struct hub *h, const char *commit, const char *path, size_t max, struct buf *out,
              struct buf *err);
/* git's blob id of data: sha1("blob LEN\0" data), the tree's oid. */
void hub_git_sha1(const char *data, size_t len, char out[41]);
/* "Authorization: Bearer TOKEN" for requests to the hub; NULL without a token. */
struct curl_slist *hub_auth_header(const struct hub *h);
/* The error a hub status means, with what to do (401/403: the token). */
void hub_explain(const struct hub *h, long code, const char *what, const char *err_code,
                 struct buf *err);

#endif
