/* dsv41-sim receiver: an alert receiver for the tests - a webhook on
 * loopback that appends each POST it gets to a file as a JSON line (when
 * it came, its Content-Type and Title headers, its body) and answers 200;
 * with --fail N the first N are answered 503 (and recorded so), to try the
 * sender's retries. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
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

#define RECV_MAX_BODY (64 * 1024)

static FILE *g_out;
static int g_fail;
static int g_seen;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code)
{
    static const char ok[] = "ok\n";
    struct MHD_Response *r = MHD_create_response_from_buffer(sizeof ok - 1, (void *)ok,
                                                             MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **req_cls)
{
    (void)cls;
    (void)version;
    struct buf *body = *req_cls;
    if (!body) {
        if (!(body = calloc(1, sizeof *body)))
            return MHD_NO;
        *req_cls = body;
        return MHD_YES;
    }
    if (*upload_size) {
        if (body->len + *upload_size <= RECV_MAX_BODY)
            buf_append(body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    const char *title = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Title");
    pthread_mutex_lock(&g_mu);
    unsigned code = g_seen++ < g_fail ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "t_ms", (double)now_ms());
    cJSON_AddStringToObject(j, "method", method);
    cJSON_AddStringToObject(j, "url", url);
    cJSON_AddNumberToObject(j, "answered", code);
    cJSON_AddStringToObject(j, "content_type", type ? type : "");
    cJSON_AddStringToObject(j, "title", title ? title : "");
    cJSON_AddStringToObject(j, "body", buf_str(body));
    char *t = cJSON_PrintUnformatted(j);
    if (t) {
        fprintf(g_out, "%s\n", t);
        fflush(g_out);
    }
    free(t);
    cJSON_Delete(j);
    pthread_mutex_unlock(&g_mu);
    return reply(c, code);
}

static void done(void *cls, struct MHD_Connection *c, void **req_cls,
                 enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)c;
    (void)why;
    struct buf *body = *req_cls;
    if (body) {
        buf_free(body);
        free(body);
    }
    *req_cls = NULL;
}

int receiver_main(int argc, char **argv)
{
    const char *host = "127.0.0.1", *out = NULL;
    int port = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--host") == 0)
            host = argv[i + 1];
        else if (strcmp(argv[i], "--port") == 0)
            port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--out") == 0)
            out = argv[i + 1];
        else if (strcmp(argv[i], "--fail") == 0)
            g_fail = atoi(argv[i + 1]);
    }
    if (!out || port <= 0 || port > 65535) {
        fprintf(stderr, "usage: dsv41-sim receiver --port P --out FILE [--host A] [--fail N]\n");
        return 2;
    }
    if (!(g_out = fopen(out, "a"))) {
        perror(out);
        return 1;
    }
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        fprintf(stderr, "dsv41-sim receiver: --host %s is not an IPv4 address\n", host);
        return 2;
    }
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                         handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
                         MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "dsv41-sim receiver: cannot listen on %s:%d\n", host, port);
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("receiver on http://%s:%d/ -> %s\n", host, port, out);
    fflush(stdout);
    while (!g_stop)
        pause();
    MHD_stop_daemon(d);
    fclose(g_out);
    return 0;
}
