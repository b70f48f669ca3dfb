#include "sim_answer.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static int add(struct sim_answer *a, enum sim_item_kind k, const char *text, size_t len)
{
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 32;
        struct sim_item *it = realloc(a->items, sizeof *it * (size_t)cap);
        if (!it)
            return -1;
        a->items = it;
        a->cap = cap;
    }
    char *t = strndup(text, len);
    if (!t)
        return -1;
    a->items[a->n++] = (struct sim_item){k, t};
    return 0;
}

/* One item per word, the space kept with the word that follows. */
static void add_words(struct sim_answer *a, enum sim_item_kind k, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *q = p + 1;
        while (*q && *q != ' ')
            q++;
        add(a, k, p, (size_t)(q - p));
        if (k == ITEM_REASONING)
            a->reasoning_tokens++;
        p = q;
    }
}

/* The text of the last user message, and its first image, if any. */
static void last_user(cJSON *req, struct buf *text, struct buf *image_url, bool *tool_result,
                      struct buf *tool_text)
{
    cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(req, "messages"))
    {
        cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (cJSON_IsString(role) && strcmp(role->valuestring, "tool") == 0) {
            *tool_result = true;
            buf_reset(tool_text);
            if (cJSON_IsString(c))
                buf_puts(tool_text, c->valuestring);
            cJSON *part; /* or parts: [{"type":"text","text":...}] */
            if (cJSON_IsArray(c))
                cJSON_ArrayForEach(part, c)
                {
                    cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
                    if (cJSON_IsString(t))
                        buf_puts(tool_text, t->valuestring);
                }
            continue;
        }
        if (!cJSON_IsString(role) || strcmp(role->valuestring, "user") != 0)
            continue;
        buf_reset(text);
        buf_reset(image_url);
        *tool_result = false;
        if (cJSON_IsString(c))
            buf_puts(text, c->valuestring);
        cJSON *part;
        if (cJSON_IsArray(c))
            cJSON_ArrayForEach(part, c)
            {
                cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
                cJSON *iu = cJSON_GetObjectItemCaseSensitive(part, "image_url");
                cJSON *url = cJSON_GetObjectItemCaseSensitive(iu, "url");
                if (cJSON_IsString(t))
                    buf_printf(text, "%s\n", t->valuestring);
                if (cJSON_IsString(url) && !image_url->len)
                    buf_puts(image_url, url->valuestring);
            }
    }
}

static bool has_tool(cJSON *req, const char *name)
{
    cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(req, "tools"))
    {
        cJSON *fn = cJSON_GetObjectItemCaseSensitive(t, "function");
        cJSON *n = cJSON_GetObjectItemCaseSensitive(fn, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return true;
    }
    return false;
}

/* "... in warsaw?" -> "Warsaw" */
static void city_of(const char *text, char *out, size_t sz)
{
    const char *p = strstr(text, " in ");
    snprintf(out, sz, "Paris");
    if (!p)
        return;
    p += 4;
    size_t n = 0;
    while (p[n] && (isalpha((unsigned char)p[n]) || p[n] == '-') && n + 1 < sz)
        n++;
    if (!n)
        return;
    memcpy(out, p, n);
    out[n] = '\0';
    out[0] = (char)toupper((unsigned char)out[0]);
}

static void vision(struct sim_answer *a, const char *url)
{
    const char *comma = strchr(url, ',');
    const char *left = NULL, *right = NULL;
    if (strncmp(url, "data:image/png;base64,", 22) == 0 && comma) {
        size_t in = strlen(comma + 1);
        unsigned char *png = malloc(in / 4 * 3 + 4);
        int n = png ? EVP_DecodeBlock(png, (const unsigned char *)comma + 1, (int)in) : -1;
        /* EVP_DecodeBlock counts padding as data: the PNG reader ignores
         * bytes after IEND */
        if (n > 0)
            sim_png_halves(png, (size_t)n, &left, &right);
        free(png);
    }
    char text[160];
    if (left && right)
        snprintf(text, sizeof text, "The left half of the image is %s and the right half is %s.",
                 left, right);
    else
        snprintf(text, sizeof text, "I cannot read this image.");
    add_words(a, ITEM_REASONING, "Looking at both halves.");
    add_words(a, ITEM_CONTENT, text);
}

