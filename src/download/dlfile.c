/* dlfile: where a download's bytes go - each output's path (NAME or
 * NAME.incomplete inside the directory), its directories made without
 * following a symlink out of it, the file opened and sized. Part of the
 * download's run (dlrun.h). */
#include "dlrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void dlrun_output_path(const struct dl_run *d, const struct out_rt *r, bool incomplete,
                       struct buf *b)
{
    buf_reset(b);
    buf_printf(b, "%s/%s%s", d->o->dir, r->o->path, incomplete ? ".incomplete" : "");
}

/* mkdir -p of the output's directories inside dir; one that exists must be
 * a directory, not a symlink that would take the files elsewhere */
static int make_parents(const char *dir, const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        struct stat st;
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            return -1;
        if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        *s = '/';
    }
    return 0;
}

/* Opens (or makes) NAME.incomplete at its full size: preallocated, so a full
 * disk says so now and not 300 GB later. */
int dlrun_open_output(struct dl_run *d, struct out_rt *r, struct buf *err)
{
    struct buf path = BUF_INIT;
    dlrun_output_path(d, r, !r->final_name, &path);
    int rc = -1;
    if (make_parents(d->o->dir, r->o->path) < 0) {
        buf_printf(err, "cannot make the directories of %s: %s", buf_str(&path), strerror(errno));
        goto out;
    }
    r->fd = open(buf_str(&path), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (r->fd < 0) {
        buf_printf(err, "cannot open %s: %s", buf_str(&path), strerror(errno));
        goto out;
    }
    if (!r->final_name && r->o->size > 0 && fallocate(r->fd, 0, 0, r->o->size) < 0) {
        if (errno == ENOSPC) {
            d->fatal = ENOSPC;
            buf_printf(err, "no space left for %s (%lld bytes) in %s: free space and run "
                            "download again to resume",
                       r->o->path, (long long)r->o->size, d->o->dir);
            goto out;
        }
        if (ftruncate(r->fd, r->o->size) < 0) { /* no fallocate here: at least its size */
            buf_printf(err, "cannot size %s: %s", buf_str(&path), strerror(errno));
            goto out;
        }
    }
    rc = 0;
out:
    buf_free(&path);
    return rc;
}
