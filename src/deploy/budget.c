#include "budget.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deploy.h"

#define GIB 1073741824.0
/* Less KV than this is no deployment: the advice then names the weights */
#define MIN_KV_GIB 0.5

void budget_compute(struct budget *b)
{
    b->known = b->weights_gib >= 0 && b->total_gib > 0;
    double graphs = b->graphs_gib >= 0 ? b->graphs_gib : 0;
    b->need_gib = (b->weights_gib >= 0 ? b->weights_gib : 0) + b->kv_gib + graphs + b->host_gib;
    b->room_gib = b->total_gib > 0 ? b->total_gib - b->floor_gib : -1;
    b->fits = !b->known || b->need_gib <= b->room_gib;
    b->advice[0] = '\0';
    if (b->total_gib > 0 && !b->fits) {
        double over = b->need_gib - b->room_gib;
        double kv = b->kv_gib - over;
        if (kv >= MIN_KV_GIB) /* round down to 100 MB steps, as KV_BYTES is usually written */
            snprintf(b->advice, sizeof b->advice,
                     "%.1f GiB over: lower KV_BYTES to %.0f (now %.0f)",
                     over, floor(kv * GIB / 1e8) * 1e8, b->kv_gib * GIB);
        else
            snprintf(b->advice, sizeof b->advice,
                     "%.1f GiB over: the weights (%.1f GiB) and the host side leave no room for "
                     "a KV cache of %.1f GiB; spread the model over more nodes (TP)",
                     over, b->weights_gib, MIN_KV_GIB);
    } else if (b->total_gib > 0 && !b->known) {
        /* without the weights, the rest alone may already not fit */
        if (b->need_gib > b->room_gib)
            snprintf(b->advice, sizeof b->advice,
                     "even without the weights %.1f GiB is over: lower KV_BYTES",
                     b->need_gib - b->room_gib);
    }
    b->memfree_low = false;
    b->memfree_note[0] = '\0';
    double want = b->gpu_util * b->total_gib;
    if (b->free_gib >= 0 && b->total_gib > 0 && b->gpu_util > 0 && b->free_gib < want) {
        b->memfree_low = true;
        if (b->cached_gib >= 0 && b->free_gib + b->cached_gib >= want)
            snprintf(b->memfree_note, sizeof b->memfree_note,
                     "MemFree %.1f GiB is under GPU_UTIL x MemTotal (%.1f GiB), which vLLM's start "
                     "checks; %.1f GiB is page cache: `sync; echo 3 | sudo tee "
                     "/proc/sys/vm/drop_caches` frees it",
                     b->free_gib, want, b->cached_gib);
        else
            snprintf(b->memfree_note, sizeof b->memfree_note,
                     "MemFree %.1f GiB is under GPU_UTIL x MemTotal (%.1f GiB), which vLLM's start "
                     "checks: stop what holds the memory, or lower GPU_UTIL",
                     b->free_gib, want);
    }
}

static void record_path(const struct config *c, struct buf *p)
{
    buf_printf(p, "%s/budget.json", config_str(c, CFG_STATE_DIR));
}

/* What a record must match to be this deployment's: the weights a rank
 * holds depend on the image, the checkpoint's plan and the split. */
static void record_key(const struct config *c, struct buf *k)
{
    buf_printf(k, "%s|%s|TP=%s|PP=%s", config_str(c, CFG_IMG), config_str(c, CFG_PLAN_NAME),
               config_str(c, CFG_TP), config_str(c, CFG_PP));
}

static int capture_count(const struct config *c)
{
    long seqs = 2, nspec = 7;
    struct buf e = BUF_INIT;
    config_get_long(c, CFG_MAX_SEQS, &seqs, &e);
    config_get_long(c, CFG_NSPEC, &nspec, &e);
    buf_free(&e);
    int sizes[64];
    return deploy_capture_sizes((int)seqs, (int)nspec, sizes, 64);
}

static cJSON *load_records(const struct config *c)
{
    struct buf p = BUF_INIT, text = BUF_INIT;
    record_path(c, &p);
    cJSON *j = buf_read_file(&text, buf_str(&p), 1 << 20) == 0 ? cJSON_Parse(buf_str(&text)) : NULL;
    buf_free(&p);
    buf_free(&text);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j); /* missing or garbage: no record, never a crash */
        j = cJSON_CreateObject();
    }
    return j;
}

static double number(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 &&
                   v->valuedouble < 1e6
               ? v->valuedouble
               : -1;
}

