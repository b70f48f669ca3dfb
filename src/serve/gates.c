#include "gates.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "mono.h"
#include "probe.h"

#define MODEL "deepseek-v4.1-flash"
#define NGATES 6

struct gate {
    const char *name;
    bool pass;
    cJSON *ev; /* evidence object */
};

static char *excerpt(const char *s, size_t max)
{
    size_t n = strlen(s);
    char *out = malloc(max + 8);
    if (!out)
        return NULL;
    text_copy_field(out, max + 1, s, n);
    if (n > max) /* room for it: out holds max + 8 */
        snprintf(out + strlen(out), 8, "...");
    return out;
}

static void ev_str(cJSON *ev, const char *k, const char *v, size_t max)
{
    char *e = excerpt(v, max);
    cJSON_AddStringToObject(ev, k, e ? e : "");
    free(e);
}

static cJSON *message(const char *role, const char *content)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", role);
    if (content)
        cJSON_AddStringToObject(m, "content", content);
    else
        cJSON_AddNullToObject(m, "content");
    return m;
}

static cJSON *chat(void)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", MODEL);
    cJSON_AddArrayToObject(j, "messages");
    cJSON_AddBoolToObject(j, "stream", true);
    cJSON *so = cJSON_AddObjectToObject(j, "stream_options");
    cJSON_AddBoolToObject(so, "include_usage", true);
    return j;
}

static void add_weather_tool(cJSON *j)
{
    cJSON *tools = cJSON_AddArrayToObject(j, "tools");
    cJSON *t = cJSON_Parse("{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                           "\"description\":\"Current weather in a city\",\"parameters\":{"
                           "\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},"
                           "\"required\":[\"city\"]}}}");
    cJSON_AddItemToArray(tools, t);
}

/* Sends a request; fills the evidence common to every gate. */
static void send_req(const struct gates_opts *o, cJSON *req, struct api_call *call, cJSON *ev,
                     double stop_after_s)
{
    memset(call, 0, sizeof *call);
    call->path = "/v1/chat/completions";
    call->body = cJSON_PrintUnformatted(req);
    call->stream = true;
    call->timeout_ms = o->timeout_s * 1000;
    call->stop_after_s = stop_after_s;
    if (call->body)
        api_run(o->base, o->key, call, 1, NULL);
    else
        snprintf(call->error, sizeof call->error, "out of memory");
    ev_str(ev, "request", call->body ? call->body : "", 300);
    ev_str(ev, "content", buf_str(&call->c.content), 300);
    ev_str(ev, "reasoning", buf_str(&call->c.reasoning), 200);
    cJSON_AddNumberToObject(ev, "prompt_tokens", (double)call->c.prompt_tokens);
    cJSON_AddNumberToObject(ev, "completion_tokens", (double)call->c.completion_tokens);
    cJSON_AddStringToObject(ev, "finish_reason", call->c.finish);
    if (call->c.nchunks)
        cJSON_AddNumberToObject(ev, "ttft_s", call->c.t_first - call->c.t_start);
    cJSON_AddNumberToObject(ev, "seconds", mono_s() - call->c.t_start);
    if (call->error[0])
        cJSON_AddStringToObject(ev, "error", call->error);
}

static void done_req(struct api_call *call)
{
    api_call_free(call);
    free(call->body);
}

static bool gate_load(const struct gates_opts *o, cJSON *ev)
{
    struct buf body = BUF_INIT, err = BUF_INIT;
    long code = api_get(o->base, "/v1/models", o->key, o->timeout_s * 1000, &body, &err);
    cJSON *j = cJSON_Parse(buf_str(&body));
    cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "data"), 0);
    cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    cJSON_AddNumberToObject(ev, "http", (double)code);
    ev_str(ev, "response", code ? buf_str(&body) : buf_str(&err), 300);
    bool ok = code == 200 && cJSON_IsString(id);
    cJSON_Delete(j);
    buf_free(&body);
    buf_free(&err);
    return ok;
}

static bool gate_chat(const struct gates_opts *o, cJSON *ev)
{
    cJSON *req = chat();
    cJSON_AddItemToArray(cJSON_GetObjectItem(req, "messages"),
                         message("user", "Say hello and name one colour, in one sentence."));
    struct api_call call;
    send_req(o, req, &call, ev, 0);
    bool ok = !call.error[0] && call.c.content.len > 0 && strcmp(call.c.finish, "stop") == 0;
    done_req(&call);
    cJSON_Delete(req);
    return ok;
}

