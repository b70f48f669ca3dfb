/* hub: see hub.h. */
#include "hub.h"

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "text.h"
#include "verify.h"

#define HUB_MAX_PAGE (64u << 20)
#define HUB_TRIES 5

static bool is_hex(const char *s, size_t n)
{
    if (strlen(s) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
            return false;
    return true;
}

int hub_parse_revision(const char *json, char commit[41], struct buf *err)
{
    cJSON *j = cJSON_Parse(json);
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(j, "sha");
    int rc = -1;
    if (!cJSON_IsString(sha) || !is_hex(sha->valuestring, 40))
        buf_puts(err, "the hub's revision answer has no commit (\"sha\" of 40 hex digits)");
    else {
        memcpy(commit, sha->valuestring, 41);
        rc = 0;
    }
    cJSON_Delete(j);
    return rc;
}

/* A path from the listing that we will create: inside the directory, plain
 * components, no name we keep for ourselves. */
const char *hub_path_problem(const char *p)
{
    const char *why = verify_path_problem(p);
    if (why)
        return why;
    if (strlen(p) > 1000)
        return "path longer than 1000 bytes";
    for (const unsigned char *s = (const unsigned char *)p; *s; s++) {
        if (*s < 0x20 || *s == 0x7f || *s == '\\')
            return "control character or backslash in the path";
        /* C1 controls (U+0080-U+009F) and bidi overrides (U+202A-U+202E,
         * U+2066-U+2069): a name must print as what it is */
        if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
            return "control character in the path";
        if (s[0] == 0xe2 && ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
                             (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)))
            return "bidirectional override in the path";
    }
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 1 && s[0] == '.'))
            return "empty or '.' part in the path";
        s += n + (s[n] == '/');
    }
    if (p[0] && p[strlen(p) - 1] == '/')
        return "empty or '.' part in the path";
    /* names we keep for our own files, in any directory: the state, the
     * lock, assemble's journals, outputs being written */
    if (strstr(p, ".dsv41-") || strstr(p, ".incomplete"))
        return "a name dsv41-top keeps for its own files";
    return NULL;
}

static int tree_add(struct hub_tree *t, const struct hub_file *f, struct buf *err)
{
    if (t->n == HUB_MAX_FILES) {
        buf_printf(err, "the listing has more than %d files", HUB_MAX_FILES);
        return -1;
    }
    if (t->n == t->cap) {
        int nc = t->cap ? t->cap * 2 : 64;
        struct hub_file *nf = realloc(t->f, sizeof *nf * (size_t)nc);
        if (!nf) {
            buf_puts(err, "out of memory");
            return -1;
        }
        t->f = nf;
        t->cap = nc;
    }
    t->f[t->n] = *f;
    t->f[t->n].path = strdup(f->path);
    if (!t->f[t->n].path) {
        buf_puts(err, "out of memory");
        return -1;
    }
    t->n++;
    return 0;
}

