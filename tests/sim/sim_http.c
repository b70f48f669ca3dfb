/* dsv41-sim's API, on libmicrohttpd: /health, /v1/models, /v1/chat/completions
 * and /v1/completions (streamed or not) and /metrics, in vLLM's formats, with
 * bearer auth and tokens paced at the configured prefill and decode rates. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "sim.h"
#include "sim_answer.h"
#include "sim_logprobs.h"
#include "sim_metrics.h"

#define MAX_BODY (64u << 20)

static const struct sim_opts *g_opts;
/* Requests between their first byte and their last answer byte: what a
 * drain waits for. */
static atomic_int g_in_flight;
static volatile int *g_peer_lost;
static volatile int *g_stopping;

/* A wedged engine (its peer rank gone, or DSV41_SIM_FREEZE_AFTER_MS) holds
 * its requests until the process stops. */
static void wait_while_wedged(void)
{
    while ((*g_peer_lost || sim_engine_frozen()) && !*g_stopping)
        usleep(200000);
}

/* DSV41_SIM_FAULT: "cut:N" closes the stream after N items, "malformed:N"
 * sends a broken chunk after N items, "http500" answers 500, "dead:N" kills
 * the engine once N tokens were served (engine_dead below). */
static const char *fault(int *n)
{
    const char *f = getenv("DSV41_SIM_FAULT");
    if (!f || !*f)
        return "";
    const char *colon = strchr(f, ':');
    *n = colon ? atoi(colon + 1) : 0;
    return f;
}

/* The engine died (EngineDeadError), as vLLM's API process sees it
 * (vllm/v1/engine/exceptions.py: the message; entrypoints serve/instrumentator
 * health.py: /health answers 503 "except EngineDeadError"; a stream in flight
 * ends with an error event; launcher.py's watchdog, every 5 s, ends the
 * server unless VLLM_KEEP_ALIVE_ON_ENGINE_DEATH). */
#define ENGINE_DEAD_MESSAGE "EngineCore encountered an issue. See stack trace (above) for the root cause."
static atomic_int g_engine_dead;
static atomic_long g_tokens_served;

/* Whether the engine is dead, killing it when DSV41_SIM_FAULT=dead:N's
 * tokens have been served. */
static bool engine_dead(void)
{
    int n = 0;
    const char *f = fault(&n);
    if (strncmp(f, "dead:", 5) == 0 && atomic_load(&g_tokens_served) >= n &&
        !atomic_exchange(&g_engine_dead, 1))
        sim_log("ERROR EngineCore encountered an issue (simulated: DSV41_SIM_FAULT=%s)", f);
    return atomic_load(&g_engine_dead);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    double d = t - now_s();
    if (d <= 0)
        return;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

long sim_count_tokens(const char *s)
{
    long n = (long)(strlen(s) + 3) / 4;
    return n ? n : 1;
}

struct request {
    struct buf body;
    bool too_big;
};

struct stream {
    bool chat, usage;
    char id[40];
    long created;
    long prompt_tokens;
    struct sim_answer ans;
    int ntok, next; /* next item to send; then the final chunk, usage, [DONE] */
    const char *finish;
    double t_first, gap;
    struct buf pending;
    size_t pending_off;
    bool done, counted, cut, logged;
    double t_req, t_prev;
    double t_sent_first; /* when the first token left; with nsent, for DSV41_SIM_TOKEN_LOG */
    int nsent;
    int slot; /* the engine's record of the request (sim_metrics) */
};

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, const char *type,
                                 const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *type,
                                  const char *msg)
{
    cJSON *e = cJSON_CreateObject();
    cJSON *in = cJSON_AddObjectToObject(e, "error");
    cJSON_AddStringToObject(in, "message", msg);
    cJSON_AddStringToObject(in, "type", type);
    cJSON_AddNullToObject(in, "param");
    cJSON_AddNumberToObject(in, "code", code);
    char *s = cJSON_PrintUnformatted(e);
    enum MHD_Result r = send_text(c, code, "application/json", s ? s : "{}");
    free(s);
    cJSON_Delete(e);
    return r;
}

