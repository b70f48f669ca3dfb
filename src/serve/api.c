#include "api.h"
#include "text.h"

#include "apikey.h"
#include "mono.h"
#include "probe.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

#define API_MAX_BODY (1u << 20)

int api_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

int api_base_url(const struct config *c, struct buf *out)
{
    const char *u = config_str(c, CFG_API_URL);
    if (u && *u) {
        size_t l = strlen(u);
        while (l && u[l - 1] == '/')
            l--;
        return buf_append(out, u, l);
    }
    return buf_printf(out, "http://127.0.0.1:%s", config_str(c, CFG_PORT));
}

/* The host of a URL, lower case; -1 when it has none. */
static int url_host(const char *url, char *out, size_t sz)
{
    CURLU *u = curl_url();
    char *h = NULL;
    int rc = -1;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK && h) {
        snprintf(out, sz, "%s", h);
        for (char *p = out; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        rc = 0;
    }
    curl_free(h);
    curl_url_cleanup(u);
    return rc;
}

bool api_same_host(const char *url, const char *configured, char host[256], char want[256])
{
    host[0] = want[0] = '\0';
    if (url_host(url, host, 256) < 0 || url_host(configured, want, 256) < 0)
        return false;
    return strcmp(host, want) == 0;
}

int api_load_key(const struct config *c, struct buf *key, struct buf *why)
{
    const char *env = config_str(c, CFG_DSV41_API_KEY);
    if (env && *env)
        return buf_puts(key, env);
    struct buf inner = BUF_INIT;
    int rc = apikey_read(config_str(c, CFG_API_KEY_FILE), key, &inner);
    if (rc < 0)
        buf_printf(why, "no API key: %s (launch creates it; or set DSV41_API_KEY)",
                   buf_str(&inner));
    buf_free(&inner);
    return rc;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct buf *b = ud;
    size_t len = sz * n;
    if (b->len + len > API_MAX_BODY)
        return 0;
    return buf_append(b, p, len) == 0 ? len : 0;
}

/* One handle per thread, kept between calls: its connection stays open
 * (keep-alive), so a watcher asking /health, /v1/models and /metrics every
 * second does not connect three times a second. */
static pthread_key_t g_easy_key;
static pthread_once_t g_easy_once = PTHREAD_ONCE_INIT;

static void easy_free(void *h)
{
    curl_easy_cleanup(h);
}

static void easy_key_init(void)
{
    pthread_key_create(&g_easy_key, easy_free);
}

static CURL *thread_easy(void)
{
    pthread_once(&g_easy_once, easy_key_init);
    CURL *h = pthread_getspecific(g_easy_key);
    if (h) {
        curl_easy_reset(h); /* options go, the open connection stays */
        return h;
    }
    h = curl_easy_init();
    if (h && pthread_setspecific(g_easy_key, h) != 0) {
        curl_easy_cleanup(h);
        h = NULL;
    }
    return h;
}

long api_get(const char *base, const char *path, const char *key, int timeout_ms, struct buf *body,
             struct buf *err)
{
    CURL *h = thread_easy();
    if (!h) {
        buf_puts(err, "cannot create an HTTP handle");
        return 0;
    }
    struct buf url = BUF_INIT, auth = BUF_INIT;
    buf_printf(&url, "%s%s", base, path);
    struct curl_slist *hdr = NULL;
    if (key && *key) {
        buf_printf(&auth, "Authorization: Bearer %s", key);
        hdr = curl_slist_append(hdr, buf_str(&auth));
    }
    char ebuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, buf_str(&url));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
    long code = 0;
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    else
        buf_puts(err, ebuf[0] ? ebuf : curl_easy_strerror(rc));
    /* nothing of this call stays pointed at by the kept handle */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
    curl_slist_free_all(hdr);
    apikey_scrub(&auth);
    buf_free(&url);
    return code;
}

