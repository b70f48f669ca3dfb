#include "benchtab.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* REFERENCE.md §1: historical image, full checkpoint. */
static const struct {
    const char *name;
    double ref;
} REF[] = {{"prefill 8192", 2050}, {"prefill 32768", 2061}, {"decode C=1 code", 40},
           {"decode C=2 code agg", 60}, {"decode C=1 prose", 29}};

static int row_for(struct benchtab *t, const char *name)
{
    for (int i = 0; i < t->nrows; i++)
        if (strcmp(t->row[i].name, name) == 0)
            return i;
    if (t->nrows >= BENCHTAB_ROWS)
        return -1;
    int i = t->nrows++;
    snprintf(t->row[i].name, sizeof t->row[i].name, "%s", name);
    t->row[i].ref = -1;
    for (size_t k = 0; k < sizeof REF / sizeof *REF; k++)
        if (strcmp(REF[k].name, name) == 0)
            t->row[i].ref = REF[k].ref;
    for (int c = 0; c < BENCHTAB_RUNS; c++)
        t->row[i].v[c] = -1;
    return i;
}

static void set(struct benchtab *t, int col, const char *name, const cJSON *num)
{
    int r = row_for(t, name);
    if (r >= 0 && cJSON_IsNumber(num))
        t->row[r].v[col] = num->valuedouble;
}

int benchtab_add(struct benchtab *t, int col, const char *json, const char *fallback_name)
{
    if (col < 0 || col >= BENCHTAB_RUNS)
        return -1;
    if (t->nrows == 0) /* the reference rows first, in their order */
        for (size_t k = 0; k < sizeof REF / sizeof *REF; k++)
            row_for(t, REF[k].name);
    cJSON *root = cJSON_Parse(json);
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "prefill");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decode");
    if (!cJSON_IsObject(root) || (!cJSON_IsObject(pre) && !cJSON_IsArray(dec))) {
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(root, "label");
    snprintf(t->run[col], sizeof t->run[col], "%.39s",
             cJSON_IsString(label) && *label->valuestring ? label->valuestring : fallback_name);
    const cJSON *e;
    char name[40];
    cJSON_ArrayForEach(e, pre)
    {
        snprintf(name, sizeof name, "prefill %.20s", e->string ? e->string : "?");
        set(t, col, name, cJSON_GetObjectItemCaseSensitive(e, "median"));
    }
    cJSON_ArrayForEach(e, dec)
    {
        const cJSON *C = cJSON_GetObjectItemCaseSensitive(e, "C");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "kind");
        if (!cJSON_IsNumber(C) || !cJSON_IsString(kind))
            continue;
        snprintf(name, sizeof name, "decode C=%d %.12s", C->valueint, kind->valuestring);
        set(t, col, name, cJSON_GetObjectItemCaseSensitive(e, "per_stream_median"));
        if (C->valueint > 1) {
            snprintf(name, sizeof name, "decode C=%d %.12s agg", C->valueint, kind->valuestring);
            set(t, col, name, cJSON_GetObjectItemCaseSensitive(e, "aggregate"));
        }
    }
    cJSON_Delete(root);
    if (col >= t->nruns)
        t->nruns = col + 1;
    return 0;
}

static int newest_first(const void *a, const void *b)
{
    return -strcmp(*(char *const *)a, *(char *const *)b);
}

int benchtab_load(const char *dir, struct benchtab *t)
{
    memset(t, 0, sizeof *t);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strncmp(e->d_name, "bench", 5) == 0 && strcmp(e->d_name + l - 5, ".json") == 0)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    /* bench-YYYYmmdd-HHMMSS.json: the name orders them in time */
    qsort(names, (size_t)n, sizeof *names, newest_first);
    int col = 0;
    for (int i = 0; i < n; i++) {
        if (!names[i])
            continue;
        struct buf path = BUF_INIT, text = BUF_INIT;
        buf_printf(&path, "%s/%s", dir, names[i]);
        char shown[40];
        snprintf(shown, sizeof shown, "%.30s", names[i] + (strncmp(names[i], "bench-", 6) ? 0 : 6));
        if (col < BENCHTAB_RUNS && buf_read_file(&text, buf_str(&path), 4 << 20) == 0 &&
            benchtab_add(t, col, buf_str(&text), shown) == 0) {
            /* "label HH:MM" from bench-YYYYmmdd-HHMMSS.json */
            int day, hh, mm;
            char both[40];
            if (sscanf(shown, "%8d-%2d%2d", &day, &hh, &mm) == 3 && strcmp(t->run[col], shown))
                snprintf(both, sizeof both, "%.10s %02d:%02d", t->run[col], hh, mm);
            else
                snprintf(both, sizeof both, "%.16s", t->run[col]);
            snprintf(t->run[col], sizeof t->run[col], "%s", both);
            col++;
        }
        buf_free(&path);
        buf_free(&text);
        free(names[i]);
    }
    return t->nruns;
}
