#include "probe.h"
#include "text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int probe_for_each_line(const char *text, int (*fn)(const char *line, size_t len, void *ctx),
                        void *ctx)
{
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len && p[len - 1] == '\r')
            len--;
        int rc = fn(p, len, ctx);
        if (rc)
            return rc;
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

static bool parse_u64_kib(const char *s, size_t len, double *out)
{
    char tmp[64];
    if (len >= sizeof tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(tmp, &end, 10);
    if (end == tmp || errno)
        return false;
    while (*end == ' ')
        end++;
    if (*end && strcmp(end, "kB") != 0)
        return false;
    *out = (double)v;
    return true;
}

struct mem_ctx {
    struct probe_mem *m;
};

static int meminfo_line(const char *line, size_t len, void *ctx)
{
    struct probe_mem *m = ((struct mem_ctx *)ctx)->m;
    static const struct {
        const char *key;
        size_t off;
    } fields[] = {
        {"MemTotal:", offsetof(struct probe_mem, total_kib)},
        {"MemAvailable:", offsetof(struct probe_mem, available_kib)},
        {"MemFree:", offsetof(struct probe_mem, free_kib)},
        {"Cached:", offsetof(struct probe_mem, cached_kib)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        size_t kl = strlen(fields[i].key);
        if (len > kl && memcmp(line, fields[i].key, kl) == 0) {
            const char *v = line + kl;
            size_t vl = len - kl;
            while (vl && *v == ' ') {
                v++;
                vl--;
            }
            struct pval *pv = (struct pval *)((char *)m + fields[i].off);
            double d;
            if (parse_u64_kib(v, vl, &d)) {
                pv->ok = true;
                pv->v = d;
            }
        }
    }
    return 0;
}

int probe_parse_meminfo(const char *text, struct probe_mem *out)
{
    memset(out, 0, sizeof *out);
    struct mem_ctx ctx = {out};
    probe_for_each_line(text, meminfo_line, &ctx);
    return out->total_kib.ok && out->available_kib.ok ? 0 : -1;
}

static int vmstat_line(const char *line, size_t len, void *ctx)
{
    struct pval *pv = ctx;
    if (len > 9 && memcmp(line, "oom_kill ", 9) == 0) {
        double d;
        if (parse_u64_kib(line + 9, len - 9, &d)) {
            pv->ok = true;
            pv->v = d;
            return 1;
        }
    }
    return 0;
}

int probe_parse_vmstat_oom(const char *text, struct pval *oom_kill)
{
    oom_kill->ok = false;
    oom_kill->v = 0;
    probe_for_each_line(text, vmstat_line, oom_kill);
    return oom_kill->ok ? 0 : -1;
}

struct pval probe_parse_smi_number(const char *field)
{
    struct pval r = {false, 0};
    while (*field == ' ')
        field++;
    if (!*field || *field == '[' || strncmp(field, "N/A", 3) == 0)
        return r;
    char *end;
    errno = 0;
    double d = strtod(field, &end);
    if (end == field || errno || !isfinite(d))
        return r;
    while (*end == ' ')
        end++;
    /* Units the with-units CSV appends; anything else means garbage. */
    static const char *units[] = {"", "%", "W", "MiB", "MHz", "C"};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i]) == 0) {
            r.ok = true;
            r.v = d;
            break;
        }
    return r;
}

/* Splits a CSV line on ',' (nvidia-smi never quotes), trimming spaces. */
static int split_csv(const char *line, size_t len, char fields[][PROBE_NAME_MAX], int max)
{
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || line[i] == ',') {
            if (n == max)
                return -1;
            size_t a = start, b = i;
            while (a < b && line[a] == ' ')
                a++;
            while (b > a && line[b - 1] == ' ')
                b--;
            text_copy_field(fields[n], PROBE_NAME_MAX, line + a, b - a);
            n++;
            start = i + 1;
        }
    }
    return n;
}

static bool blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t')
            return false;
    return true;
}

struct gpu_ctx {
    struct probe_gpu *gpus;
    int max, n;
};

static int gpu_line(const char *line, size_t len, void *vctx)
{
    struct gpu_ctx *ctx = vctx;
    if (blank(line, len))
        return 0;
    char f[12][PROBE_NAME_MAX];
    if (split_csv(line, len, f, 12) != 11)
        return -1;
    struct pval idx = probe_parse_smi_number(f[0]);
    if (!idx.ok || idx.v < 0 || idx.v > 4096)
        return -1;
    if (ctx->n == ctx->max)
        return 0;
    struct probe_gpu *g = &ctx->gpus[ctx->n++];
    memset(g, 0, sizeof *g);
    g->index = (int)idx.v;
    snprintf(g->name, sizeof g->name, "%s", f[1]);
    snprintf(g->uuid, sizeof g->uuid, "%s", f[2]);
    g->util_pct = probe_parse_smi_number(f[3]);
    g->temp_c = probe_parse_smi_number(f[4]);
    g->power_w = probe_parse_smi_number(f[5]);
    g->power_limit_w = probe_parse_smi_number(f[6]);
    g->mem_total_mib = probe_parse_smi_number(f[7]);
    g->mem_used_mib = probe_parse_smi_number(f[8]);
    g->mem_free_mib = probe_parse_smi_number(f[9]);
    g->sm_clock_mhz = probe_parse_smi_number(f[10]);
    return 0;
}

int probe_parse_gpu_csv(const char *text, struct probe_gpu *gpus, int max)
{
    struct gpu_ctx ctx = {gpus, max, 0};
    if (probe_for_each_line(text, gpu_line, &ctx))
        return -1;
    return ctx.n;
}

struct apps_ctx {
    struct probe_gpu_proc *procs;
    int max, n;
};

static int apps_line(const char *line, size_t len, void *vctx)
{
    struct apps_ctx *ctx = vctx;
    if (blank(line, len))
        return 0;
    /* "No running processes found" is what older drivers print. */
    if (len >= 2 && memcmp(line, "No", 2) == 0)
        return 0;
    char f[5][PROBE_NAME_MAX];
    if (split_csv(line, len, f, 5) != 4)
        return -1;
    struct pval pid = probe_parse_smi_number(f[1]);
    if (!pid.ok || pid.v < 0 || pid.v > 4194304) /* PID_MAX_LIMIT */
        return -1;
    if (ctx->n == ctx->max)
        return 0;
    struct probe_gpu_proc *p = &ctx->procs[ctx->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->gpu_uuid, sizeof p->gpu_uuid, "%s", f[0]);
    p->pid = (int)pid.v;
    snprintf(p->name, sizeof p->name, "%s", f[2]);
    p->used_mib = probe_parse_smi_number(f[3]);
    return 0;
}

int probe_parse_compute_apps(const char *text, struct probe_gpu_proc *procs, int max)
{
    struct apps_ctx ctx = {procs, max, 0};
    if (probe_for_each_line(text, apps_line, &ctx))
        return -1;
    return ctx.n;
}
