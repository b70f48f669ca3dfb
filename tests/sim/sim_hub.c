/* `dsv41-sim hub`: the Hugging Face hub as the download sees it, on
 * libmicrohttpd. The API lists a revision (`main` resolves to the commit in
 * ROOT/refs/main) and its tree in pages with a Link: rel="next" header;
 * `resolve` answers an LFS file with a 302 to a CDN URL and a small file with
 * its bytes. The CDN is ours (/cdn/COMMIT/PATH, signed with an expiry) or an
 * nginx on the same tree (--cdn URL). The token, when one is required, is
 * checked on the hub and must never reach the CDN: /_stats counts it.
 *
 * Faults (DSV41_HUB_FAULTS, comma-separated; our CDN only):
 *   drop=N/K        the first K CDN responses end after N bytes
 *   norange         the CDN answers 200 with the whole file to a Range request
 *   flip=PATH@OFF   the first time PATH's byte OFF is served it is flipped
 *   expire=S        a CDN URL expires S seconds after its resolve (403 then)
 *   429=K           the first K API and resolve requests get 429, Retry-After: 1
 *   rate=BYTES      each CDN response is paced at BYTES/s (a CDN's per-connection cap)
 *   link=URL        the tree's next-page Link names URL instead of this hub
 *   inject=PATH:SIZE the first tree page also lists a file PATH of SIZE bytes (a
 *                   hostile or broken listing: "../x", a duplicate, an absurd size)
 *   stall=TEXT      a request whose URL holds TEXT (API, resolve or CDN) gets its
 *                   status and headers, then never a byte: a hub gone quiet
 *   gate=PATH@FILE  PATH's CDN bytes leave only once FILE exists: a test orders
 *                   events by what happened (a copy seen on the worker), not by
 *                   how long a paced file lasts on a loaded machine */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "sim_hub.h"

static struct hub_repo g_repo;
static const char *g_repo_name = "0xSero/DeepSeek-V4.1-Flash-Spark";
static const char *g_token; /* required on the hub when set (a gated repo) */
static const char *g_cdn;   /* an external CDN (nginx) serving ROOT/revs */
static char g_self[128];    /* http://host:port */
static int g_page = 50;
static volatile sig_atomic_t g_stop;

static struct {
    long long drop_bytes;
    int drop_left;
    bool norange;
    char flip_path[512];
    long long flip_off;
    bool flip_done;
    int expire_s;
    int busy_left;
    long long rate;
    char inject_path[512];
    char link_base[256]; /* link=URL: the next page's Link names another host */
    char stall[256];
    char gate_path[512], gate_file[512];
    long long inject_size;
} F;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    long long cdn_bytes, cdn_requests, cdn_auth_seen, resolves, tree_pages, api_auth_refused;
    long long cdn_ranges, cdn_full;
} S;

static void stat_add(long long *v, long long d)
{
    pthread_mutex_lock(&g_mu);
    *v += d;
    pthread_mutex_unlock(&g_mu);
}

static void parse_faults(void)
{
    const char *f = getenv("DSV41_HUB_FAULTS");
    if (!f)
        return;
    char *copy = strdup(f), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (sscanf(t, "drop=%lld/%d", &F.drop_bytes, &F.drop_left) == 2) {
        } else if (strcmp(t, "norange") == 0) {
            F.norange = true;
        } else if (strncmp(t, "flip=", 5) == 0 && strchr(t, '@')) {
            snprintf(F.flip_path, sizeof F.flip_path, "%.*s", (int)(strchr(t, '@') - t - 5),
                     t + 5);
            F.flip_off = atoll(strchr(t, '@') + 1);
        } else if (sscanf(t, "expire=%d", &F.expire_s) == 1) {
        } else if (sscanf(t, "429=%d", &F.busy_left) == 1) {
        } else if (sscanf(t, "rate=%lld", &F.rate) == 1) {
        } else if (strncmp(t, "gate=", 5) == 0 && strchr(t, '@')) {
            snprintf(F.gate_path, sizeof F.gate_path, "%.*s", (int)(strchr(t, '@') - t - 5),
                     t + 5);
            snprintf(F.gate_file, sizeof F.gate_file, "%s", strchr(t, '@') + 1);
        } else if (strncmp(t, "stall=", 6) == 0) {
            snprintf(F.stall, sizeof F.stall, "%s", t + 6);
        } else if (strncmp(t, "link=", 5) == 0) {
            snprintf(F.link_base, sizeof F.link_base, "%s", t + 5);
        } else if (strncmp(t, "inject=", 7) == 0 && strrchr(t, ':')) {
            snprintf(F.inject_path, sizeof F.inject_path, "%.*s",
                     (int)(strrchr(t, ':') - t - 7), t + 7);
            F.inject_size = atoll(strrchr(t, ':') + 1);
        } else {
            fprintf(stderr, "dsv41-sim hub: unknown fault '%s'\n", t);
        }
    }
    free(copy);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
                             const char *body, const char *err_code)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (type)
        MHD_add_response_header(r, "Content-Type", type);
    if (err_code)
        MHD_add_response_header(r, "X-Error-Code", err_code);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result error_json(struct MHD_Connection *c, unsigned code, const char *msg,
                                  const char *err_code)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", msg);
    char *s = cJSON_PrintUnformatted(j);
    enum MHD_Result r = reply(c, code, "application/json", s, err_code);
    free(s);
    cJSON_Delete(j);
    return r;
}