static bool authorized(struct MHD_Connection *c)
{
    if (!g_opts->api_key || !*g_opts->api_key)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    return h && strncmp(h, "Bearer ", 7) == 0 && strcmp(h + 7, g_opts->api_key) == 0;
}

/* DSV41_SIM_TOKEN_LOG=FILE: a line per stream, "ID TOKENS FIRST LAST" with
 * the monotonic seconds its first and last token left - what the simulator
 * really did, for tests that judge a client's rates on a loaded machine.
 * A finished stream's line is written before its [DONE] is queued, so a
 * client that has read [DONE] finds it; one whose client left, when freed. */
static void log_tokens(struct stream *s)
{
    const char *path = getenv("DSV41_SIM_TOKEN_LOG");
    if (s->logged || !path || !*path || !s->nsent)
        return;
    s->logged = true;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s %d %.6f %.6f\n", s->id, s->nsent, s->t_sent_first, s->t_prev);
        fclose(f);
    }
    pthread_mutex_unlock(&mu);
}

static void free_stream(void *cls)
{
    struct stream *s = cls;
    log_tokens(s);
    sim_answer_free(&s->ans);
    buf_free(&s->pending);
    if (!s->counted)
        sim_metrics_done(s->slot, now_s() - s->t_req);
    free(s);
}

static void add_usage(cJSON *o, const struct stream *s, int completion)
{
    cJSON *u = cJSON_AddObjectToObject(o, "usage");
    cJSON_AddNumberToObject(u, "prompt_tokens", (double)s->prompt_tokens);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(s->prompt_tokens + completion));
    cJSON_AddNumberToObject(u, "completion_tokens", completion);
    if (s->chat) {
        cJSON *cd = cJSON_AddObjectToObject(u, "completion_tokens_details");
        cJSON_AddNumberToObject(cd, "reasoning_tokens", (double)s->ans.reasoning_tokens);
    }
    cJSON *d = cJSON_AddObjectToObject(u, "prompt_tokens_details");
    cJSON_AddNumberToObject(d, "cached_tokens", 0);
}

static cJSON *chunk(const struct stream *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", s->id);
    cJSON_AddStringToObject(o, "object", s->chat ? "chat.completion.chunk" : "text_completion");
    cJSON_AddNumberToObject(o, "created", (double)s->created);
    cJSON_AddStringToObject(o, "model", g_opts->served_name);
    return o;
}

/* A chat delta for one answer item. */
static void item_delta(cJSON *d, const struct stream *s, const struct sim_item *it)
{
    if (it->kind == ITEM_REASONING) {
        cJSON_AddStringToObject(d, "reasoning", it->text);
        return;
    }
    if (it->kind == ITEM_CONTENT) {
        cJSON_AddStringToObject(d, "content", it->text);
        return;
    }
    cJSON *calls = cJSON_AddArrayToObject(d, "tool_calls");
    cJSON *tc = cJSON_CreateObject();
    cJSON_AddNumberToObject(tc, "index", 0);
    cJSON *fn = cJSON_CreateObject();
    if (it->kind == ITEM_TOOL_START) {
        cJSON_AddStringToObject(tc, "id", s->ans.tool_id);
        cJSON_AddStringToObject(tc, "type", "function");
        cJSON_AddStringToObject(fn, "name", it->text);
        cJSON_AddStringToObject(fn, "arguments", "");
    } else {
        cJSON_AddStringToObject(fn, "arguments", it->text);
    }
    cJSON_AddItemToObject(tc, "function", fn);
    cJSON_AddItemToArray(calls, tc);
}