void api_check_health(const struct config *c, int timeout_ms, struct api_health *h)
{
    memset(h, 0, sizeof *h);
    h->max_model_len = -1;
    struct buf base = BUF_INIT, body = BUF_INIT, err = BUF_INIT, key = BUF_INIT, why = BUF_INIT;
    api_base_url(c, &base);
    snprintf(h->url, sizeof h->url, "%s", buf_str(&base));
    h->health_code = api_get(buf_str(&base), "/health", NULL, timeout_ms, &body, &err);
    if (!h->health_code) {
        snprintf(h->error, sizeof h->error, "%s", buf_str(&err));
        goto out;
    }
    if (api_load_key(c, &key, &why) < 0) {
        snprintf(h->error, sizeof h->error, "%s", buf_str(&why));
        goto out;
    }
    buf_reset(&body);
    h->models_code = api_get(buf_str(&base), "/v1/models", buf_str(&key), timeout_ms, &body, &err);
    if (h->models_code == 200) {
        cJSON *j = cJSON_Parse(buf_str(&body));
        cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
        cJSON *m = cJSON_IsArray(data) ? cJSON_GetArrayItem(data, 0) : NULL;
        cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
        cJSON *ml = cJSON_GetObjectItemCaseSensitive(m, "max_model_len");
        if (cJSON_IsString(id))
            snprintf(h->model_id, sizeof h->model_id, "%s", id->valuestring);
        if (cJSON_IsNumber(ml) && ml->valuedouble >= 0 && ml->valuedouble < 1e15)
            h->max_model_len = (long)ml->valuedouble;
        if (!m)
            snprintf(h->error, sizeof h->error, "/v1/models answered without a model");
        cJSON_Delete(j);
    } else if (!h->models_code) {
        snprintf(h->error, sizeof h->error, "%s", buf_str(&err));
    }
out:
    apikey_scrub(&key);
    buf_free(&why);
    buf_free(&base);
    buf_free(&body);
    buf_free(&err);
}

static int on_sse_event(void *ctx, const char *data, size_t len)
{
    struct api_call *call = ctx;
    if (completion_event(&call->c, data, len, mono_s()) < 0)
        return -1;
    if ((call->stop_after > 0 && call->c.nchunks >= call->stop_after) ||
        (call->stop_after_s > 0 && call->c.nchunks &&
         call->c.t_last - call->c.t_first >= call->stop_after_s)) {
        call->stopped = true; /* enough: the transfer is cut on purpose */
        return 1;
    }
    return 0;
}

static size_t on_stream_body(char *p, size_t sz, size_t n, void *ud)
{
    struct api_call *call = ud;
    size_t len = sz * n;
    long code = 0;
    curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code == 200 && !call->stream && call->max_body) {
        if (call->raw.len + len > call->max_body)
            return 0;
        return buf_append(&call->raw, p, len) == 0 ? len : 0;
    }
    if (code != 200 || !call->stream)
        return on_body(p, sz, n, &call->raw);
    /* a malformed chunk stops the transfer: the reason is in c.error */
    return sse_feed(&call->sse, p, len) == 0 ? len : 0;
}

/* What a non-200 answer said: vLLM's {"error":{"message"}} or {"error":"..."}. */
static void http_error(struct api_call *call)
{
    cJSON *j = cJSON_Parse(buf_str(&call->raw));
    cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
    char msg[400];
    text_copy_field(msg, sizeof msg, cJSON_IsString(m) ? m->valuestring : buf_str(&call->raw),
                     cJSON_IsString(m) ? strlen(m->valuestring) : call->raw.len);
    snprintf(call->error, sizeof call->error, "HTTP %ld: %s", call->http_code, msg);
    cJSON_Delete(j);
}