/* A gated repo wants the token; the first K requests are "busy". */
static int gate(struct MHD_Connection *c, enum MHD_Result *ret)
{
    pthread_mutex_lock(&g_mu);
    bool busy = F.busy_left > 0 && F.busy_left--;
    pthread_mutex_unlock(&g_mu);
    if (busy) {
        struct MHD_Response *r = MHD_create_response_from_buffer(
            strlen("{\"error\":\"rate limited\"}"), (void *)"{\"error\":\"rate limited\"}",
            MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Retry-After", "1");
        *ret = MHD_queue_response(c, 429, r);
        MHD_destroy_response(r);
        return -1;
    }
    if (!g_token)
        return 0;
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    char want[512];
    snprintf(want, sizeof want, "Bearer %s", g_token);
    if (a && strcmp(a, want) == 0)
        return 0;
    stat_add(&S.api_auth_refused, 1);
    *ret = error_json(c, 401,
                      "Access to model is restricted. You must have access to it and be "
                      "authenticated to access it. Please log in.",
                      "GatedRepo");
    return -1;
}

static cJSON *entry_json(const struct hub_entry *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", e->dir ? "directory" : "file");
    cJSON_AddStringToObject(o, "oid", e->oid);
    cJSON_AddNumberToObject(o, "size", e->dir ? 0 : (double)e->size);
    cJSON_AddStringToObject(o, "path", e->path);
    if (e->lfs) {
        cJSON *l = cJSON_AddObjectToObject(o, "lfs");
        cJSON_AddStringToObject(l, "oid", e->sha256);
        cJSON_AddNumberToObject(l, "size", (double)e->size);
        cJSON_AddNumberToObject(l, "pointerSize", e->pointer_size);
    }
    return o;
}

static enum MHD_Result api(struct MHD_Connection *c, const char *rest)
{
    enum MHD_Result ret;
    if (gate(c, &ret) < 0)
        return ret;
    size_t rl = strlen(g_repo_name);
    if (strncmp(rest, g_repo_name, rl) != 0 || rest[rl] != '/')
        return error_json(c, 404, "Repository not found", "RepoNotFound");
    rest += rl + 1;
    bool tree = strncmp(rest, "tree/", 5) == 0, revision = strncmp(rest, "revision/", 9) == 0;
    if (!tree && !revision)
        return error_json(c, 404, "Not found", NULL);
    char rev[128];
    snprintf(rev, sizeof rev, "%.*s", (int)strcspn(rest + (tree ? 5 : 9), "/?"),
             rest + (tree ? 5 : 9));
    const struct hub_rev *v = hub_repo_find(&g_repo, rev);
    if (!v) {
        char msg[200];
        snprintf(msg, sizeof msg, "Invalid rev id: %s", rev);
        return error_json(c, 404, msg, "RevisionNotFound");
    }
    if (revision) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "id", g_repo_name);
        cJSON_AddStringToObject(j, "sha", v->commit);
        cJSON *sib = cJSON_AddArrayToObject(j, "siblings");
        for (int i = 0; i < v->n; i++)
            if (!v->e[i].dir) {
                cJSON *s = cJSON_CreateObject();
                cJSON_AddStringToObject(s, "rfilename", v->e[i].path);
                cJSON_AddItemToArray(sib, s);
            }
        char *s = cJSON_PrintUnformatted(j);
        ret = reply(c, 200, "application/json", s, NULL);
        free(s);
        cJSON_Delete(j);
        return ret;
    }
    const char *cur = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cursor");
    int from = cur ? atoi(cur) : 0;
    if (from < 0 || from > v->n)
        from = 0;
    int to = from + g_page < v->n ? from + g_page : v->n;
    cJSON *arr = cJSON_CreateArray();
    for (int i = from; i < to; i++)
        cJSON_AddItemToArray(arr, entry_json(&v->e[i]));
    if (from == 0 && F.inject_path[0]) {
        struct hub_entry e = {.path = F.inject_path, .size = F.inject_size};
        snprintf(e.oid, sizeof e.oid, "%040d", 0);
        cJSON_AddItemToArray(arr, entry_json(&e));
    }
    char *s = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(s), s, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (to < v->n) {
        char link[1024];
        snprintf(link, sizeof link,
                 "<%s/api/models/%s/tree/%s?recursive=true&expand=false&cursor=%d>; rel=\"next\"",
                 F.link_base[0] ? F.link_base : g_self, g_repo_name, rev, to);
        MHD_add_response_header(r, "Link", link);
    }
    stat_add(&S.tree_pages, 1);
    ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* A body from a file, in the range asked for, with the faults. */