int hub_parse_tree(const char *json, struct hub_tree *t, struct buf *err)
{
    cJSON *j = cJSON_Parse(json);
    if (!cJSON_IsArray(j)) {
        buf_puts(err, "the hub's tree listing is not a JSON array");
        cJSON_Delete(j);
        return -1;
    }
    int rc = 0, i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j)
    {
        i++;
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(e, "size");
        const cJSON *oid = cJSON_GetObjectItemCaseSensitive(e, "oid");
        const cJSON *lfs = cJSON_GetObjectItemCaseSensitive(e, "lfs");
        char shown[120];
        text_clean(shown, sizeof shown, cJSON_IsString(path) ? path->valuestring : "?",
                   cJSON_IsString(path) ? strlen(path->valuestring) : 1);
        if (!cJSON_IsString(type) || !cJSON_IsString(path)) {
            buf_printf(err, "listing entry %d: no type or path", i);
            rc = -1;
            break;
        }
        const char *why = hub_path_problem(path->valuestring);
        if (why) {
            buf_printf(err, "listing entry '%s': %s", shown, why);
            rc = -1;
            break;
        }
        if (strcmp(type->valuestring, "file") != 0)
            continue; /* directories come with their files */
        struct hub_file f = {.path = path->valuestring};
        if (!cJSON_IsNumber(size) || size->valuedouble < 0 ||
            size->valuedouble > (double)HUB_MAX_FILE_SIZE ||
            size->valuedouble != (double)(int64_t)size->valuedouble) {
            buf_printf(err, "listing entry '%s': size not a whole number of bytes up to 1 TiB",
                       shown);
            rc = -1;
            break;
        }
        f.size = (int64_t)size->valuedouble;
        if (cJSON_IsObject(lfs)) {
            const cJSON *lo = cJSON_GetObjectItemCaseSensitive(lfs, "oid");
            const cJSON *ls = cJSON_GetObjectItemCaseSensitive(lfs, "size");
            if (!cJSON_IsString(lo) || !is_hex(lo->valuestring, 64) || !cJSON_IsNumber(ls) ||
                ls->valuedouble != size->valuedouble) {
                buf_printf(err, "listing entry '%s': lfs needs a sha256 oid and the file's size",
                           shown);
                rc = -1;
                break;
            }
            f.lfs = true;
            memcpy(f.sha256, lo->valuestring, 65);
        } else if (!cJSON_IsString(oid) || !is_hex(oid->valuestring, 40)) {
            buf_printf(err, "listing entry '%s': no git oid (40 hex digits)", shown);
            rc = -1;
            break;
        } else {
            memcpy(f.sha1, oid->valuestring, 41);
        }
        if (tree_add(t, &f, err) < 0) {
            rc = -1;
            break;
        }
    }
    cJSON_Delete(j);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct hub_file *)a)->path, ((const struct hub_file *)b)->path);
}

int hub_tree_check(struct hub_tree *t, struct buf *err)
{
    if (t->n == 0) {
        buf_puts(err, "the listing has no files");
        return -1;
    }
    qsort(t->f, (size_t)t->n, sizeof *t->f, by_path);
    int64_t total = 0;
    for (int i = 0; i < t->n; i++) {
        total += t->f[i].size;
        if (i && strcmp(t->f[i].path, t->f[i - 1].path) == 0) {
            buf_printf(err, "the listing names %s twice", t->f[i].path);
            return -1;
        }
        /* "a" and "a/b": a file where a directory must be */
        size_t l = strlen(t->f[i].path);
        for (int k = i + 1; k < t->n && strncmp(t->f[k].path, t->f[i].path, l) == 0; k++)
            if (t->f[k].path[l] == '/') {
                buf_printf(err, "the listing has %s both as a file and as a directory",
                           t->f[i].path);
                return -1;
            }
    }
    if (total > 64 * HUB_MAX_FILE_SIZE) {
        buf_puts(err, "the listing adds up to more than 64 TiB");
        return -1;
    }
    return 0;
}

const struct hub_file *hub_tree_find(const struct hub_tree *t, const char *path)
{
    struct hub_file key = {.path = (char *)path};
    return bsearch(&key, t->f, (size_t)t->n, sizeof *t->f, by_path);
}

void hub_tree_free(struct hub_tree *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->f[i].path);
    free(t->f);
    memset(t, 0, sizeof *t);
}

bool hub_link_next(const char *header, char *out, size_t sz)
{
    /* <URL>; rel="next", possibly among others, separated by commas */
    for (const char *p = header; (p = strchr(p, '<'));) {
        const char *end = strchr(p, '>');
        if (!end)
            return false;
        const char *params = end + 1, *stop = strchr(params, '<');
        size_t pl = stop ? (size_t)(stop - params) : strlen(params);
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)(pl < sizeof buf - 1 ? pl : sizeof buf - 1),
                 params);
        if (strstr(buf, "rel=\"next\"") || strstr(buf, "rel=next")) {
            size_t ul = (size_t)(end - p - 1);
            if (ul + 1 > sz || (strncmp(p + 1, "http://", 7) && strncmp(p + 1, "https://", 8)))
                return false;
            memcpy(out, p + 1, ul);
            out[ul] = '\0';
            return true;
        }
        p = end;
    }
    return false;
}

