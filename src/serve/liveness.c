#include "liveness.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "mono.h"

void liveness_init(struct liveness *l)
{
    memset(l, 0, sizeof *l);
    l->idle_since = -1;
}

bool liveness_due(struct liveness *l, const struct metrics *m, double now, double idle_s)
{
    if (!m) { /* no scrape: nothing is known to be idle */
        l->idle_since = -1;
        l->gen.ok = false;
        if (!l->in_flight)
            l->have = l->ok = l->wedged = false;
        return false;
    }
    bool moved = l->gen.ok && m->generation_tokens.ok && m->generation_tokens.v != l->gen.v;
    bool busy = (m->running.ok && m->running.v > 0) || (m->waiting.ok && m->waiting.v > 0) || moved;
    l->gen = m->generation_tokens;
    if (moved && l->have && !l->ok && !l->in_flight)
        l->have = l->wedged = false;
    if (busy || l->idle_since < 0)
        l->idle_since = now;
    return idle_s > 0 && !l->in_flight && now - l->idle_since >= idle_s &&
           (l->last_probe == 0 || now - l->last_probe >= idle_s);
}

void liveness_result(struct liveness *l, int rc, double latency_s, const char *why, double now)
{
    bool ok = rc == 0;
    l->in_flight = false;
    l->have = true;
    l->ok = ok;
    l->wedged = rc == LIVENESS_WEDGED;
    l->latency_s = ok ? latency_s : 0;
    l->at = l->last_probe = now;
    snprintf(l->why, sizeof l->why, "%s", ok ? "" : why);
}

int liveness_probe(const char *base, const char *key, const char *model, double deadline_s,
                   const atomic_int *cancel, double *latency_s, char *why, size_t whysz)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "model", model);
    cJSON_AddStringToObject(j, "prompt", "1 + 1 =");
    cJSON_AddNumberToObject(j, "max_tokens", 1);
    cJSON_AddNumberToObject(j, "temperature", 0);
    cJSON_AddBoolToObject(j, "stream", true);
    struct api_call call;
    memset(&call, 0, sizeof call);
    call.path = "/v1/completions";
    call.body = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    call.stream = true;
    call.timeout_ms = (int)(deadline_s * 1000);
    call.stop_after = 1; /* the first token is the proof */
    int rc = -1;
    if (!call.body) {
        snprintf(why, whysz, "cannot build the probe's request");
        return -1;
    }
    double t0 = mono_s();
    api_run(base, key, &call, 1, cancel);
    bool timed_out = mono_s() - t0 >= deadline_s - 0.05;
    if (call.c.nchunks > 0) {
        *latency_s = call.c.t_first - call.c.t_start;
        rc = 0;
    } else if (call.http_code == 200 && timed_out) {
        /* the answer a dead peer rank gives: a stream that never carries a token */
        snprintf(why, whysz, "no token within %.0f s (HTTP 200, the stream stayed empty)",
                 deadline_s);
        rc = LIVENESS_WEDGED;
    } else if (call.http_code == 0 && timed_out) {
        snprintf(why, whysz, "no answer within %.0f s%s%.200s", deadline_s,
                 call.error[0] ? ": " : "", call.error);
        rc = LIVENESS_WEDGED;
    } else if (call.http_code) {
        snprintf(why, whysz, "HTTP %ld: %.200s", call.http_code,
                 call.error[0] ? call.error : "no token");
    } else {
        snprintf(why, whysz, "%.200s", call.error[0] ? call.error : "no answer");
    }
    api_call_free(&call);
    free(call.body);
    return rc;
}