struct body {
    int fd;
    long long start, len, sent;
    bool dropped, flip, gated;
    long long flip_at; /* offset in the file */
    struct timespec t0;
};

static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct body *b = cls;
    if ((long long)pos >= b->len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (b->dropped && b->sent >= F.drop_bytes)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    /* a thread per connection: waiting at the gate holds only this response */
    if (b->gated) {
        while (!g_stop && access(F.gate_file, F_OK) != 0)
            usleep(100000);
        b->gated = false;
        clock_gettime(CLOCK_MONOTONIC, &b->t0); /* the pace counts from the gate */
    }
    size_t want = max;
    if ((long long)want > b->len - (long long)pos)
        want = (size_t)(b->len - (long long)pos);
    if (b->dropped && (long long)want > F.drop_bytes - b->sent)
        want = (size_t)(F.drop_bytes - b->sent);
    if (F.rate > 0) { /* a CDN's per-connection cap: a byte leaves only when the rate allows */
        if ((long long)want > F.rate / 100 + 1)
            want = (size_t)(F.rate / 100 + 1);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - b->t0.tv_sec) + (now.tv_nsec - b->t0.tv_nsec) / 1e9;
        double ahead = (double)(b->sent + (long long)want) / (double)F.rate - el;
        if (ahead > 0)
            usleep((useconds_t)(ahead * 1e6));
    }
    ssize_t n = pread(b->fd, buf, want, b->start + (long long)pos);
    if (n <= 0)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    long long at = b->start + (long long)pos;
    if (b->flip && b->flip_at >= at && b->flip_at < at + n) {
        buf[b->flip_at - at] ^= 0x20;
        b->flip = false;
    }
    b->sent += n;
    stat_add(&S.cdn_bytes, n);
    return n;
}

static void free_body(void *cls)
{
    struct body *b = cls;
    close(b->fd);
    free(b);
}