/* ---- requests ------------------------------------------------------------------ */

struct reply {
    struct buf body;
    char link[2048], location[4096], err_code[64];
    long retry_after;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct reply *r = ud;
    if (r->body.len + sz * n > HUB_MAX_PAGE)
        return 0;
    return buf_append(&r->body, p, sz * n) == 0 ? sz * n : 0;
}

/* A header's value copied (trimmed) when its name matches. */
static void header_value(const char *line, size_t len, const char *name, char *out, size_t sz)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
        return;
    const char *v = line + nl + 1;
    size_t vl = len - nl - 1;
    while (vl && (*v == ' ' || *v == '\t'))
        v++, vl--;
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
        vl--;
    snprintf(out, sz, "%.*s", (int)vl, v);
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct reply *r = ud;
    size_t len = sz * n;
    char ra[32] = "";
    header_value(p, len, "Link", r->link, sizeof r->link);
    header_value(p, len, "Location", r->location, sizeof r->location);
    char ec[sizeof r->err_code] = ""; /* quoted in messages: cleaned */
    header_value(p, len, "X-Error-Code", ec, sizeof ec);
    if (ec[0])
        text_clean(r->err_code, sizeof r->err_code, ec, strlen(ec));
    header_value(p, len, "Retry-After", ra, sizeof ra);
    if (ra[0]) { /* seconds; an HTTP date or nonsense: our own backoff */
        long v = atol(ra);
        r->retry_after = v > 0 ? (v < 300 ? v : 300) : -1;
    }
    return len;
}

struct curl_slist *hub_auth_header(const struct hub *h)
{
    if (!h->token.len)
        return NULL;
    struct buf a = BUF_INIT;
    buf_printf(&a, "Authorization: Bearer %s", buf_str(&h->token));
    struct curl_slist *l = curl_slist_append(NULL, buf_str(&a));
    memset(a.data, 0, a.len);
    buf_free(&a);
    return l;
}

void hub_explain(const struct hub *h, long code, const char *what, const char *err_code,
                 struct buf *err)
{
    if (code == 401 || code == 403)
        buf_printf(err, "%s: the hub refused access (HTTP %ld%s%s): %s", what, code,
                   err_code && *err_code ? ", " : "", err_code ? err_code : "",
                   h->token.len ? "HF_TOKEN has no access to this repository: use a token "
                                  "that does (read access to HF_REPO)"
                                : "set HF_TOKEN (a token with access to HF_REPO), or log in "
                                  "with `huggingface-cli login`");
    else if (code == 404 && err_code && strcmp(err_code, "RevisionNotFound") == 0)
        buf_printf(err, "%s: the revision is not in %s (HTTP 404): check REVISION", what,
                   h->repo);
    else if (code == 404 && err_code && strcmp(err_code, "EntryNotFound") == 0)
        buf_printf(err, "%s: no such file in %s (HTTP 404)", what, h->repo);
    else if (code == 404)
        buf_printf(err, "%s: repository %s not found on %s (HTTP 404): check HF_REPO and "
                        "HF_ENDPOINT",
                   what, h->repo, h->endpoint);
    else
        buf_printf(err, "%s: the hub answered HTTP %ld", what, code);
}

/* One request to the hub (the token goes along), retried on connection
 * errors, 429 and 5xx with backoff and the server's Retry-After. Returns the
 * HTTP status, or -1 with err filled. */
static bool stopped(const struct hub *h)
{
    return h->stop && atomic_load(h->stop);
}

static int on_xferinfo(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return stopped(ud) ? 1 : 0;
}

