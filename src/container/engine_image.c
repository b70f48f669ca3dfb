/* engine_image: see engine_image.h. */
#include "engine_image.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "engine_at.h"
#include "jscan.h"
#include "inspect.h"

int engine_image_ref_ok(const char *ref, struct buf *err)
{
    size_t n = strlen(ref);
    bool ok = n > 0 && n <= ENGINE_IMAGE_REF_MAX && strchr("/-.", ref[0]) == NULL &&
              !strstr(ref, "..") && !strstr(ref, "//");
    for (size_t i = 0; ok && i < n; i++) {
        char c = ref[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             strchr("._/:@-", c) != NULL;
    }
    if (!ok)
        buf_printf(err, "image \"%.80s\": only letters, digits and ._/:@- (no \"..\" or \"//\"), "
                        "at most %d, go to the engine's API",
                   ref, ENGINE_IMAGE_REF_MAX);
    return ok ? 0 : -1;
}

/* The end of the JSON string that starts at p (its opening quote), just
 * past its closing quote; NULL when it does not end before end. */
static const char *string_end(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first element of the array raw that reads "CUDA_VERSION=..." (the
 * whole document was checked by jscan already), its value cut at a newline
 * as the CLI's {{println .}} and sed's first line would. 0 also when none
 * is there (out ""). */
static int env_cuda(const struct jscan_val *arr, char *out, size_t sz)
{
    const char *p = arr->raw + 1, *end = arr->raw + arr->raw_len - 1;
    out[0] = '\0';
    while (p < end) {
        while (p < end && (blank(*p) || *p == ','))
            p++;
        if (p >= end)
            break;
        if (*p != '"')
            return -1; /* Env holds strings only */
        const char *e = string_end(p, end);
        if (!e)
            return -1;
        struct jscan_val v;
        const char *why;
        struct buf s = BUF_INIT;
        if (jscan_get(p, (size_t)(e - p), NULL, 0, &v, &why) < 0 || jscan_string(&v, &s) < 0) {
            buf_free(&s);
            return -1;
        }
        static const char key[] = "CUDA_VERSION=";
        const char *t = buf_str(&s);
        if (strncmp(t, key, sizeof key - 1) == 0) {
            t += sizeof key - 1;
            text_copy_field(out, sz, t, strcspn(t, "\n"));
            buf_free(&s);
            return 0; /* the first one, as sed | head -n 1 (an empty one: none set) */
        }
        buf_free(&s);
        p = e;
    }
    return 0;
}

int engine_image_parse(const char *json, size_t len, bool strip_prefix, struct engine_image *img,
                       const char **why)
{
    memset(img, 0, sizeof *img);
    static const char *const idp[] = {"Id"}, *const envp[] = {"Config", "Env"};
    struct jscan_val v;
    const char *w = NULL;
    if (jscan_get(json, len, idp, 1, &v, &w) < 0) {
        *why = w ? w : "malformed";
        return -1;
    }
    struct buf s = BUF_INIT;
    if (v.type != JSCAN_STRING || jscan_string(&v, &s) < 0 || s.len == 0) {
        buf_free(&s);
        *why = "no Id";
        return -1;
    }
    const char *id = buf_str(&s);
    size_t n = s.len;
    if (strip_prefix && strncmp(id, "sha256:", 7) == 0)
        id += 7, n -= 7;
    text_copy_field(img->id, sizeof img->id, id, n);
    buf_free(&s);
    if (jscan_get(json, len, envp, 2, &v, &w) < 0) {
        *why = w ? w : "malformed";
        return -1;
    }
    if (v.type == JSCAN_ARRAY && env_cuda(&v, img->cuda, sizeof img->cuda) < 0) {
        *why = "Config.Env is no list of strings";
        return -1;
    }
    return 0;
}

int engine_image_inspect_at(const struct engine_at *at, const char *ref, bool strip_prefix,
                            long timeout_ms, struct engine_image *img, struct buf *err)
{
    memset(img, 0, sizeof *img);
    if (engine_image_ref_ok(ref, err) < 0)
        return -1;
    char path[ENGINE_IMAGE_REF_MAX + 32];
    snprintf(path, sizeof path, "/images/%s/json", ref);
    struct buf body = BUF_INIT;
    int status = 0;
    int rc = engine_call_at(at, "GET", path, timeout_ms, &body, &status, err);
    if (rc == 0 && status != 200) {
        char what[ENGINE_IMAGE_REF_MAX + 32];
        snprintf(what, sizeof what, "image inspect %s", ref);
        engine_error(err, at->sock, what, status, &body);
        rc = status == 404 ? ENGINE_NOSUCH : -1;
    } else if (rc == 0) {
        const char *why = NULL;
        if (engine_image_parse(body.data, body.len, strip_prefix, img, &why) < 0) {
            buf_printf(err, "%s: image inspect %s: %s", at->sock, ref, why);
            rc = -1;
        }
    }
    buf_free(&body);
    return rc;
}

int engine_image_inspect(const char *sock, const char *ref, bool strip_prefix, long timeout_ms,
                         struct engine_image *img, struct buf *err)
{
    const struct engine_at local = {sock, NULL, NULL};
    return engine_image_inspect_at(&local, ref, strip_prefix, timeout_ms, img, err);
}
