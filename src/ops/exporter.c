#include "exporter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mono.h"

struct exporter {
    struct MHD_Daemon *d;
    struct ops *o;
    char token[EXPORTER_TOKEN_MAX + 1]; /* "" none */
    char addr[128];
    pthread_mutex_t mu;
    double last_render_s; /* the previous scrape's rendering, for the page */
    unsigned long long scrapes, denied;
};

int exporter_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
                          struct buf *err)
{
    memset(ss, 0, sizeof *ss);
    const char *colon = strrchr(s, ':');
    if (!colon) {
        buf_printf(err, "--listen %s: expected ADDR:PORT (127.0.0.1:9841, [::1]:9841)", s);
        return -1;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || port < 1 || port > 65535) {
        buf_printf(err, "--listen %s: the port must be 1 to 65535", s);
        return -1;
    }
    char host[64];
    size_t hl = (size_t)(colon - s);
    if (hl >= sizeof host) {
        buf_printf(err, "--listen %s: the address is too long", s);
        return -1;
    }
    memcpy(host, s, hl);
    host[hl] = '\0';
    if (host[0] == '[' && hl >= 2 && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1) {
            buf_printf(err, "--listen %s: %s is no IPv6 address", s, host + 1);
            return -1;
        }
        *len = sizeof *a;
        return 0;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    if (!host[0])
        a->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
        buf_printf(err, "--listen %s: %s is no IPv4 address (an IPv6 one goes in brackets)", s,
                   host);
        return -1;
    }
    *len = sizeof *a;
    return 0;
}

bool exporter_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss->ss_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
    return false;
}

int exporter_read_token(const char *path, char *tok, size_t sz, struct buf *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        buf_printf(err, "EXPORTER_TOKEN_FILE %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid()) {
        buf_printf(err,
                   "EXPORTER_TOKEN_FILE %s must be a file of this account's that only it can "
                   "read: chmod 600 %s",
                   path, path);
        close(fd);
        return -1;
    }
    char raw[EXPORTER_TOKEN_MAX + 2];
    ssize_t n = read(fd, raw, sizeof raw - 1);
    close(fd);
    if (n < 0)
        n = 0;
    raw[n] = '\0';
    raw[strcspn(raw, "\r\n")] = '\0';
    size_t len = strlen(raw);
    bool printable = true;
    for (size_t i = 0; i < len; i++)
        printable &= raw[i] > ' ' && raw[i] < 127;
    if (len < 16 || len > EXPORTER_TOKEN_MAX || len + 1 > sz || !printable) {
        buf_printf(err,
                   "EXPORTER_TOKEN_FILE %s: one line of 16 to %d printable characters without "
                   "blanks (openssl rand -hex 32 > %s)",
                   path, EXPORTER_TOKEN_MAX, path);
        return -1;
    }
    memcpy(tok, raw, len + 1);
    return 0;
}

