#include "api.h"

#include "apikey.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#define API_MAX_BODY (1u << 20)

int api_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

int api_base_url(const struct config *c, struct buf *out)
{
    const char *u = config_get(c, "API_URL");
    if (u && *u) {
        size_t l = strlen(u);
        while (l && u[l - 1] == '/')
            l--;
        return buf_append(out, u, l);
    }
    return buf_printf(out, "http://127.0.0.1:%s", config_get(c, "PORT"));
}

int api_load_key(const struct config *c, struct buf *key, struct buf *why)
{
    const char *env = config_get(c, "DSV41_API_KEY");
    if (env && *env)
        return buf_puts(key, env);
    struct buf inner = BUF_INIT;
    int rc = apikey_read(config_get(c, "API_KEY_FILE"), key, &inner);
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

long api_get(const char *base, const char *path, const char *key, int timeout_ms, struct buf *body,
             struct buf *err)
{
    CURL *h = curl_easy_init();
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
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
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