/* The path of url, for messages: what was asked of the hub, not where. */
static void url_path(const char *url, char *out, size_t sz)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    snprintf(out, sz, "%.*s", p ? (int)strcspn(p, "?") : 1, p ? p : "/");
}

/* The seconds a whole metadata request (a tree page, a small file) may take:
 * a hub that trickles a byte now and then never stalls, but never ends either. */
#define HUB_DEADLINE_S 300L

/* One GET (or HEAD) of url, tried up to HUB_TRIES times: a try that cannot
 * connect, gets no byte for HF_STALL_S, outlasts HUB_DEADLINE_S, or is
 * answered 429 or 5xx is tried again after a backoff (Retry-After when the
 * hub gives one), each retry told to on_wait. The token goes only when
 * with_token. Its status, or -1 with err naming the path and what to check. */
static long hub_request(struct hub *h, const char *url, bool with_token, bool nobody,
                        struct reply *r, struct buf *err)
{
    struct curl_slist *hdr = with_token ? hub_auth_header(h) : NULL;
    hdr = curl_slist_append(hdr, "Accept: application/json");
    long code = -1, stall = h->stall_s > 0 ? h->stall_s : 30;
    char cerr[CURL_ERROR_SIZE] = "", path[300];
    url_path(url, path, sizeof path);
    CURLcode rc = CURLE_OK;
    for (int attempt = 0; attempt < HUB_TRIES; attempt++) {
        buf_reset(&r->body);
        r->link[0] = r->location[0] = r->err_code[0] = '\0';
        r->retry_after = -1;
        cerr[0] = '\0';
        curl_easy_reset(h->h);
        curl_easy_setopt(h->h, CURLOPT_URL, url);
        curl_easy_setopt(h->h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h->h, CURLOPT_FOLLOWLOCATION, 0L); /* the token stays on the hub */
        curl_easy_setopt(h->h, CURLOPT_NOBODY, nobody ? 1L : 0L);
        curl_easy_setopt(h->h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h->h, CURLOPT_WRITEDATA, r);
        curl_easy_setopt(h->h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h->h, CURLOPT_HEADERDATA, r);
        curl_easy_setopt(h->h, CURLOPT_ERRORBUFFER, cerr);
        curl_easy_setopt(h->h, CURLOPT_CONNECTTIMEOUT, 15L);
        /* stalled: no byte for HF_STALL_S (headers then silence, too) */
        curl_easy_setopt(h->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h->h, CURLOPT_LOW_SPEED_TIME, stall);
        curl_easy_setopt(h->h, CURLOPT_TIMEOUT, HUB_DEADLINE_S);
        curl_easy_setopt(h->h, CURLOPT_USERAGENT, "dsv41-top");
        curl_easy_setopt(h->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h->h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h->h, CURLOPT_XFERINFOFUNCTION, on_xferinfo);
        curl_easy_setopt(h->h, CURLOPT_XFERINFODATA, h);
        rc = curl_easy_perform(h->h);
        code = -1;
        if (rc == CURLE_OK)
            curl_easy_getinfo(h->h, CURLINFO_RESPONSE_CODE, &code);
        if (rc == CURLE_OK && code != 429 && code < 500)
            break;
        if (attempt + 1 == HUB_TRIES || stopped(h))
            break;
        long wait_ms = r->retry_after >= 0 ? r->retry_after * 1000 : 500L << attempt;
        wait_ms = wait_ms > 30000 ? 30000 : wait_ms;
        if (h->on_wait) {
            char what[600];
            if (rc == CURLE_OPERATION_TIMEDOUT)
                snprintf(what, sizeof what, "%s: the hub sent nothing for %ld s (try %d of %d; "
                         "again in %.1f s)", path, stall, attempt + 1, HUB_TRIES, wait_ms / 1000.0);
            else if (rc != CURLE_OK)
                snprintf(what, sizeof what, "%s: %s (try %d of %d; again in %.1f s)", path,
                         cerr[0] ? cerr : curl_easy_strerror(rc), attempt + 1, HUB_TRIES,
                         wait_ms / 1000.0);
            else
                snprintf(what, sizeof what, "%s: HTTP %ld (try %d of %d; again in %.1f s)", path,
                         code, attempt + 1, HUB_TRIES, wait_ms / 1000.0);
            h->on_wait(h->wait_arg, what);
        }
        for (long slept = 0; slept < wait_ms && !stopped(h); slept += 50) /* stop wins */
            usleep(50 * 1000);
    }
    curl_slist_free_all(hdr);
    if (code < 0 && stopped(h))
        buf_puts(err, "interrupted");
    else if (code < 0 && rc == CURLE_OPERATION_TIMEDOUT)
        buf_printf(err, "%s on %s: the hub answered too slowly or not at all (%s) in %d tries: "
                   "check the network and %s's status, or raise HF_STALL_S (%ld s)",
                   path, h->endpoint, cerr[0] ? cerr : "timed out", HUB_TRIES, h->endpoint, stall);
    else if (code < 0)
        buf_printf(err, "cannot reach %s (%s): %s (check the network, or HF_ENDPOINT)", h->endpoint,
                   path, cerr[0] ? cerr : "no answer");
    return code;
}

