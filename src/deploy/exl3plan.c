#include "exl3plan.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

int exl3plan_rewrite(const char *text, const char *name, struct buf *out, struct buf *why)
{
    cJSON *j = cJSON_Parse(text);
    if (!cJSON_IsObject(j)) {
        const char *at = cJSON_GetErrorPtr();
        buf_printf(why, "plan %s is not a JSON object%s%.20s%s (download it again)", name,
                   at && j == NULL ? " near '" : "", at && j == NULL ? at : "",
                   at && j == NULL ? "'" : "");
        cJSON_Delete(j);
        return -1;
    }
    cJSON *q = cJSON_GetObjectItemCaseSensitive(j, "qdir");
    if (!cJSON_IsString(q) || !q->valuestring[0]) {
        buf_printf(why, "plan %s has no \"qdir\" string", name);
        cJSON_Delete(j);
        return -1;
    }
    struct buf nq = BUF_INIT;
    const char *p = q->valuestring;
    for (int first = 1; *p; first = 0) {
        size_t l = strcspn(p, ":");
        const char *e = p + l;
        while (e > p && e[-1] == '/')
            e--; /* "dir/" names dir */
        const char *base = e;
        while (base > p && base[-1] != '/')
            base--;
        if (base == e) {
            buf_printf(why, "plan %s: empty entry in qdir \"%s\"", name, q->valuestring);
            buf_free(&nq);
            cJSON_Delete(j);
            return -1;
        }
        buf_printf(&nq, "%s/model/exl3/%.*s", first ? "" : ":", (int)(e - base), base);
        p += l;
        if (*p == ':')
            p++;
    }
    cJSON_SetValuestring(q, buf_str(&nq));
    buf_free(&nq);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s) {
        buf_puts(why, "out of memory");
        return -1;
    }
    int rc = buf_puts(out, s);
    free(s);
    return rc;
}