static cJSON *choice(cJSON *o, const struct stream *s, const struct sim_item *it,
                     const char *finish, bool first)
{
    const char *text = it ? it->text : NULL;
    cJSON *ch = cJSON_AddArrayToObject(o, "choices");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "index", 0);
    if (s->chat) {
        cJSON *d = cJSON_AddObjectToObject(c, "delta");
        if (first) {
            cJSON_AddStringToObject(d, "role", "assistant");
            cJSON_AddStringToObject(d, "content", "");
        }
        if (it)
            item_delta(d, s, it);
    } else {
        cJSON_AddStringToObject(c, "text", text ? text : "");
    }
    cJSON_AddNullToObject(c, "logprobs");
    if (finish)
        cJSON_AddStringToObject(c, "finish_reason", finish);
    else
        cJSON_AddNullToObject(c, "finish_reason");
    if (!s->chat)
        cJSON_AddNullToObject(c, "stop_reason");
    cJSON_AddItemToArray(ch, c);
    return c;
}

static void emit(struct stream *s, cJSON *o)
{
    char *j = cJSON_PrintUnformatted(o);
    buf_printf(&s->pending, "data: %s\n\n", j ? j : "{}");
    free(j);
    cJSON_Delete(o);
}

static void token_served(struct stream *s)
{
    double t = now_s();
    if (s->t_prev == 0)
        sim_metrics_first_token(s->slot, t - s->t_req);
    else
        sim_metrics_gap(t - s->t_prev);
    sim_metrics_token(s->slot);
    s->t_prev = t;
    atomic_fetch_add(&g_tokens_served, 1);
    if (!s->nsent++)
        s->t_sent_first = t;
}

/* Produces the next event, waiting for its time. */
static void next_event(struct stream *s)
{
    if (s->next == 0 && s->chat) {
        sleep_until(s->t_first);
        wait_while_wedged(); /* frozen mid-prefill: not even the role chunk */
        cJSON *o = chunk(s);
        choice(o, s, NULL, NULL, true);
        emit(s, o);
        s->next = 1;
        return;
    }
    int i = s->chat ? s->next - 1 : s->next;
    if (i < s->ntok) {
        sleep_until(s->t_first + s->gap * i);
        wait_while_wedged(); /* the peer rank is gone: no tokens */
        int n = 0;
        const char *f = fault(&n);
        if (engine_dead()) { /* the stream's error event, then [DONE] */
            buf_printf(&s->pending, "data: {\"error\": {\"message\": \"%s\", \"type\": "
                       "\"InternalServerError\", \"param\": null, \"code\": 500}}\n\n"
                       "data: [DONE]\n\n", ENGINE_DEAD_MESSAGE);
            s->done = true;
            return;
        }
        if (i == n && strncmp(f, "cut:", 4) == 0) {
            s->cut = true; /* the connection drops mid-stream */
            return;
        }
        if (i == n && strncmp(f, "malformed:", 10) == 0)
            buf_puts(&s->pending, "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"tru\n\n");
        cJSON *o = chunk(s);
        choice(o, s, &s->ans.items[i], NULL, false);
        if (g_opts->force_usage) /* vLLM then puts cumulative usage on every chunk */
            add_usage(o, s, i + 1);
        emit(s, o);
        token_served(s);
    } else if (i == s->ntok) {
        cJSON *o = chunk(s);
        static const struct sim_item empty = {ITEM_CONTENT, ""};
        choice(o, s, s->chat ? NULL : &empty, s->finish, false);
        emit(s, o);
    } else if (i == s->ntok + 1 && (s->usage || g_opts->force_usage)) {
        cJSON *o = chunk(s);
        cJSON_AddArrayToObject(o, "choices");
        add_usage(o, s, s->ntok);
        emit(s, o);
    } else {
        log_tokens(s);
        buf_puts(&s->pending, "data: [DONE]\n\n");
        s->done = true;
        if (!s->counted) {
            sim_metrics_done(s->slot, now_s() - s->t_req);
            s->counted = true;
        }
    }
    s->next++;
}

static ssize_t read_stream(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    struct stream *s = cls;
    while (s->pending_off == s->pending.len) {
        if (s->done)
            return MHD_CONTENT_READER_END_OF_STREAM;
        buf_reset(&s->pending);
        s->pending_off = 0;
        next_event(s);
        if (s->cut)
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = s->pending.len - s->pending_off;
    if (n > max)
        n = max;
    memcpy(out, s->pending.data + s->pending_off, n);
    s->pending_off += n;
    return (ssize_t)n;
}

/* Flattens the request's prompt (messages or prompt) to text. */
static void prompt_text(cJSON *req, bool chat, struct buf *out)
{
    if (chat) {
        cJSON *m;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(req, "messages"))
        {
            cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
            if (cJSON_IsString(c))
                buf_printf(out, "%s\n", c->valuestring);
            cJSON *part;
            if (cJSON_IsArray(c))
                cJSON_ArrayForEach(part, c)
                {
                    cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
                    if (cJSON_IsString(t))
                        buf_printf(out, "%s\n", t->valuestring);
                }
        }
        return;
    }
    cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "prompt");
    if (cJSON_IsString(p))
        buf_puts(out, p->valuestring);
    else if (cJSON_IsArray(p)) { /* token ids: four bytes a token keeps the count */
        cJSON *id;
        cJSON_ArrayForEach(id, p)
            buf_puts(out, "tok ");
    }
}

