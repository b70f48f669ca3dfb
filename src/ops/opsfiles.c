#include "opsfiles.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accept.h"
#include "buf.h"
#include "text.h"

int opsfiles_incident_kind(const char *name)
{
    /* 20261204-131500-guard-fired[-2] */
    if (strlen(name) < 17 || name[8] != '-' || name[15] != '-')
        return -1;
    char slug[64];
    snprintf(slug, sizeof slug, "%s", name + 16);
    for (int pass = 0; pass < 2; pass++) {
        int k = events_kind_index(slug);
        if (k >= 0)
            return k;
        char *dash = strrchr(slug, '-'); /* a twin's "-N" */
        if (!dash || !dash[1] || strspn(dash + 1, "0123456789") != strlen(dash + 1))
            return -1;
        *dash = '\0';
    }
    return -1;
}

static void load_incidents(const char *state_dir, struct opsfiles *f)
{
    char top[700];
    snprintf(top, sizeof top, "%s/incidents", state_dir);
    DIR *d = opendir(top);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        int k = opsfiles_incident_kind(e->d_name);
        if (k >= 0)
            f->incidents[k]++;
        else
            f->incidents_other++;
    }
    closedir(d);
}

static void load_copy(const char *state_dir, struct opsfiles *f)
{
    struct buf path = BUF_INIT, b = BUF_INIT;
    buf_printf(&path, "%s/%s", state_dir, OPSFILES_COPY);
    long pid;
    long long landed, need, at;
    char node[32];
    if (buf_read_file(&b, buf_str(&path), 4096) == 0 &&
        sscanf(buf_str(&b), "%ld %lld %lld %lld %31s", &pid, &landed, &need, &at, node) == 5 &&
        pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM) && landed >= 0 && need >= 0 &&
        (long long)time(NULL) - at < 30) { /* rewritten each second: older is a copy gone */
        f->copying = true;
        f->copy_landed = landed;
        f->copy_need = need;
        text_clean(f->copy_node, sizeof f->copy_node, node, strlen(node));
    }
    buf_free(&path);
    buf_free(&b);
}

void opsfiles_load(const struct config *c, struct opsfiles *f)
{
    memset(f, 0, sizeof *f);
    f->read = true;
    f->accept_pass = -1;
    const char *sd = config_str(c, CFG_STATE_DIR);
    load_incidents(sd, f);
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/accept", sd);
    struct accept_view *av = calloc(1, sizeof *av);
    if (av) {
        accept_view_load(buf_str(&p), av);
        snprintf(f->accept_last, sizeof f->accept_last, "%s", av->last);
        f->accept_pass = strncmp(av->last, "pass,", 5) == 0   ? 1
                         : strncmp(av->last, "fail,", 5) == 0 ? 0
                                                              : -1;
        free(av);
    }
    struct benchhist *h = calloc(1, sizeof *h);
    int newest = -1; /* a candidate's run measured an image that is not serving */
    if (h && benchhist_load(sd, h) > 0)
        for (int i = h->n - 1; i >= 0 && newest < 0; i--)
            if (strcmp(h->r[i].label, BENCHHIST_CANDIDATE) != 0)
                newest = i;
    if (newest >= 0) {
        f->have_bench = true;
        f->bench = h->r[newest];
        struct tm tm = {0};
        tm.tm_isdst = -1;
        if (strptime(f->bench.time, "%Y-%m-%d %H:%M:%S", &tm))
            f->bench_epoch = (double)mktime(&tm);
    }
    free(h);
    suprec_load(sd, time(NULL), &f->sup);
    buf_free(&p);
    buf_free(&b);
    load_copy(sd, f);
}