static long hub_get(struct hub *h, const char *url, bool nobody, struct reply *r,
                    struct buf *err)
{
    return hub_request(h, url, true, nobody, r, err);
}

int hub_open(struct hub *h, const struct config *c, struct buf *err)
{
    memset(h, 0, sizeof *h);
    const char *ep = config_str(c, CFG_HF_ENDPOINT);
    size_t l = strlen(ep);
    while (l && ep[l - 1] == '/')
        l--;
    snprintf(h->endpoint, sizeof h->endpoint, "%.*s", (int)l, ep);
    snprintf(h->repo, sizeof h->repo, "%s", config_str(c, CFG_HF_REPO));
    const char *tok = config_str(c, CFG_HF_TOKEN);
    if (tok && *tok) {
        buf_puts(&h->token, tok);
    } else if (buf_read_file(&h->token, config_str(c, CFG_HF_TOKEN_PATH), 4096) == 0) {
        while (h->token.len && isspace((unsigned char)h->token.data[h->token.len - 1]))
            h->token.data[--h->token.len] = '\0';
    }
    h->stall_s = config_long(c, CFG_HF_STALL_S);
    h->h = curl_easy_init();
    if (!h->h) {
        buf_puts(err, "cannot start libcurl");
        return -1;
    }
    return 0;
}

int hub_dup(struct hub *dst, const struct hub *src)
{
    memset(dst, 0, sizeof *dst);
    memcpy(dst->endpoint, src->endpoint, sizeof dst->endpoint);
    memcpy(dst->repo, src->repo, sizeof dst->repo);
    buf_append(&dst->token, src->token.data ? src->token.data : "", src->token.len);
    dst->stall_s = src->stall_s;
    dst->h = curl_easy_init();
    return dst->h ? 0 : -1;
}

void hub_close(struct hub *h)
{
    if (h->token.data)
        memset(h->token.data, 0, h->token.cap);
    buf_free(&h->token);
    if (h->h)
        curl_easy_cleanup(h->h);
    h->h = NULL;
}

int hub_revision(struct hub *h, const char *rev, char commit[41], struct buf *err)
{
    struct buf url = BUF_INIT;
    struct reply r = {0};
    buf_printf(&url, "%s/api/models/%s/revision/%s", h->endpoint, h->repo, rev);
    long code = hub_get(h, buf_str(&url), false, &r, err);
    int rc = -1;
    if (code == 200)
        rc = hub_parse_revision(buf_str(&r.body), commit, err);
    else if (code > 0)
        hub_explain(h, code, "the revision", r.err_code, err);
    buf_free(&url);
    buf_free(&r.body);
    return rc;
}