static enum MHD_Result complete(struct MHD_Connection *c, const char *body, bool chat)
{
    int fault_at = 0;
    if (strcmp(fault(&fault_at), "http500") == 0)
        return send_error(c, 500, "InternalServerError", "simulated engine failure");
    if (atomic_load(&g_engine_dead))
        return send_error(c, 500, "InternalServerError", ENGINE_DEAD_MESSAGE);
    cJSON *req = cJSON_Parse(body);
    if (!cJSON_IsObject(req)) {
        cJSON_Delete(req);
        return send_error(c, 400, "BadRequestError", "request body is not a JSON object");
    }
    struct buf prompt = BUF_INIT;
    prompt_text(req, chat, &prompt);
    cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "prompt");
    long ptok = cJSON_IsArray(p) ? cJSON_GetArraySize(p) : sim_count_tokens(buf_str(&prompt));
    if (ptok > g_opts->max_model_len) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "This model's maximum context length is %ld tokens. However, your request has "
                 "%ld input tokens. Please reduce the length of the input messages.",
                 g_opts->max_model_len, ptok);
        buf_free(&prompt);
        cJSON_Delete(req);
        return send_error(c, 400, "BadRequestError", msg);
    }
    /* vLLM's checks of prompt_logprobs (sim_logprobs.c cites them) */
    cJSON *plp = cJSON_GetObjectItemCaseSensitive(req, "prompt_logprobs");
    const char *plp_bad = NULL;
    char plp_msg[160];
    if (plp && !cJSON_IsNull(plp) && !cJSON_IsNumber(plp))
        plp_bad = "`prompt_logprobs` must be an integer.";
    else if (cJSON_IsNumber(plp) && plp->valuedouble != 0 &&
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream")))
        plp_bad = "`prompt_logprobs` are not available when `stream=True`.";
    else if (cJSON_IsNumber(plp) && plp->valuedouble > 20) {
        snprintf(plp_msg, sizeof plp_msg,
                 "Requested prompt logprobs of %d, which is greater than max allowed: 20",
                 (int)plp->valuedouble);
        plp_bad = plp_msg;
    }
    if (plp_bad) {
        buf_free(&prompt);
        cJSON_Delete(req);
        return send_error(c, 400, "BadRequestError", plp_bad);
    }
    cJSON *plp_out = cJSON_IsNumber(plp) && !chat && plp->valuedouble >= 1
                         ? sim_prompt_logprobs(p, (int)plp->valuedouble)
                         : NULL;
    long limit = -1;
    cJSON *mt = cJSON_GetObjectItemCaseSensitive(req, "max_completion_tokens");
    if (!cJSON_IsNumber(mt))
        mt = cJSON_GetObjectItemCaseSensitive(req, "max_tokens");
    if (cJSON_IsNumber(mt))
        limit = (long)mt->valuedouble;
    else if (!chat) /* vllm/entrypoints/openai/protocol.py: CompletionRequest.max_tokens = 16 */
        limit = 16;
    struct stream *s = calloc(1, sizeof *s);
    if (!s) {
        buf_free(&prompt);
        cJSON_Delete(req);
        cJSON_Delete(plp_out);
        return MHD_NO;
    }
    s->chat = chat;
    static long seq;
    long reqno = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
    snprintf(s->id, sizeof s->id, "%s-%ld", chat ? "chatcmpl" : "cmpl", reqno);
    s->created = (long)time(NULL);
    s->prompt_tokens = ptok;
    sim_answer_build(req, chat, limit, &s->ans);
    s->ntok = s->ans.n;
    s->finish = s->ans.finish;
    snprintf(s->ans.tool_id, sizeof s->ans.tool_id, "chatcmpl-tool-%ld", reqno);
    s->t_first = now_s() + (double)ptok / g_opts->prefill_tps;
    s->gap = 1.0 / g_opts->decode_tps;
    cJSON *so = cJSON_GetObjectItemCaseSensitive(req, "stream_options");
    s->usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(so, "include_usage"));
    bool streaming = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream"));
    s->t_req = now_s();
    s->slot = sim_metrics_request(ptok, buf_str(&prompt));
    buf_free(&prompt);
    cJSON_Delete(req);
    if (streaming) {
        struct MHD_Response *r =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, s, free_stream);
        if (!r) {
            free_stream(s);
            return MHD_NO;
        }
        MHD_add_response_header(r, "Content-Type", "text/event-stream; charset=utf-8");
        enum MHD_Result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    /* not streamed: the same timing, one answer */
    struct buf text = BUF_INIT, reasoning = BUF_INIT, args = BUF_INIT;
    const char *tool = NULL;
    for (int i = 0; i < s->ntok; i++) {
        sleep_until(s->t_first + s->gap * i);
        wait_while_wedged();
        if (engine_dead()) {
            buf_free(&text);
            buf_free(&reasoning);
            buf_free(&args);
            free_stream(s);
            cJSON_Delete(plp_out);
            return send_error(c, 500, "InternalServerError", ENGINE_DEAD_MESSAGE);
        }
        const struct sim_item *it = &s->ans.items[i];
        if (it->kind == ITEM_REASONING)
            buf_puts(&reasoning, it->text);
        else if (it->kind == ITEM_CONTENT)
            buf_puts(&text, it->text);
        else if (it->kind == ITEM_TOOL_START)
            tool = it->text;
        else
            buf_puts(&args, it->text);
        token_served(s);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", s->id);
    cJSON_AddStringToObject(o, "object", chat ? "chat.completion" : "text_completion");
    cJSON_AddNumberToObject(o, "created", (double)s->created);
    cJSON_AddStringToObject(o, "model", g_opts->served_name);
    cJSON *ch = cJSON_AddArrayToObject(o, "choices");
    cJSON *c0 = cJSON_CreateObject();
    cJSON_AddNumberToObject(c0, "index", 0);
    if (chat) {
        cJSON *m = cJSON_AddObjectToObject(c0, "message");
        cJSON_AddStringToObject(m, "role", "assistant");
        if (tool)
            cJSON_AddNullToObject(m, "content");
        else
            cJSON_AddStringToObject(m, "content", buf_str(&text));
        if (reasoning.len)
            cJSON_AddStringToObject(m, "reasoning", buf_str(&reasoning));
        else
            cJSON_AddNullToObject(m, "reasoning");
        cJSON *calls = cJSON_AddArrayToObject(m, "tool_calls");
        if (tool) {
            cJSON *tc = cJSON_CreateObject();
            cJSON_AddStringToObject(tc, "id", s->ans.tool_id);
            cJSON_AddStringToObject(tc, "type", "function");
            cJSON *fn = cJSON_AddObjectToObject(tc, "function");
            cJSON_AddStringToObject(fn, "name", tool);
            cJSON_AddStringToObject(fn, "arguments", buf_str(&args));
            cJSON_AddItemToArray(calls, tc);
        }
    } else {
        cJSON_AddStringToObject(c0, "text", buf_str(&text));
    }
    cJSON_AddNullToObject(c0, "logprobs");
    cJSON_AddStringToObject(c0, "finish_reason", s->finish);
    if (plp_out)
        cJSON_AddItemToObject(c0, "prompt_logprobs", plp_out);
    else if (!chat)
        cJSON_AddNullToObject(c0, "prompt_logprobs");
    cJSON_AddItemToArray(ch, c0);
    add_usage(o, s, s->ntok);
    char *js = cJSON_PrintUnformatted(o);
    enum MHD_Result ret = send_text(c, 200, "application/json", js ? js : "{}");
    free(js);
    cJSON_Delete(o);
    buf_free(&text);
    buf_free(&reasoning);
    buf_free(&args);
    free_stream(s);
    return ret;
}

