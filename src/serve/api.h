/* api: the OpenAI-compatible HTTP API of rank 0, through libcurl. This first
 * part answers health questions; the streaming client comes with the serving
 * checks. The key travels only in a header, never in a URL or a log. */
#ifndef DSV41_API_H
#define DSV41_API_H

#include <stdatomic.h>
#include <stdbool.h>

#include "buf.h"
#include "completion.h"
#include "config.h"
#include "sse.h"

struct curl_slist;

struct api_health {
    char url[256];
    long health_code; /* HTTP status of /health; 0 when no answer */
    long models_code; /* HTTP status of /v1/models with the key */
    char model_id[128];
    long max_model_len; /* -1 when not reported */
    char error[256];    /* transport error, if any */
};

int api_global_init(void);
/* Base URL: API_URL, else http://127.0.0.1:PORT. */
int api_base_url(const struct config *c, struct buf *out);
/* The key: DSV41_API_KEY, else the contents of API_KEY_FILE; -1 with a reason
 * when neither is available or the file is readable by others. */
/* True when url names the host of the configured API URL (host and want
 * get both hosts, lower case; "" when a URL has none). */
bool api_same_host(const char *url, const char *configured, char host[256], char want[256]);
int api_load_key(const struct config *c, struct buf *key, struct buf *why);
/* GET base+path; body capped at 1 MiB. Returns the HTTP status or 0 on a
 * transport error (err says which). */
long api_get(const char *base, const char *path, const char *key, int timeout_ms, struct buf *body,
             struct buf *err);
void api_check_health(const struct config *c, int timeout_ms, struct api_health *h);
/* The server's vLLM version (GET /version, {"version": ...}: vllm/entrypoints/
 * openai/api_server.py), cleaned, into out; "n/a" when it does not say. */
void api_version(const char *base, const char *key, int timeout_ms, char *out, size_t sz);

/* One completion request (chat or text, streamed or not). Many run at once
 * through libcurl multi in the calling thread (api_run). */
struct api_call {
    /* in */
    const char *path; /* "/v1/chat/completions" or "/v1/completions" */
    char *body;       /* JSON, owned by the caller */
    bool stream;
    int timeout_ms;
    int stop_after; /* > 0: close the stream after this many chunks (not an error) */
    double stop_after_s; /* > 0: close it this long after the first chunk (not an error) */
    size_t max_body;     /* a non-streamed answer's cap; 0: 1 MiB */
    /* out */
    long http_code;     /* 0 when no answer */
    struct completion c; /* what came back, with chunk times */
    char error[512];    /* transport or server error; "" when none */
    /* private */
    void *easy;
    struct curl_slist *hdr;
    struct sse_parser sse;
    struct buf raw;
    bool stopped;
};

/* Runs calls[0..n) concurrently against base with the key. Stops early when
 * *cancel becomes non-zero. Returns the number of calls without an error. */
int api_run(const char *base, const char *key, struct api_call *calls, int n,
            const atomic_int *cancel);
void api_call_free(struct api_call *call);

#endif