static bool gate_reasoning(const struct gates_opts *o, cJSON *ev)
{
    cJSON *req = chat();
    cJSON_AddItemToArray(cJSON_GetObjectItem(req, "messages"),
                         message("user", "What is 17 * 23? Think it through."));
    struct api_call call;
    send_req(o, req, &call, ev, 0);
    const char *content = buf_str(&call.c.content);
    bool ok = !call.error[0] && call.c.reasoning.len > 0 && strstr(content, "391") &&
              !strstr(content, "<think>");
    done_req(&call);
    cJSON_Delete(req);
    return ok;
}

static bool gate_tools(const struct gates_opts *o, cJSON *ev)
{
    cJSON *req = chat();
    cJSON *msgs = cJSON_GetObjectItem(req, "messages");
    cJSON_AddItemToArray(msgs, message("user", "What is the weather in Warsaw? Use the tool."));
    add_weather_tool(req);
    struct api_call call;
    cJSON *first = cJSON_AddObjectToObject(ev, "call");
    send_req(o, req, &call, first, 0);
    bool ok = false;
    const struct completion_tool *t = call.c.ntools ? &call.c.tools[0] : NULL;
    cJSON *args = t ? cJSON_Parse(buf_str(&t->args)) : NULL;
    cJSON *city = cJSON_GetObjectItemCaseSensitive(args, "city");
    if (t && strcmp(t->name, "get_weather") == 0 && cJSON_IsString(city) &&
        strcasestr(city->valuestring, "warsaw")) {
        cJSON_AddStringToObject(first, "tool", t->name);
        ev_str(first, "arguments", buf_str(&t->args), 200);
        /* the tool's answer goes back; the model's answer must use it */
        cJSON *a = message("assistant", NULL);
        cJSON *calls = cJSON_AddArrayToObject(a, "tool_calls");
        cJSON *tc = cJSON_CreateObject();
        cJSON_AddStringToObject(tc, "id", t->id[0] ? t->id : "call-0");
        cJSON_AddStringToObject(tc, "type", "function");
        cJSON *fn = cJSON_AddObjectToObject(tc, "function");
        cJSON_AddStringToObject(fn, "name", t->name);
        cJSON_AddStringToObject(fn, "arguments", buf_str(&t->args));
        cJSON_AddItemToArray(calls, tc);
        cJSON_AddItemToArray(msgs, a);
        cJSON *tm = message("tool", "Sunny, 21 degrees Celsius, wind 9 km/h");
        cJSON_AddStringToObject(tm, "tool_call_id", t->id[0] ? t->id : "call-0");
        cJSON_AddItemToArray(msgs, tm);
        struct api_call second;
        cJSON *ans = cJSON_AddObjectToObject(ev, "answer");
        send_req(o, req, &second, ans, 0);
        const char *c = buf_str(&second.c.content);
        ok = !second.error[0] && (strstr(c, "21") || strcasestr(c, "sunny"));
        done_req(&second);
    }
    cJSON_Delete(args);
    done_req(&call);
    cJSON_Delete(req);
    return ok;
}

static bool gate_context(const struct gates_opts *o, cJSON *ev)
{
    char code[32];
    snprintf(code, sizeof code, "ZEBRA-%04d", (int)(time(NULL) % 10000));
    struct buf text = BUF_INIT;
    /* about 4 characters a token; the code planted in the middle */
    size_t want = (size_t)o->ctx_tokens * 4;
    bool planted = false;
    for (int i = 0; text.len < want - 80; i++) {
        if (!planted && text.len > want / 2) {
            buf_printf(&text, "The secret code is %s. ", code);
            planted = true;
        }
        buf_printf(&text, "Entry %d: the archive holds nothing of note here. ", i);
    }
    if (!planted)
        buf_printf(&text, "The secret code is %s. ", code);
    buf_puts(&text, "\nWhat is the secret code in the text above? Answer with the code.");
    cJSON *req = chat();
    cJSON_AddItemToArray(cJSON_GetObjectItem(req, "messages"), message("user", buf_str(&text)));
    struct api_call call;
    send_req(o, req, &call, ev, 0);
    cJSON_AddNumberToObject(ev, "context_tokens_asked", o->ctx_tokens);
    cJSON_AddStringToObject(ev, "planted", code);
    bool ok = !call.error[0] && strstr(buf_str(&call.c.content), code) &&
              (double)call.c.prompt_tokens >= 0.6 * o->ctx_tokens;
    done_req(&call);
    cJSON_Delete(req);
    buf_free(&text);
    return ok;
}

