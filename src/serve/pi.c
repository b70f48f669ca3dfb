/* pi: see pi.h. */
#include "pi.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "dirs.h"
#include "text.h"

void pi_config_dir(char *out, size_t sz)
{
    const char *d = getenv("PI_CODING_AGENT_DIR");
    const char *home = getenv("HOME");
    if (d && *d)
        snprintf(out, sz, "%s", d);
    else
        snprintf(out, sz, "%s/.pi/agent", home && *home ? home : ".");
}

int pi_read_entry(const char *dir, struct pi_entry *e, char *why, size_t whysz)
{
    memset(e, 0, sizeof *e);
    struct buf path = BUF_INIT, text = BUF_INIT;
    buf_printf(&path, "%s/models.json", dir);
    int rc = -1;
    cJSON *j = NULL;
    if (buf_read_file(&text, buf_str(&path), 4u << 20) < 0) {
        snprintf(why, whysz, "%s: not there (run pi/install.sh BASE_URL)", buf_str(&path));
        goto out;
    }
    if (!(j = cJSON_Parse(buf_str(&text)))) {
        snprintf(why, whysz, "%s is not JSON", buf_str(&path));
        goto out;
    }
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(j, "providers"), PI_PROVIDER);
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(p, "baseUrl");
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(p, "apiKey");
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "models"), 0);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    const cJSON *low = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "thinkingLevelMap"), "low");
    if (!cJSON_IsObject(p)) {
        snprintf(why, whysz, "%s has no %s provider (run pi/install.sh BASE_URL)", buf_str(&path),
                 PI_PROVIDER);
        goto out;
    }
    if (!cJSON_IsString(url) || !cJSON_IsString(id)) {
        snprintf(why, whysz, "%s: the %s provider has no baseUrl or model id (run pi/install.sh "
                             "again)",
                 buf_str(&path), PI_PROVIDER);
        goto out;
    }
    text_clean(e->base_url, sizeof e->base_url, url->valuestring, strlen(url->valuestring));
    text_clean(e->model, sizeof e->model, id->valuestring, strlen(id->valuestring));
    if (cJSON_IsString(key) && key->valuestring[0] == '$')
        snprintf(e->key_env, sizeof e->key_env, "%.*s",
                 (int)strspn(key->valuestring + 1,
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"),
                 key->valuestring + 1);
    else
        e->key_literal = cJSON_IsString(key) && key->valuestring[0];
    if (cJSON_IsString(low))
        text_clean(e->low_effort, sizeof e->low_effort, low->valuestring, strlen(low->valuestring));
    rc = 0;
out:
    cJSON_Delete(j);
    buf_free(&path);
    buf_free(&text);
    return rc;
}

static bool is_dir_with_install(const char *d)
{
    struct buf p = BUF_INIT;
    buf_printf(&p, "%s/install.sh", d);
    bool ok = access(buf_str(&p), X_OK) == 0;
    buf_free(&p);
    return ok;
}

void pi_share_dir(char *out, size_t sz)
{
    out[0] = '\0';
    const char *env = getenv("DSV41_PI_DIR");
    if (env && *env && is_dir_with_install(env)) {
        snprintf(out, sz, "%s", env);
        return;
    }
    /* the binary's directory: PREFIX/bin, build/ of a checkout, or the
     * checkout itself (make copies the programs to its top) */
    char exe[PATH_MAX];
    if (dirs_exe_dir(exe, sizeof exe) < 0)
        return;
    static const char *const rel[] = {"/../share/dsv41-top/pi", "/../pi", "/pi"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        char cand[PATH_MAX + 32], real[PATH_MAX];
        snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
        if (is_dir_with_install(cand) && realpath(cand, real)) {
            snprintf(out, sz, "%s", real);
            return;
        }
    }
}

/* "~/x" for a path under $HOME (what a laptop's ssh expands on the head). */
static void tilde(const char *path, char *out, size_t sz)
{
    const char *home = getenv("HOME");
    size_t hl = home ? strlen(home) : 0;
    if (hl > 1 && strncmp(path, home, hl) == 0 && path[hl] == '/')
        snprintf(out, sz, "~%s", path + hl);
    else
        snprintf(out, sz, "%s", path);
}