void budget_for_node(const struct config *c, const char *node, const struct snapshot *s,
                     struct budget *b)
{
    memset(b, 0, sizeof *b);
    const struct probe_mem *m = &s->mem;
    b->total_gib = m->total_kib.ok ? m->total_kib.v / 1048576 : -1;
    b->free_gib = m->free_kib.ok ? m->free_kib.v / 1048576 : -1;
    b->cached_gib = m->cached_kib.ok ? m->cached_kib.v / 1048576 : -1;
    struct buf e = BUF_INIT;
    double v = 1;
    b->floor_gib = config_get_double(c, CFG_MEMGUARD_GIB, &v, &e) == 0 ? v : 1;
    b->kv_gib = config_get_double(c, CFG_KV_BYTES, &v, &e) == 0 ? v / GIB : 0;
    b->gpu_util = config_get_double(c, CFG_GPU_UTIL, &v, &e) == 0 ? v : 0;
    b->host_gib = BUDGET_HOST_GIB;
    b->weights_gib = b->graphs_gib = -1;
    int ncap = capture_count(c);
    cJSON *all = load_records(c);
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(all, node);
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(rec, "key");
    struct buf want = BUF_INIT;
    record_key(c, &want);
    if (cJSON_IsString(key) && strcmp(key->valuestring, buf_str(&want)) == 0) {
        b->weights_gib = number(rec, "weights_gib");
        if (b->weights_gib >= 0)
            snprintf(b->weights_from, sizeof b->weights_from, "last boot's log");
        if (number(rec, "graph_sizes") == ncap && (b->graphs_gib = number(rec, "graphs_gib")) >= 0)
            snprintf(b->graphs_from, sizeof b->graphs_from, "last boot's log");
    }
    const char *w = config_str(c, CFG_WEIGHTS_GIB);
    if (w && *w && config_get_double(c, CFG_WEIGHTS_GIB, &v, &e) == 0) {
        b->weights_gib = v;
        snprintf(b->weights_from, sizeof b->weights_from, "WEIGHTS_GIB");
    }
    if (b->graphs_gib < 0) {
        b->graphs_gib = ncap * BUDGET_GRAPH_GIB_PER_SIZE;
        snprintf(b->graphs_from, sizeof b->graphs_from, "estimate, %d capture sizes", ncap);
    }
    buf_free(&want);
    buf_free(&e);
    cJSON_Delete(all);
    budget_compute(b);
}

void budget_describe(const struct budget *b, struct buf *line)
{
    if (b->total_gib <= 0) {
        buf_puts(line, "memory budget n/a: MemTotal unknown");
        return;
    }
    char weights[120];
    if (b->weights_gib >= 0)
        snprintf(weights, sizeof weights, "weights %.1f (%s)", b->weights_gib, b->weights_from);
    else
        snprintf(weights, sizeof weights,
                 "weights n/a (no boot recorded yet; WEIGHTS_GIB sets them)");
    buf_printf(line,
               "memory budget: %s + KV %.1f + CUDA graphs %.1f (%s) + host side %.1f = %.1f GiB %s"
               " %.1f GiB (MemTotal %.1f - guard floor %.1f)",
               weights, b->kv_gib, b->graphs_gib, b->graphs_from, b->host_gib, b->need_gib,
               !b->known ? "(without the weights) of" : b->fits ? "fits in" : "does NOT fit in",
               b->room_gib, b->total_gib, b->floor_gib);
    if (b->advice[0])
        buf_printf(line, "; %s", b->advice);
}

int budget_record(const struct config *c, const char *node, double weights_gib, double graphs_gib,
                  struct buf *err)
{
    if (weights_gib < 0 && graphs_gib < 0)
        return 0;
    cJSON *all = load_records(c);
    struct buf key = BUF_INIT, path = BUF_INIT;
    record_key(c, &key);
    cJSON *rec = cJSON_GetObjectItemCaseSensitive(all, node);
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(rec, "key");
    if (!cJSON_IsObject(rec) || !cJSON_IsString(old) || strcmp(old->valuestring, buf_str(&key))) {
        cJSON_DeleteItemFromObjectCaseSensitive(all, node); /* another deployment's figures */
        rec = cJSON_AddObjectToObject(all, node);
    }
    int rc = -1;
    if (rec) {
        cJSON_DeleteItemFromObjectCaseSensitive(rec, "key");
        cJSON_AddStringToObject(rec, "key", buf_str(&key));
        const char *fields[] = {"weights_gib", "graphs_gib"};
        double vals[] = {weights_gib, graphs_gib};
        for (int i = 0; i < 2; i++)
            if (vals[i] >= 0) {
                cJSON_DeleteItemFromObjectCaseSensitive(rec, fields[i]);
                cJSON_AddNumberToObject(rec, fields[i], vals[i]);
            }
        if (graphs_gib >= 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(rec, "graph_sizes");
            cJSON_AddNumberToObject(rec, "graph_sizes", capture_count(c));
        }
        cJSON_DeleteItemFromObjectCaseSensitive(rec, "at");
        cJSON_AddNumberToObject(rec, "at", (double)time(NULL));
        char *text = cJSON_Print(all);
        record_path(c, &path);
        rc = text ? buf_write_file(buf_str(&path), text, strlen(text), 0600) : -1;
        if (rc < 0)
            buf_printf(err, "cannot write %s", buf_str(&path));
        free(text);
    }
    cJSON_Delete(all);
    buf_free(&key);
    buf_free(&path);
    return rc;
}