static bool gate_speed(const struct gates_opts *o, cJSON *ev)
{
    cJSON *req = chat();
    cJSON_AddItemToArray(cJSON_GetObjectItem(req, "messages"),
                         message("user", "Tell me a long story about a river."));
    struct api_call call;
    send_req(o, req, &call, ev, o->speed_window_s);
    /* tokens in the first window after the first token: usage when the
     * server sends it on every chunk, else one token a chunk */
    double span = call.c.t_last - call.c.t_first;
    long tokens = call.c.completion_tokens >= 0 ? call.c.completion_tokens : call.c.nchunks;
    double window = span < o->speed_window_s ? span : o->speed_window_s;
    double tps = window > 0 ? (double)tokens / window : 0;
    cJSON_AddNumberToObject(ev, "window_s", window);
    cJSON_AddNumberToObject(ev, "tokens", (double)tokens);
    cJSON_AddNumberToObject(ev, "tok_per_s", tps);
    bool ok = !call.error[0] && tps >= o->speed_min_tps;
    done_req(&call);
    cJSON_Delete(req);
    return ok;
}

static void summary_line(FILE *out, const struct gate *g)
{
    cJSON *e = g->ev;
    const char *err = cJSON_GetStringValue(cJSON_GetObjectItem(e, "error"));
    fprintf(out, "%-4s %-9s", g->pass ? "PASS" : "FAIL", g->name);
    if (err)
        fprintf(out, " %s", err);
    else if (strcmp(g->name, "speed") == 0)
        fprintf(out, " %.1f tok/s over %.1f s", cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tok_per_s")),
                cJSON_GetNumberValue(cJSON_GetObjectItem(e, "window_s")));
    else if (strcmp(g->name, "context") == 0)
        fprintf(out, " %.0f prompt tokens, answer '%s'",
                cJSON_GetNumberValue(cJSON_GetObjectItem(e, "prompt_tokens")),
                cJSON_GetStringValue(cJSON_GetObjectItem(e, "content")));
    else if (strcmp(g->name, "tools") == 0)
        fprintf(out, " %s -> '%s'",
                cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "call"), "arguments"))
                    ?: "no tool call",
                cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "answer"), "content"))
                    ?: "");
    else if (cJSON_GetObjectItem(e, "content"))
        fprintf(out, " answer '%.80s'", cJSON_GetStringValue(cJSON_GetObjectItem(e, "content")));
    fputc('\n', out);
    fflush(out);
}

int gates_run(const struct gates_opts *o, FILE *out)
{
    static const char *names[NGATES] = {"load", "chat", "reasoning", "tools", "context", "speed"};
    bool (*fns[NGATES])(const struct gates_opts *, cJSON *) = {
        gate_load, gate_chat, gate_reasoning, gate_tools, gate_context, gate_speed};
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "url", o->base);
    cJSON_AddNumberToObject(root, "ts", (double)time(NULL));
    cJSON *arr = cJSON_AddArrayToObject(root, "gates");
    int passed = 0;
    for (int i = 0; i < NGATES; i++) {
        struct gate g = {names[i], false, cJSON_CreateObject()};
        g.pass = fns[i](o, g.ev);
        summary_line(out, &g);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", g.name);
        cJSON_AddBoolToObject(j, "pass", g.pass);
        cJSON_AddItemToObject(j, "evidence", g.ev);
        cJSON_AddItemToArray(arr, j);
        passed += g.pass;
        /* saved after each gate: an interrupted run keeps what it had */
        cJSON_AddNumberToObject(root, "passed", passed);
        if (o->out) {
            char *s = cJSON_Print(root);
            char tmp[4200];
            snprintf(tmp, sizeof tmp, "%s.tmp", o->out);
            FILE *f = s ? fopen(tmp, "w") : NULL;
            if (f) {
                bool ok = fputs(s, f) >= 0;
                ok = (fclose(f) == 0) && ok;
                if (!ok || rename(tmp, o->out) < 0)
                    fprintf(stderr, "gates: cannot write %s\n", o->out);
            }
            free(s);
        }
        cJSON_DeleteItemFromObject(root, "passed");
    }
    cJSON_Delete(root);
    return passed;
}