static void finish_call(struct api_call *call, CURLcode res)
{
    curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &call->http_code);
    if (call->stopped)
        return;
    if (call->http_code == 200 && call->stream) {
        if (!call->c.error[0] || res == CURLE_OK)
            sse_finish(&call->sse);
        if (sse_overflowed(&call->sse) && !call->c.error[0])
            snprintf(call->c.error, sizeof call->c.error, "an event larger than 64 MiB");
    } else if (call->http_code == 200) {
        completion_body(&call->c, buf_str(&call->raw), mono_s());
    }
    if (call->http_code && call->http_code != 200)
        http_error(call);
    else if (call->c.error[0])
        snprintf(call->error, sizeof call->error, "%s", call->c.error);
    else if (res != CURLE_OK)
        snprintf(call->error, sizeof call->error, "%s", curl_easy_strerror(res));
    else if (call->stream && !call->c.done)
        snprintf(call->error, sizeof call->error,
                 "the stream ended without [DONE] after %d chunks (cut off?)", call->c.nchunks);
}

int api_run(const char *base, const char *key, struct api_call *calls, int n,
            const atomic_int *cancel)
{
    CURLM *multi = curl_multi_init();
    if (!multi)
        return 0;
    struct buf auth = BUF_INIT;
    if (key && *key)
        buf_printf(&auth, "Authorization: Bearer %s", key);
    for (int i = 0; i < n; i++) {
        struct api_call *call = &calls[i];
        CURL *h = curl_easy_init();
        call->easy = h;
        call->http_code = 0;
        call->error[0] = '\0';
        call->stopped = false;
        completion_init(&call->c, mono_s());
        sse_init(&call->sse, on_sse_event, call, 64u << 20);
        buf_reset(&call->raw);
        if (!h) {
            snprintf(call->error, sizeof call->error, "cannot create an HTTP handle");
            continue;
        }
        struct buf url = BUF_INIT;
        buf_printf(&url, "%s%s", base, call->path);
        call->hdr = curl_slist_append(NULL, "Content-Type: application/json");
        /* no "Expect: 100-continue" round trip before a large body: it would
         * count against TTFT */
        call->hdr = curl_slist_append(call->hdr, "Expect:");
        if (auth.len)
            call->hdr = curl_slist_append(call->hdr, buf_str(&auth));
        curl_easy_setopt(h, CURLOPT_URL, buf_str(&url));
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, call->hdr);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, call->body);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)call->timeout_ms);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, call);
        curl_easy_setopt(h, CURLOPT_PRIVATE, call);
        buf_free(&url);
        call->c.t_start = mono_s();
        curl_multi_add_handle(multi, h);
    }
    int running = 1;
    while (running && !(cancel && atomic_load(cancel))) {
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left)))
            if (msg->msg == CURLMSG_DONE) {
                struct api_call *call;
                curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&call);
                finish_call(call, msg->data.result);
            }
        if (running)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    int ok = 0;
    for (int i = 0; i < n; i++) {
        if (calls[i].easy) {
            if (cancel && atomic_load(cancel) && !calls[i].error[0] && !calls[i].c.done)
                snprintf(calls[i].error, sizeof calls[i].error, "cancelled");
            curl_multi_remove_handle(multi, calls[i].easy);
            curl_easy_cleanup(calls[i].easy);
            calls[i].easy = NULL;
        }
        curl_slist_free_all(calls[i].hdr);
        calls[i].hdr = NULL;
        ok += !calls[i].error[0];
    }
    curl_multi_cleanup(multi);
    apikey_scrub(&auth);
    return ok;
}

void api_call_free(struct api_call *call)
{
    completion_free(&call->c);
    sse_free(&call->sse);
    buf_free(&call->raw);
}

void api_version(const char *base, const char *key, int timeout_ms, char *out, size_t sz)
{
    struct buf body = BUF_INIT, err = BUF_INIT;
    snprintf(out, sz, "n/a");
    if (api_get(base, "/version", key, timeout_ms, &body, &err) == 200) {
        cJSON *j = cJSON_Parse(buf_str(&body));
        cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
        if (cJSON_IsString(v))
            text_copy_field(out, sz, v->valuestring, strlen(v->valuestring));
        cJSON_Delete(j);
    }
    buf_free(&body);
    buf_free(&err);
}