static enum MHD_Result metrics(struct MHD_Connection *c)
{
    struct buf b = BUF_INIT;
    sim_metrics_text(&b, g_opts->served_name);
    enum MHD_Result r = send_text(c, 200, "text/plain; version=0.0.4; charset=utf-8", buf_str(&b));
    buf_free(&b);
    return r;
}

static enum MHD_Result models(struct MHD_Connection *c)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"object\":\"list\",\"data\":[{\"id\":\"%s\",\"object\":\"model\",\"created\":%ld,"
             "\"owned_by\":\"vllm\",\"root\":\"%s\",\"parent\":null,\"max_model_len\":%ld,"
             "\"permission\":[]}]}",
             g_opts->served_name, (long)time(NULL), g_opts->model_path, g_opts->max_model_len);
    return send_text(c, 200, "application/json", body);
}

/* DSV41_SIM_RECORD=FILE: each completion request appended as a JSON line
 * {"url", "authorization", "body"} - what a client really sent (the Pi tests
 * read it: the limit fields, reasoning_effort, the key). */
static void record(struct MHD_Connection *c, const char *url, const char *body)
{
    const char *path = getenv("DSV41_SIM_RECORD");
    if (!path || !*path)
        return;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "url", url);
    cJSON_AddStringToObject(o, "authorization", auth ? auth : "");
    cJSON *b = cJSON_Parse(body);
    cJSON_AddItemToObject(o, "body", b ? b : cJSON_CreateString(body));
    char *line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    FILE *f = line ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", line);
        fclose(f);
    }
    pthread_mutex_unlock(&mu);
    free(line);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **req_cls)
{
    (void)cls;
    (void)version;
    struct request *rq = *req_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *req_cls = rq;
        atomic_fetch_add(&g_in_flight, 1);
        return MHD_YES;
    }
    if (*upload_size) {
        if (rq->body.len + *upload_size > MAX_BODY)
            rq->too_big = true;
        else
            buf_append(&rq->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    if (get && strcmp(url, "/health") == 0)
        return send_text(c, atomic_load(&g_engine_dead) ? 503 : 200, "application/json", "");
    if (get && strcmp(url, "/metrics") == 0)
        return metrics(c);
    if (get && strcmp(url, "/version") == 0) {
        /* vllm/entrypoints/openai/api_server.py: {"version": VLLM_VERSION}, no key asked;
         * a test image may bake in another (DSV41_SIM_VLLM_VERSION) */
        const char *v = getenv("DSV41_SIM_VLLM_VERSION");
        char js[96];
        snprintf(js, sizeof js, "{\"version\":\"%.60s\"}", v && *v ? v : "0.11.1");
        return send_text(c, 200, "application/json", js);
    }
    if (strncmp(url, "/v1/", 4) == 0 && !authorized(c))
        return send_text(c, 401, "application/json", "{\"error\":\"Unauthorized\"}");
    if (get && strcmp(url, "/v1/models") == 0)
        return models(c);
    if (post && (strcmp(url, "/v1/chat/completions") == 0 || strcmp(url, "/v1/completions") == 0)) {
        if (rq->too_big)
            return send_error(c, 413, "BadRequestError", "request body too large");
        record(c, url, buf_str(&rq->body));
        return complete(c, buf_str(&rq->body), strcmp(url, "/v1/chat/completions") == 0);
    }
    return send_text(c, 404, "application/json", "{\"detail\":\"Not Found\"}");
}

static void done(void *cls, struct MHD_Connection *c, void **req_cls,
                 enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct request *rq = *req_cls;
    if (rq) {
        buf_free(&rq->body);
        free(rq);
        atomic_fetch_sub(&g_in_flight, 1);
    }
    *req_cls = NULL;
}

/* vLLM's drain on SIGTERM: no new connection (refused, not left waiting
 * in the backlog: a listening socket that is shut down answers RST), the
 * requests in flight run to their end. Returns the listening socket, to be
 * closed only after MHD_stop_daemon. */
static MHD_socket drain(struct MHD_Daemon *d)
{
    sim_log("Shutting down FastAPI HTTP server.");
    MHD_socket ls = MHD_quiesce_daemon(d);
    if (ls != MHD_INVALID_SOCKET)
        shutdown(ls, SHUT_RDWR);
    int n = atomic_load(&g_in_flight);
    if (n > 0)
        sim_log("Waiting for %d request(s) in flight to finish.", n);
    while (atomic_load(&g_in_flight) > 0)
        usleep(20000);
    return ls;
}

/* vLLM's periodic stats line: the API process logs it every
 * VLLM_LOG_STATS_INTERVAL seconds (10), at debug level once idle (see
 * sim_metrics_stats_line), whatever the engine does. */
static void *stats_logger(void *arg)
{
    (void)arg;
    const char *e = getenv("VLLM_LOG_STATS_INTERVAL");
    double interval = e && atof(e) > 0 ? atof(e) : 10;
    double next = now_s() + interval;
    bool frozen = false;
    while (!*g_stopping) {
        if (!frozen && sim_engine_frozen()) { /* when, for the tests to judge against */
            frozen = true;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            sim_log("the engine is frozen (a collective that never returns): engine frozen at "
                    "%.2f", (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
        }
        if (now_s() < next) {
            usleep(100000);
            continue;
        }
        next += interval;
        char line[400];
        sim_metrics_stats_line(line, sizeof line, interval);
        if (line[0]) {
            char ts[32];
            time_t now = time(NULL);
            strftime(ts, sizeof ts, "%m-%d %H:%M:%S", localtime(&now));
            flockfile(stdout);
            printf("(APIServer pid=1) INFO %s [loggers.py:236] %s\n", ts, line);
            fflush(stdout);
            funlockfile(stdout);
        }
    }
    return NULL;
}

int sim_http_serve(const struct sim_opts *o, volatile int *stop, volatile int *peer_lost)
{
    g_opts = o;
    g_peer_lost = peer_lost;
    g_stopping = stop;
    sim_engine_init(o->max_batched, o->block_size, SIM_KV_POOL_TOKENS, o->prefill_tps);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)o->port);
    if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1) {
        fprintf(stderr, "dsv41-sim: --host %s is not an IPv4 address\n", o->host);
        return -1;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        0,
        NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
        MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 600u,
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "ERROR: [Errno 98] error while attempting to bind on address "
                        "('%s', %d): address already in use\n",
                o->host, o->port);
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sim_log("Starting vLLM API server 0 on http://%s:%d", o->host, o->port);
    /* t= is when the API first answers, for the launch benchmark */
    sim_log("Application startup complete. (t=%lld)",
            (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    pthread_t logger;
    bool logging = pthread_create(&logger, NULL, stats_logger, NULL) == 0;
    double dead_t = 0;
    bool keep_alive = getenv("VLLM_KEEP_ALIVE_ON_ENGINE_DEATH") &&
                      strcmp(getenv("VLLM_KEEP_ALIVE_ON_ENGINE_DEATH"), "0") != 0;
    int rc = 0;
    while (!*stop) {
        usleep(100000);
        if (!atomic_load(&g_engine_dead) || keep_alive)
            continue;
        if (dead_t == 0)
            dead_t = now_s();
        else if (now_s() - dead_t >= 5) { /* launcher.py's watchdog */
            sim_log("Engine is dead: shutting down the API server");
            *stop = 1;
            rc = 1;
        }
    }
    if (logging)
        pthread_join(logger, NULL);
    MHD_socket ls = drain(d);
    MHD_stop_daemon(d);
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
    sim_log("Finished server process");
    return rc;
}