/* Serves a file, whole or the one range asked for (with our faults when cdn). */
static enum MHD_Result send_file(struct MHD_Connection *c, const struct hub_rev *v,
                                 const struct hub_entry *e, bool cdn, bool head)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", v->dir, e->path);
    long long start = 0, end = e->size - 1;
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
    bool ranged = range && !(cdn && F.norange);
    if (ranged) {
        long long a = -1, b = -1;
        if (sscanf(range, "bytes=%lld-%lld", &a, &b) < 1 || a < 0 || a >= e->size) {
            char cr[64];
            snprintf(cr, sizeof cr, "bytes */%lld", (long long)e->size);
            struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
            MHD_add_response_header(r, "Content-Range", cr);
            enum MHD_Result ret = MHD_queue_response(c, 416, r);
            MHD_destroy_response(r);
            return ret;
        }
        start = a;
        end = b >= a && b < e->size ? b : e->size - 1;
    }
    struct body *bd = calloc(1, sizeof *bd);
    bd->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (bd->fd < 0) {
        free(bd);
        return error_json(c, 500, "cannot read the file", NULL);
    }
    bd->start = start;
    bd->len = head ? 0 : end - start + 1;
    clock_gettime(CLOCK_MONOTONIC, &bd->t0);
    if (cdn) {
        pthread_mutex_lock(&g_mu);
        S.cdn_requests++;
        S.cdn_ranges += ranged;
        S.cdn_full += !ranged;
        if (F.drop_left > 0 && !head) {
            F.drop_left--;
            bd->dropped = true;
        }
        if (F.flip_path[0] && !F.flip_done && strcmp(F.flip_path, e->path) == 0 &&
            F.flip_off >= start && F.flip_off <= end && !head) {
            F.flip_done = true;
            bd->flip = true;
            bd->flip_at = F.flip_off;
        }
        bd->gated = F.gate_path[0] && strcmp(F.gate_path, e->path) == 0 && !head;
        pthread_mutex_unlock(&g_mu);
    }
    struct MHD_Response *r =
        MHD_create_response_from_callback(head ? 0 : (uint64_t)(end - start + 1), 1 << 16,
                                          read_body, bd, free_body);
    char v1[128];
    snprintf(v1, sizeof v1, "\"%s\"", e->lfs ? e->sha256 : e->oid);
    MHD_add_response_header(r, "ETag", v1);
    MHD_add_response_header(r, "Accept-Ranges", "bytes");
    if (ranged) {
        char cr[128];
        snprintf(cr, sizeof cr, "bytes %lld-%lld/%lld", start, end, (long long)e->size);
        MHD_add_response_header(r, "Content-Range", cr);
    }
    enum MHD_Result ret = MHD_queue_response(c, ranged ? 206 : 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result resolve(struct MHD_Connection *c, const char *rest, bool head)
{
    enum MHD_Result ret;
    if (gate(c, &ret) < 0)
        return ret;
    stat_add(&S.resolves, 1);
    size_t rl = strlen(g_repo_name);
    if (strncmp(rest, g_repo_name, rl) != 0 || strncmp(rest + rl, "/resolve/", 9) != 0)
        return error_json(c, 404, "Repository not found", "RepoNotFound");
    rest += rl + 9;
    char rev[128];
    snprintf(rev, sizeof rev, "%.*s", (int)strcspn(rest, "/"), rest);
    const struct hub_rev *v = hub_repo_find(&g_repo, rev);
    if (!v)
        return error_json(c, 404, "Invalid rev id", "RevisionNotFound");
    const char *path = strchr(rest, '/');
    const struct hub_entry *e = path ? hub_rev_file(v, path + 1) : NULL;
    if (!e)
        return error_json(c, 404, "Entry not found", "EntryNotFound");
    if (!e->lfs) {
        /* small files come from the hub itself, as on huggingface.co */
        return send_file(c, v, e, false, head);
    }
    char loc[2048], size[32], etag[80];
    if (g_cdn)
        snprintf(loc, sizeof loc, "%s/%s/%s", g_cdn, v->commit, e->path);
    else
        snprintf(loc, sizeof loc, "%s/cdn/%s/%s?exp=%lld", g_self, v->commit, e->path,
                 (long long)time(NULL) + (F.expire_s ? F.expire_s : 86400));
    snprintf(size, sizeof size, "%lld", (long long)e->size);
    snprintf(etag, sizeof etag, "\"%s\"", e->sha256);
    struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Location", loc);
    MHD_add_response_header(r, "X-Repo-Commit", v->commit);
    MHD_add_response_header(r, "X-Linked-Etag", etag);
    MHD_add_response_header(r, "X-Linked-Size", size);
    snprintf(etag, sizeof etag, "\"%s\"", e->oid);
    MHD_add_response_header(r, "ETag", etag);
    ret = MHD_queue_response(c, 302, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result cdn(struct MHD_Connection *c, const char *rest, bool head)
{
    if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))
        stat_add(&S.cdn_auth_seen, 1); /* the token went where it must not */
    const char *exp = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "exp");
    if (!exp || atoll(exp) < (long long)time(NULL))
        return reply(c, 403, "text/plain", "Request has expired", NULL);
    char commit[64];
    snprintf(commit, sizeof commit, "%.*s", (int)strcspn(rest, "/"), rest);
    const struct hub_rev *v = hub_repo_find(&g_repo, commit);
    const char *path = strchr(rest, '/');
    const struct hub_entry *e = v && path ? hub_rev_file(v, path + 1) : NULL;
    if (!e)
        return reply(c, 404, "text/plain", "NoSuchKey", NULL);
    return send_file(c, v, e, true, head);
}