int hub_list(struct hub *h, const char *commit, struct hub_tree *t, struct buf *err)
{
    memset(t, 0, sizeof *t);
    char *url = malloc(4096);
    if (!url) {
        buf_puts(err, "out of memory");
        return -1;
    }
    snprintf(url, 4096, "%s/api/models/%s/tree/%s?recursive=true&expand=false", h->endpoint,
             h->repo, commit);
    struct reply r = {0};
    int rc = 0, pages = 0;
    for (;;) {
        long code = hub_get(h, url, false, &r, err);
        if (code != 200) {
            if (code > 0)
                hub_explain(h, code, "the listing", r.err_code, err);
            rc = -1;
            break;
        }
        if (hub_parse_tree(buf_str(&r.body), t, err) < 0 || ++pages > 10000) {
            rc = -1;
            break;
        }
        if (!r.link[0] || !hub_link_next(r.link, url, 4096))
            break;
        /* the next page gets the token too: only from the hub itself */
        size_t el = strlen(h->endpoint);
        if (strncmp(url, h->endpoint, el) != 0 || url[el] != '/') {
            char shown[256];
            text_clean(shown, sizeof shown, url, strlen(url));
            buf_printf(err, "the listing's next page is not on %s (Link: <%s>): refused, the "
                            "token goes to the hub's host only",
                       h->endpoint, shown);
            rc = -1;
            break;
        }
    }
    free(url);
    buf_free(&r.body);
    if (rc == 0)
        rc = hub_tree_check(t, err);
    if (rc < 0)
        hub_tree_free(t);
    return rc;
}

int hub_resolve(struct hub *h, const char *commit, const char *path, struct buf *url,
                bool *with_token, struct buf *err)
{
    struct buf u = BUF_INIT;
    struct reply r = {0};
    buf_printf(&u, "%s/%s/resolve/%s/%s", h->endpoint, h->repo, commit, path);
    long code = hub_get(h, buf_str(&u), true, &r, err);
    int rc = -1;
    if (code >= 300 && code < 400 && r.location[0]) {
        if (r.location[0] == '/') /* relative: the hub's own host */
            buf_printf(url, "%s%s", h->endpoint, r.location);
        else
            buf_puts(url, r.location);
        /* a redirect target never gets the token, even on the hub's host: a
         * signed CDN URL needs none */
        *with_token = false;
        rc = 0;
    } else if (code == 200) {
        buf_puts(url, buf_str(&u));
        *with_token = true;
        rc = 0;
    } else if (code > 0) {
        hub_explain(h, code, path, r.err_code, err);
    }
    buf_free(&u);
    buf_free(&r.body);
    return rc;
}

int hub_fetch(struct hub *h, const char *commit, const char *path, size_t max, struct buf *out,
              struct buf *err)
{
    struct buf url = BUF_INIT;
    bool with_token = false;
    int rc = hub_resolve(h, commit, path, &url, &with_token, err);
    if (rc == 0) {
        struct reply r = {0};
        struct buf e = BUF_INIT;
        long code = hub_request(h, buf_str(&url), with_token, false, &r, &e);
        if (code == 200 && r.body.len <= max) {
            buf_append(out, buf_str(&r.body), r.body.len);
        } else {
            if (code > 0)
                hub_explain(h, code, path, NULL, err);
            else
                buf_printf(err, "%s: %s", path, buf_str(&e));
            rc = -1;
        }
        buf_free(&e);
        buf_free(&r.body);
    }
    buf_free(&url);
    return rc;
}

void hub_git_sha1(const char *data, size_t len, char out[41])
{
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dl = 0;
    char head[40];
    int n = snprintf(head, sizeof head, "blob %zu", len);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    EVP_DigestInit_ex(c, EVP_sha1(), NULL);
    EVP_DigestUpdate(c, head, (size_t)n + 1);
    EVP_DigestUpdate(c, data, len);
    EVP_DigestFinal_ex(c, d, &dl);
    EVP_MD_CTX_free(c);
    for (unsigned i = 0; i < 20; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}
