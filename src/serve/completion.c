#include "completion.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

void completion_init(struct completion *c, double t_start)
{
    memset(c, 0, sizeof *c);
    c->prompt_tokens = c->completion_tokens = c->reasoning_tokens = c->cached_tokens = -1;
    c->t_start = t_start;
}

void completion_free(struct completion *c)
{
    buf_free(&c->content);
    buf_free(&c->reasoning);
    for (int i = 0; i < c->ntools; i++)
        buf_free(&c->tools[i].args);
    free(c->chunk_t);
    c->chunk_t = NULL;
}

static long num(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15 ? (long)v->valuedouble
                                                                              : -1;
}

static void take_usage(struct completion *c, cJSON *u)
{
    if (!cJSON_IsObject(u))
        return;
    long v;
    if ((v = num(u, "prompt_tokens")) >= 0)
        c->prompt_tokens = v;
    if ((v = num(u, "completion_tokens")) >= 0)
        c->completion_tokens = v;
    cJSON *d = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens_details");
    if ((v = num(d, "reasoning_tokens")) >= 0)
        c->reasoning_tokens = v;
    d = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
    if ((v = num(d, "cached_tokens")) >= 0)
        c->cached_tokens = v;
}

static void append_str(struct buf *b, cJSON *v)
{
    if (cJSON_IsString(v))
        buf_puts(b, v->valuestring);
}

static struct completion_tool *tool_at(struct completion *c, int index)
{
    for (int i = 0; i < c->ntools; i++)
        if (c->tools[i].index == index)
            return &c->tools[i];
    if (c->ntools == COMPLETION_MAX_TOOLS)
        return NULL;
    struct completion_tool *t = &c->tools[c->ntools++];
    memset(t, 0, sizeof *t);
    t->index = index;
    return t;
}

static void take_tool_calls(struct completion *c, cJSON *calls)
{
    cJSON *tc;
    int pos = 0;
    cJSON_ArrayForEach(tc, calls)
    {
        /* deltas carry an index; a whole message's calls may not */
        long idx = num(tc, "index");
        struct completion_tool *t = tool_at(c, idx >= 0 ? (int)idx : pos);
        pos++;
        if (!t)
            continue;
        cJSON *id = cJSON_GetObjectItemCaseSensitive(tc, "id");
        if (cJSON_IsString(id) && id->valuestring[0])
            text_copy_field(t->id, sizeof t->id, id->valuestring, strlen(id->valuestring));
        cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
        cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
        if (cJSON_IsString(name) && name->valuestring[0])
            text_copy_field(t->name, sizeof t->name, name->valuestring,
                             strlen(name->valuestring));
        append_str(&t->args, cJSON_GetObjectItemCaseSensitive(fn, "arguments"));
    }
}

static void error_text(struct completion *c, cJSON *e)
{
    cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
    const char *msg = cJSON_IsString(m) ? m->valuestring : "error without a message";
    text_copy_field(c->error, sizeof c->error, msg, strlen(msg));
}

static void note_chunk(struct completion *c, double t)
{
    if (!c->nchunks)
        c->t_first = t;
    c->t_last = t;
    if (c->nchunks == c->chunk_cap) {
        int cap = c->chunk_cap ? c->chunk_cap * 2 : 256;
        double *n = realloc(c->chunk_t, sizeof *n * (size_t)cap);
        if (!n)
            return;
        c->chunk_t = n;
        c->chunk_cap = cap;
    }
    c->chunk_t[c->nchunks++] = t;
}

/* One choice: a stream's delta, a body's message, or a completion's text. */
static void take_choice(struct completion *c, cJSON *ch)
{
    cJSON *d = cJSON_GetObjectItemCaseSensitive(ch, "delta");
    if (!d)
        d = cJSON_GetObjectItemCaseSensitive(ch, "message");
    if (d) {
        append_str(&c->content, cJSON_GetObjectItemCaseSensitive(d, "content"));
        append_str(&c->reasoning, cJSON_GetObjectItemCaseSensitive(d, "reasoning"));
        append_str(&c->reasoning, cJSON_GetObjectItemCaseSensitive(d, "reasoning_content"));
        cJSON *calls = cJSON_GetObjectItemCaseSensitive(d, "tool_calls");
        if (cJSON_IsArray(calls))
            take_tool_calls(c, calls);
    } else {
        append_str(&c->content, cJSON_GetObjectItemCaseSensitive(ch, "text"));
    }
    cJSON *f = cJSON_GetObjectItemCaseSensitive(ch, "finish_reason");
    if (cJSON_IsString(f))
        text_copy_field(c->finish, sizeof c->finish, f->valuestring, strlen(f->valuestring));
}

static int take_object(struct completion *c, cJSON *j, double t)
{
    cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (err) {
        error_text(c, err);
        return 0;
    }
    cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    if (cJSON_IsArray(choices) && cJSON_GetArraySize(choices) > 0) {
        note_chunk(c, t);
        take_choice(c, cJSON_GetArrayItem(choices, 0));
    }
    take_usage(c, cJSON_GetObjectItemCaseSensitive(j, "usage"));
    return 0;
}

int completion_event(struct completion *c, const char *data, size_t len, double t)
{
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        c->done = true;
        return 1;
    }
    cJSON *j = cJSON_ParseWithLength(data, len);
    if (!cJSON_IsObject(j)) {
        snprintf(c->error, sizeof c->error, "malformed chunk after %d chunks: %.80s", c->nchunks,
                 data);
        for (char *p = c->error; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = '?';
        cJSON_Delete(j);
        return -1;
    }
    int rc = take_object(c, j, t);
    cJSON_Delete(j);
    return rc;
}

int completion_body(struct completion *c, const char *body, double t)
{
    cJSON *j = cJSON_Parse(body);
    if (!cJSON_IsObject(j)) {
        snprintf(c->error, sizeof c->error, "response is not JSON: %.80s", body);
        cJSON_Delete(j);
        return -1;
    }
    int rc = take_object(c, j, t);
    c->done = true;
    cJSON_Delete(j);
    return rc;
}
