#include "smoke.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "png.h"
#include "probe.h"

static const char *NAMES[SMOKE_CHECKS] = {"text", "tool call", "vision"};

static cJSON *base_request(void)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", "deepseek-v4.1-flash");
    cJSON_AddBoolToObject(j, "stream", true);
    cJSON *so = cJSON_AddObjectToObject(j, "stream_options");
    cJSON_AddBoolToObject(so, "include_usage", true);
    return j;
}

static cJSON *user_text(cJSON *msgs, const char *text)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "user");
    cJSON_AddStringToObject(m, "content", text);
    cJSON_AddItemToArray(msgs, m);
    return m;
}

static void weather_tool(cJSON *j)
{
    cJSON *tools = cJSON_AddArrayToObject(j, "tools");
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "type", "function");
    cJSON *fn = cJSON_AddObjectToObject(t, "function");
    cJSON_AddStringToObject(fn, "name", "get_weather");
    cJSON_AddStringToObject(fn, "description", "Current weather in a city");
    cJSON *params = cJSON_AddObjectToObject(fn, "parameters");
    cJSON_AddStringToObject(params, "type", "object");
    cJSON *props = cJSON_AddObjectToObject(params, "properties");
    cJSON *city = cJSON_AddObjectToObject(props, "city");
    cJSON_AddStringToObject(city, "type", "string");
    cJSON *req = cJSON_AddArrayToObject(params, "required");
    cJSON_AddItemToArray(req, cJSON_CreateString("city"));
    cJSON_AddItemToArray(tools, t);
    cJSON_AddStringToObject(j, "tool_choice", "auto");
}

static int image_part(cJSON *content)
{
    static const unsigned char red[3] = {255, 0, 0}, blue[3] = {0, 0, 255};
    struct buf png = BUF_INIT;
    if (png_two_halves(128, 128, red, blue, &png) < 0)
        return -1;
    size_t cap = 4 * ((png.len + 2) / 3) + 1;
    unsigned char *b64 = malloc(cap);
    if (!b64) {
        buf_free(&png);
        return -1;
    }
    EVP_EncodeBlock(b64, (const unsigned char *)png.data, (int)png.len);
    struct buf url = BUF_INIT;
    buf_printf(&url, "data:image/png;base64,%s", b64);
    cJSON *part = cJSON_CreateObject();
    cJSON_AddStringToObject(part, "type", "image_url");
    cJSON *iu = cJSON_AddObjectToObject(part, "image_url");
    cJSON_AddStringToObject(iu, "url", buf_str(&url));
    cJSON_AddItemToArray(content, part);
    free(b64);
    buf_free(&png);
    buf_free(&url);
    return 0;
}

char *smoke_request(int i)
{
    cJSON *j = base_request();
    cJSON *msgs = cJSON_AddArrayToObject(j, "messages");
    if (i == 0) {
        user_text(msgs, "What is 17 * 23?");
    } else if (i == 1) {
        user_text(msgs, "What is the weather in Warsaw right now? Use the get_weather tool.");
        weather_tool(j);
    } else {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "user");
        cJSON *content = cJSON_AddArrayToObject(m, "content");
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "type", "text");
        cJSON_AddStringToObject(t, "text", "This image has two halves. Name the colour of the "
                                           "left half, then the colour of the right half.");
        cJSON_AddItemToArray(content, t);
        if (image_part(content) < 0) {
            cJSON_Delete(j);
            cJSON_Delete(m);
            return NULL;
        }
        cJSON_AddItemToArray(msgs, m);
    }
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

/* Lower-case copy for word search. */
static void lower(const char *in, char *out, size_t sz)
{
    size_t i = 0;
    for (; in[i] && i + 1 < sz; i++)
        out[i] = (char)tolower((unsigned char)in[i]);
    out[i] = '\0';
}

static void excerpt(const char *s, char *out, size_t sz)
{
    text_copy_field(out, sz, s, strlen(s));
}

void smoke_judge(int i, const struct completion *c, const char *error, struct smoke_result *r)
{
    memset(r, 0, sizeof *r);
    r->name = NAMES[i];
    char ans[200], low[4096];
    excerpt(buf_str(&c->content), ans, sizeof ans);
    lower(buf_str(&c->content), low, sizeof low);
    double ttft = c->nchunks ? c->t_first - c->t_start : -1;
    if (error && *error) {
        snprintf(r->evidence, sizeof r->evidence, "%s (after %d chunks, content '%s')", error,
                 c->nchunks, ans);
        return;
    }
    if (i == 0) {
        bool think = strstr(buf_str(&c->content), "<think>") != NULL;
        r->pass = strstr(low, "391") && !think && strcmp(c->finish, "stop") == 0;
        snprintf(r->evidence, sizeof r->evidence,
                 "answer '%s', reasoning %zu chars, finish %s, %ld tokens, TTFT %.2f s%s", ans,
                 c->reasoning.len, c->finish[0] ? c->finish : "none", c->completion_tokens, ttft,
                 think ? ", <think> in the content" : "");
    } else if (i == 1) {
        const struct completion_tool *t = c->ntools ? &c->tools[0] : NULL;
        char args[200] = "";
        bool city = false;
        if (t) {
            excerpt(buf_str(&t->args), args, sizeof args);
            cJSON *a = cJSON_Parse(buf_str(&t->args));
            cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "city");
            if (cJSON_IsString(v)) {
                char lc[64];
                lower(v->valuestring, lc, sizeof lc);
                city = strstr(lc, "warsaw") != NULL;
            }
            cJSON_Delete(a);
        }
        r->pass = t && strcmp(t->name, "get_weather") == 0 && city;
        if (t)
            snprintf(r->evidence, sizeof r->evidence, "called %s(%s), finish %s", t->name, args,
                     c->finish[0] ? c->finish : "none");
        else
            snprintf(r->evidence, sizeof r->evidence, "no tool call; answer '%s'", ans);
    } else {
        const char *red = strstr(low, "red"), *blue = strstr(low, "blue");
        r->pass = red && blue && red < blue;
        snprintf(r->evidence, sizeof r->evidence, "answer '%s'%s", ans,
                 !red || !blue ? " (names not both colours)" : red > blue ? " (blue first)" : "");
    }
}

int smoke_run(const char *base, const char *key, int timeout_ms, FILE *out,
              struct smoke_result res[SMOKE_CHECKS])
{
    struct api_call calls[SMOKE_CHECKS];
    memset(calls, 0, sizeof calls);
    int passed = 0;
    for (int i = 0; i < SMOKE_CHECKS; i++) {
        calls[i].path = "/v1/chat/completions";
        calls[i].body = smoke_request(i);
        calls[i].stream = true;
        calls[i].timeout_ms = timeout_ms;
    }
    /* one after the other: MAX_SEQS is 2 and each check is timed alone */
    for (int i = 0; i < SMOKE_CHECKS; i++) {
        if (!calls[i].body) {
            res[i] = (struct smoke_result){NAMES[i], false, "cannot build the request"};
        } else {
            api_run(base, key, &calls[i], 1, NULL);
            smoke_judge(i, &calls[i].c, calls[i].error, &res[i]);
        }
        fprintf(out, "%-4s %-9s %s\n", res[i].pass ? "PASS" : "FAIL", res[i].name,
                res[i].evidence);
        fflush(out);
        passed += res[i].pass;
        api_call_free(&calls[i]);
        free(calls[i].body);
    }
    return passed;
}