void pi_connect_lines(const struct config *c, const char *url, struct strv *lines)
{
    char host[256] = "", base[600];
    if (url && *url) {
        size_t l = strlen(url);
        while (l && url[l - 1] == '/')
            l--;
        snprintf(base, sizeof base, "%.*s", (int)l, url);
    } else {
        /* the API as the settings name it, unless that is only this machine's loopback */
        struct buf b = BUF_INIT;
        api_base_url(c, &b);
        char h[256], want[256];
        api_same_host(buf_str(&b), buf_str(&b), h, want);
        if (strcmp(h, "127.0.0.1") == 0 || strcmp(h, "localhost") == 0 || strcmp(h, "::1") == 0 ||
            !h[0]) {
            gethostname(host, sizeof host - 1);
            snprintf(base, sizeof base, "http://%s:%s", host, config_str(c, CFG_PORT));
        } else {
            snprintf(base, sizeof base, "%s", buf_str(&b));
        }
        buf_free(&b);
    }
    size_t bl = strlen(base);
    bool v1 = bl >= 3 && strcmp(base + bl - 3, "/v1") == 0;
    /* the head as ssh would reach it: the URL's host */
    char h[256], want[256];
    api_same_host(base, base, h, want);
    if (!host[0])
        snprintf(host, sizeof host, "%s", h[0] ? h : "HEAD");
    char share[PATH_MAX], keyfile[PATH_MAX];
    pi_share_dir(share, sizeof share);
    tilde(config_str(c, CFG_API_KEY_FILE), keyfile, sizeof keyfile);
    strv_addf(lines, "# on the laptop (Pi needs Node.js >= 22.19; pi/install.sh installs Pi with "
                     "npm when it is missing):");
    /* a directory of its own: a fixed /tmp path may hold another user's files */
    const char *dir = share[0] ? share : "/usr/local/share/dsv41-top/pi";
    const char *last = strrchr(dir, '/');
    last = last && last[1] ? last + 1 : "pi";
    strv_addf(lines, "d=$(mktemp -d) && scp -r %s:%s \"$d\" && \"$d/%s/install.sh\" %s%s", host, dir,
              last, base, v1 ? "" : "/v1");
    /* quoted for the laptop's shell, so ~ is the head's home, not the laptop's */
    if (strspn(keyfile, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./~-") ==
        strlen(keyfile))
        strv_addf(lines, "export DSV41_API_KEY=\"$(ssh %s 'cat %s')\"", host, keyfile);
    else
        strv_addf(lines, "export DSV41_API_KEY=\"$(ssh %s cat \\\"%s\\\")\"  # check the quoting "
                         "of this path",
                  host, config_str(c, CFG_API_KEY_FILE));
    strv_addf(lines, "\"$d/%s/install.sh\" --check   # Pi, the provider, the key, a request: "
                     "PASS/FAIL each",
              last);
    strv_addf(lines, "pi --model %s/%s", PI_PROVIDER, PI_MODEL);
    strv_addf(lines, "# a first question: pi -p 'What is 17 * 23?' --model %s/%s < /dev/null",
              PI_PROVIDER, PI_MODEL);
}

static void line(FILE *out, bool pass, const char *what, const char *evidence)
{
    fprintf(out, "%-4s %-10s %s\n", pass ? "PASS" : "FAIL", what, evidence);
    fflush(out);
}

/* baseUrl "http://h:p/v1" -> "http://h:p" and "/v1/chat/completions" */
static void split_url(const char *url, char *base, size_t bsz, char *path, size_t psz)
{
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL;
    size_t l = p ? (size_t)(p - url) : strlen(url);
    snprintf(base, bsz, "%.*s", (int)l, url);
    const char *rest = p ? p : "";
    size_t rl = strlen(rest);
    while (rl && rest[rl - 1] == '/')
        rl--;
    snprintf(path, psz, "%.*s/chat/completions", (int)rl, rest);
}

int pi_check(const char *dir, int timeout_ms, FILE *out)
{
    int failed = 0;
    struct pi_entry e;
    char why[700], ev[2400];
    if (pi_read_entry(dir, &e, why, sizeof why) < 0) {
        line(out, false, "provider", why);
        return 1 + 3; /* nothing else can be checked */
    }
    snprintf(ev, sizeof ev, "%s in %s/models.json: %s, model %s", PI_PROVIDER, dir, e.base_url,
             e.model);
    line(out, true, "provider", ev);

    struct buf ext = BUF_INIT, extp = BUF_INIT;
    buf_printf(&extp, "%s/extensions/%s.ts", dir, PI_PROVIDER);
    bool ext_ok = buf_read_file(&ext, buf_str(&extp), 1 << 20) == 0 &&
                  strstr(buf_str(&ext), "max_completion_tokens") &&
                  strstr(buf_str(&ext), "before_provider_request");
    snprintf(ev, sizeof ev, "%s%s", buf_str(&extp),
             ext_ok ? "" : ": missing or not the one pi/install.sh installs (run it again), so "
                           "Pi caps every answer");
    line(out, ext_ok, "extension", ev);
    failed += !ext_ok;
    buf_free(&ext);
    buf_free(&extp);

    const char *key = e.key_env[0] ? getenv(e.key_env) : NULL;
    bool key_ok = key && *key;
    if (e.key_literal)
        snprintf(ev, sizeof ev, "the key is written into models.json: run pi/install.sh again to "
                                "read it from $DSV41_API_KEY instead");
    else if (!e.key_env[0])
        snprintf(ev, sizeof ev, "the provider names no key variable (apiKey \"$NAME\"): run "
                                "pi/install.sh again");
    else
        snprintf(ev, sizeof ev, "$%s %s", e.key_env,
                 key_ok ? "is set" : "is not set in this shell: export it (the line from "
                                     "`dsv41-top pi`), then start Pi from that shell");
    key_ok = key_ok && !e.key_literal;
    line(out, key_ok, "key", ev);
    failed += !key_ok;

    /* one request as Pi sends it with this entry: streamed, reasoning_effort
     * of level low, no output limit (what the extension leaves) */
    char base[600], path[700];
    split_url(e.base_url, base, sizeof base, path, sizeof path);
    cJSON *rq = cJSON_CreateObject();
    cJSON_AddStringToObject(rq, "model", e.model);
    cJSON_AddBoolToObject(rq, "stream", true);
    cJSON *so = cJSON_AddObjectToObject(rq, "stream_options");
    cJSON_AddBoolToObject(so, "include_usage", true);
    if (e.low_effort[0])
        cJSON_AddStringToObject(rq, "reasoning_effort", e.low_effort);
    cJSON *msgs = cJSON_AddArrayToObject(rq, "messages");
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "role", "user");
    cJSON_AddStringToObject(msg, "content", "What is 17 * 23?");
    cJSON_AddItemToArray(msgs, msg);
    struct api_call call = {.path = path, .body = cJSON_PrintUnformatted(rq), .stream = true,
                            .timeout_ms = timeout_ms};
    cJSON_Delete(rq);
    bool asked_ok = false;
    if (!key_ok) {
        snprintf(ev, sizeof ev, "not sent: no key");
    } else if (call.body) {
        api_run(base, key, &call, 1, NULL);
        asked_ok = !call.error[0] && call.c.content.len > 0;
        char answer[200];
        text_clean(answer, sizeof answer, buf_str(&call.c.content), call.c.content.len);
        if (asked_ok)
            snprintf(ev, sizeof ev, "%s%s answered: %s", base, path, answer);
        else if (call.http_code == 401)
            snprintf(ev, sizeof ev, "%s%s: HTTP 401, the server refused the key in $%s (is it "
                                    "the head's STATE_DIR/api_key?)",
                     base, path, e.key_env);
        else
            snprintf(ev, sizeof ev, "%s%s: %s", base, path,
                     call.error[0] ? call.error : "an empty answer");
        api_call_free(&call);
    }
    free(call.body);
    line(out, asked_ok, "request", ev);
    failed += !asked_ok;
    return failed;
}