bool exporter_auth_ok(const char *header, const char *token)
{
    if (!header || strncmp(header, "Bearer ", 7) != 0)
        return false;
    const char *given = header + 7;
    size_t gl = strlen(given), tl = strlen(token);
    /* every byte of the token looked at whatever the guess: no timing hint */
    unsigned char diff = gl != tl;
    for (size_t i = 0; i < tl; i++)
        diff |= (unsigned char)token[i] ^ (unsigned char)(i < gl ? given[i] : 0);
    return diff == 0;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned code, const char *type,
                              const char *body, size_t len, bool challenge)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    if (challenge)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"dsv41-top\"");
    enum MHD_Result rc = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **req)
{
    (void)version;
    (void)upload_data;
    (void)req;
    struct exporter *x = cls;
    static const char text[] = "text/plain; charset=utf-8";
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        *upload_size = 0; /* a body is never read */
        return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, text, "GET /metrics\n", 13, false);
    }
    if (x->token[0] &&
        !exporter_auth_ok(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"),
                          x->token)) {
        pthread_mutex_lock(&x->mu);
        x->denied++;
        pthread_mutex_unlock(&x->mu);
        return answer(conn, MHD_HTTP_UNAUTHORIZED, text, "a bearer token is required\n", 27,
                      true);
    }
    if (strcmp(url, "/metrics") != 0) {
        static const char idx[] = "dsv41-top exporter: GET /metrics\n";
        return answer(conn, strcmp(url, "/") == 0 ? MHD_HTTP_OK : MHD_HTTP_NOT_FOUND, text, idx,
                      sizeof idx - 1, false);
    }
    double t0 = mono_s();
    struct buf page = BUF_INIT;
    ops_render(x->o, &page);
    pthread_mutex_lock(&x->mu);
    double prev = x->last_render_s;
    unsigned long long scrapes = ++x->scrapes, denied = x->denied;
    pthread_mutex_unlock(&x->mu);
    buf_printf(&page,
               "# HELP dsv41_exporter_render_seconds how long the previous scrape's page took to "
               "make\n# TYPE dsv41_exporter_render_seconds gauge\n"
               "dsv41_exporter_render_seconds %.6f\n"
               "# HELP dsv41_exporter_scrapes_total scrapes answered, by result\n"
               "# TYPE dsv41_exporter_scrapes_total counter\n"
               "dsv41_exporter_scrapes_total{result=\"ok\"} %llu\n"
               "dsv41_exporter_scrapes_total{result=\"denied\"} %llu\n",
               prev, scrapes, denied);
    pthread_mutex_lock(&x->mu);
    x->last_render_s = mono_s() - t0;
    pthread_mutex_unlock(&x->mu);
    enum MHD_Result rc =
        answer(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf_str(&page),
               page.len, false);
    buf_free(&page);
    return rc;
}

int exporter_start(const struct config *c, const char *listen, struct ops *o,
                   struct exporter **out, struct buf *err)
{
    *out = NULL;
    if (!listen)
        listen = config_str(c, CFG_EXPORTER_LISTEN);
    struct sockaddr_storage ss;
    socklen_t len;
    if (exporter_parse_listen(listen, &ss, &len, err) < 0)
        return -1;
    struct exporter *x = calloc(1, sizeof *x);
    if (!x) {
        buf_puts(err, "out of memory");
        return -1;
    }
    x->o = o;
    snprintf(x->addr, sizeof x->addr, "%s", listen);
    const char *tf = config_str(c, CFG_EXPORTER_TOKEN_FILE);
    if (tf[0] && exporter_read_token(tf, x->token, sizeof x->token, err) < 0) {
        free(x);
        return -1;
    }
    if (!tf[0] && !exporter_is_loopback(&ss)) {
        buf_printf(err,
                   "--listen %s is not loopback: set EXPORTER_TOKEN_FILE (a 0600 file with one "
                   "token: openssl rand -hex 32) and give Prometheus the same token "
                   "(authorization: credentials_file)",
                   listen);
        free(x);
        return -1;
    }
    pthread_mutex_init(&x->mu, NULL);
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    x->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, x, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)EXPORTER_CONNS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            (unsigned)EXPORTER_PER_IP, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)EXPORTER_REQ_BYTES, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)EXPORTER_IDLE_S, MHD_OPTION_END);
    if (!x->d) {
        buf_printf(err, "cannot listen on %s: %s (another exporter there? --listen ADDR:PORT)",
                   listen, errno ? strerror(errno) : "refused");
        pthread_mutex_destroy(&x->mu);
        free(x);
        return -1;
    }
    (void)len;
    *out = x;
    return 0;
}

const char *exporter_address(const struct exporter *x)
{
    return x->addr;
}

void exporter_stop(struct exporter *x)
{
    if (!x)
        return;
    MHD_stop_daemon(x->d);
    pthread_mutex_destroy(&x->mu);
    explicit_bzero(x->token, sizeof x->token);
    free(x);
}