/* stall=TEXT: the headers go, then the body waits for the end of days (or
 * of the hub: a thread per connection, so waiting blocks only this one). */
static ssize_t read_nothing(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    while (!g_stop)
        usleep(100000);
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

static enum MHD_Result stalled(struct MHD_Connection *c)
{
    struct MHD_Response *r = MHD_create_response_from_callback(1000, 4096, read_nothing, NULL, NULL);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result stats(struct MHD_Connection *c)
{
    char s[512];
    pthread_mutex_lock(&g_mu);
    snprintf(s, sizeof s,
             "{\"cdn_bytes\":%lld,\"cdn_requests\":%lld,\"cdn_ranges\":%lld,\"cdn_full\":%lld,"
             "\"cdn_auth_seen\":%lld,\"resolves\":%lld,\"tree_pages\":%lld,"
             "\"api_auth_refused\":%lld}",
             S.cdn_bytes, S.cdn_requests, S.cdn_ranges, S.cdn_full, S.cdn_auth_seen, S.resolves,
             S.tree_pages, S.api_auth_refused);
    pthread_mutex_unlock(&g_mu);
    return reply(c, 200, "application/json", s, NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **state)
{
    (void)cls, (void)version, (void)data, (void)size;
    if (!*state) { /* headers first; no request body is read */
        *state = (void *)1;
        return MHD_YES;
    }
    bool head = strcmp(method, "HEAD") == 0;
    if (!head && strcmp(method, "GET") != 0)
        return error_json(c, 405, "method not allowed", NULL);
    if (F.stall[0] && strstr(url, F.stall))
        return stalled(c);
    if (strncmp(url, "/api/models/", 12) == 0)
        return api(c, url + 12);
    if (strncmp(url, "/cdn/", 5) == 0)
        return cdn(c, url + 5, head);
    if (strcmp(url, "/_stats") == 0)
        return stats(c);
    if (strstr(url, "/resolve/"))
        return resolve(c, url + 1, head);
    return error_json(c, 404, "Not found", NULL);
}

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

int hub_main(int argc, char **argv)
{
    const char *root = NULL, *host = "127.0.0.1";
    int port = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--root") == 0 && v)
            root = argv[++i];
        else if (strcmp(argv[i], "--repo") == 0 && v)
            g_repo_name = argv[++i];
        else if (strcmp(argv[i], "--port") == 0 && v)
            port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--host") == 0 && v)
            host = argv[++i];
        else if (strcmp(argv[i], "--page") == 0 && v)
            g_page = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 50;
        else if (strcmp(argv[i], "--token") == 0 && v)
            g_token = argv[++i];
        else if (strcmp(argv[i], "--cdn") == 0 && v)
            g_cdn = argv[++i];
        else {
            fprintf(stderr, "usage: dsv41-sim hub --root DIR --port P [--repo OWNER/NAME] "
                            "[--host H] [--page N] [--token T] [--cdn URL]\n");
            return 2;
        }
    }
    if (!root || port <= 0) {
        fprintf(stderr, "dsv41-sim hub: --root and --port are needed\n");
        return 2;
    }
    parse_faults();
    if (hub_repo_load(root, &g_repo) < 0)
        return 1;
    snprintf(g_self, sizeof g_self, "http://%s:%d", host, port);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, host, &a.sin_addr);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
        MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "dsv41-sim hub: cannot listen on %s:%d\n", host, port);
        return 1;
    }
    printf("hub %s serving %s, main %s, %d revision(s)\n", g_self, g_repo_name,
           g_repo.main_commit, g_repo.nrev);
    fflush(stdout);
    while (!g_stop)
        usleep(100000);
    MHD_stop_daemon(d);
    return 0;
}
