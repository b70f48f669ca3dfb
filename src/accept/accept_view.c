/* accept_view: the image ids of the rank containers named by the images an
 * acceptance measured, the accepted one marked, and the last verdict, for
 * the console (accept.h). */
#include "accept.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

static const char *bare(const char *id)
{
    return strncmp(id, "sha256:", 7) == 0 ? id + 7 : id;
}

int accept_note_image(const char *accept_dir, const char *image_id, const char *ref)
{
    struct buf p = BUF_INIT, line = BUF_INIT;
    buf_printf(&p, "%s/images.tsv", accept_dir);
    buf_printf(&line, "%s\t%s\n", bare(image_id), ref);
    int fd = open(buf_str(&p), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int rc = fd >= 0 && write(fd, line.data, line.len) == (ssize_t)line.len ? 0 : -1;
    if (fd >= 0)
        close(fd);
    buf_free(&p);
    buf_free(&line);
    return rc;
}

static void load_images(const char *accept_dir, struct accept_view *v)
{
    struct buf p = BUF_INIT;
    buf_printf(&p, "%s/images.tsv", accept_dir);
    FILE *f = fopen(buf_str(&p), "r");
    buf_free(&p);
    if (!f)
        return;
    char line[600];
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        tab[1 + strcspn(tab + 1, "\n")] = '\0';
        if (v->nimg == 32) { /* the newest win */
            memmove(&v->img[0], &v->img[1], sizeof v->img[0] * 31);
            v->nimg--;
        }
        text_copy_field(v->img[v->nimg].id, sizeof v->img[v->nimg].id, line, strlen(line));
        text_copy_field(v->img[v->nimg].ref, sizeof v->img[v->nimg].ref, tab + 1,
                        strlen(tab + 1));
        v->nimg++;
    }
    fclose(f);
}

static void load_last(const char *accept_dir, struct accept_view *v)
{
    DIR *d = opendir(accept_dir);
    if (!d)
        return;
    char newest[256] = "";
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && strcmp(e->d_name, newest) > 0)
            snprintf(newest, sizeof newest, "%s", e->d_name);
    closedir(d);
    if (!newest[0])
        return;
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/%s/report.json", accept_dir, newest);
    cJSON *j = buf_read_file(&b, buf_str(&p), 1 << 24) == 0 ? cJSON_Parse(buf_str(&b)) : NULL;
    cJSON *verdict = cJSON_GetObjectItemCaseSensitive(j, "verdict");
    cJSON *done = cJSON_GetObjectItemCaseSensitive(j, "done");
    char vv[40], dd[120];
    text_copy_field(vv, sizeof vv, cJSON_IsString(verdict) ? verdict->valuestring : "running?",
                    cJSON_IsString(verdict) ? strlen(verdict->valuestring) : 8);
    text_copy_field(dd, sizeof dd, cJSON_IsString(done) ? done->valuestring : "no report yet",
                    cJSON_IsString(done) ? strlen(done->valuestring) : 13);
    /* the run's folder is TIME-DIGEST12: its time, shown as mm-dd HH:MM */
    snprintf(v->last, sizeof v->last, "%s, %s %.2s-%.2s %.2s:%.2s", vv, dd, newest + 4,
             newest + 6, newest + 9, newest + 11);
    cJSON_Delete(j);
    buf_free(&p);
    buf_free(&b);
}

void accept_view_load(const char *accept_dir, struct accept_view *v)
{
    memset(v, 0, sizeof *v);
    struct buf p = BUF_INIT, b = BUF_INIT;
    buf_printf(&p, "%s/accepted", accept_dir);
    if (buf_read_file(&b, buf_str(&p), 4096) == 0)
        text_copy_field(v->accepted, sizeof v->accepted, buf_str(&b), strcspn(buf_str(&b), "\n"));
    buf_free(&p);
    buf_free(&b);
    load_images(accept_dir, v);
    load_last(accept_dir, v);
}

void accept_view_name(const struct accept_view *v, const char *image_id, char *out, size_t sz,
                      bool *accepted)
{
    out[0] = '\0';
    *accepted = false;
    const char *id = bare(image_id);
    if (!*id)
        return;
    for (int i = v->nimg - 1; i >= 0; i--)
        if (strcmp(v->img[i].id, id) == 0) {
            const char *at = strstr(v->img[i].ref, "@sha256:");
            if (at)
                snprintf(out, sz, "sha256:%.12s", at + 8);
            else
                snprintf(out, sz, "%.60s", v->img[i].ref);
            *accepted = v->accepted[0] && strcmp(v->img[i].ref, v->accepted) == 0;
            return;
        }
}