int sim_answer_build(cJSON *req, bool chat, long limit, struct sim_answer *a)
{
    memset(a, 0, sizeof *a);
    a->finish = "stop";
    struct buf text = BUF_INIT, image = BUF_INIT, tool_text = BUF_INIT;
    bool tool_result = false;
    if (chat) {
        last_user(req, &text, &image, &tool_result, &tool_text);
    } else {
        cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "prompt");
        if (cJSON_IsString(p))
            buf_puts(&text, p->valuestring);
    }
    const char *t = buf_str(&text);
    char city[64];
    if (image.len) {
        vision(a, buf_str(&image));
    } else if (chat && has_tool(req, "get_weather") && strstr(t, "weather")) {
        city_of(t, city, sizeof city);
        if (tool_result) {
            add_words(a, ITEM_REASONING, "The tool answered.");
            struct buf ans = BUF_INIT;
            buf_printf(&ans, "The weather in %s: %s", city, buf_str(&tool_text));
            add_words(a, ITEM_CONTENT, buf_str(&ans));
            buf_free(&ans);
        } else {
            add_words(a, ITEM_REASONING, "I should call get_weather.");
            add(a, ITEM_TOOL_START, "get_weather", 11);
            add(a, ITEM_TOOL_ARGS, "{\"city\": ", 9);
            char arg[80];
            snprintf(arg, sizeof arg, "\"%s\"}", city);
            add(a, ITEM_TOOL_ARGS, arg, strlen(arg));
            a->finish = "tool_calls";
        }
    } else if (chat && has_tool(req, "read") && strstr(t, "Read the file ")) {
        /* a coding agent's file tool (Pi's read: {"path": ...}) */
        const char *p = strstr(t, "Read the file ") + 14;
        size_t n = strcspn(p, " \n\"'");
        while (n && (p[n - 1] == '.' || p[n - 1] == ','))
            n--;
        if (tool_result) {
            add_words(a, ITEM_REASONING, "The file was read.");
            struct buf ans = BUF_INIT;
            const char *tt = buf_str(&tool_text);
            buf_printf(&ans, "The file says: %.*s", (int)strcspn(tt, "\n"), tt);
            add_words(a, ITEM_CONTENT, buf_str(&ans));
            buf_free(&ans);
        } else {
            add_words(a, ITEM_REASONING, "I should read it.");
            add(a, ITEM_TOOL_START, "read", 4);
            struct buf arg = BUF_INIT;
            cJSON *o = cJSON_CreateObject();
            char *path = strndup(p, n);
            cJSON_AddStringToObject(o, "path", path ? path : "");
            free(path);
            char *js = cJSON_PrintUnformatted(o);
            cJSON_Delete(o);
            buf_puts(&arg, js ? js : "{}");
            free(js);
            add(a, ITEM_TOOL_ARGS, buf_str(&arg), arg.len);
            buf_free(&arg);
            a->finish = "tool_calls";
        }
    } else if (strstr(t, "The secret code is ")) {
        /* the long-context gate: find the planted code */
        const char *p = strstr(t, "The secret code is ") + 19;
        size_t n = 0;
        while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '-') && n < 40)
            n++;
        char ans[96];
        snprintf(ans, sizeof ans, "The secret code is %.*s.", (int)n, p);
        add_words(a, ITEM_REASONING, "Searching the document.");
        add_words(a, ITEM_CONTENT, ans);
    } else if (strstr(t, "17 * 23") || strstr(t, "17*23")) {
        if (chat)
            add_words(a, ITEM_REASONING, "17 * 20 = 340 and 17 * 3 = 51, so 340 + 51 = 391.");
        add_words(a, ITEM_CONTENT, "17 * 23 = 391.");
    } else {
        const char *env = getenv("DSV41_SIM_OUTPUT_TOKENS");
        int n = env ? atoi(env) : 64;
        struct buf story = BUF_INIT;
        for (int i = 0; i < n; i++)
            buf_printf(&story, "%s%s", i ? " " : "", i % 7 == 0 ? "Once" : "upon");
        if (chat)
            add_words(a, ITEM_REASONING, "A story, then.");
        add_words(a, ITEM_CONTENT, buf_str(&story));
        buf_free(&story);
    }
    if (limit >= 0 && a->n > limit) {
        for (int i = (int)limit; i < a->n; i++)
            free(a->items[i].text);
        a->n = (int)limit;
        a->finish = "length";
    }
    buf_free(&text);
    buf_free(&image);
    buf_free(&tool_text);
    return 0;
}

void sim_answer_free(struct sim_answer *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->items[i].text);
    free(a->items);
    memset(a, 0, sizeof *a);
}
