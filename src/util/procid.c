/* procid: see procid.h. */
#include "procid.h"

#include "buf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A /proc file's text; -1 when unreadable or empty. */
static int read_small(const char *path, char *buf, size_t sz)
{
    return buf_read_small(path, buf, sz) == 0 && buf[0] ? 0 : -1;
}

int procid_boot(const char *proc_root, char *out, size_t sz)
{
    char path[512], b[64];
    if (sz)
        out[0] = '\0';
    snprintf(path, sizeof path, "%s/sys/kernel/random/boot_id", proc_root);
    if (read_small(path, b, sizeof b) < 0)
        return -1;
    size_t l = strcspn(b, "\n");
    if (l >= sz)
        return -1;
    memcpy(out, b, l);
    out[l] = '\0';
    return 0;
}

/* Field 22 of /proc/PID/stat, read after the command's closing parenthesis
 * (a command may hold blanks and parentheses itself). */
static unsigned long long start_of(long pid, const char *proc_root)
{
    char path[512], st[1024];
    snprintf(path, sizeof path, "%s/%ld/stat", proc_root, pid);
    if (read_small(path, st, sizeof st) < 0)
        return 0;
    const char *p = strrchr(st, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 2; field < 21 && p; field++) /* fields 3..21 skipped */
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

int procid_alive(long pid, const char *proc_root)
{
    char path[512], st[1024];
    snprintf(path, sizeof path, "%s/%ld/stat", proc_root, pid);
    if (pid <= 0 || read_small(path, st, sizeof st) < 0)
        return 0;
    const char *p = strrchr(st, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X' && p[2] != 'x';
}

int procid_of(long pid, const char *proc_root, struct procid *out)
{
    memset(out, 0, sizeof *out);
    out->pid = pid;
    out->start = start_of(pid, proc_root);
    if (procid_boot(proc_root, out->boot, sizeof out->boot) < 0)
        out->boot[0] = '\0';
    return out->start ? 0 : -1;
}

void procid_format(const struct procid *id, char *out, size_t sz)
{
    snprintf(out, sz, " start=%llu boot=%s", id->start, id->boot[0] ? id->boot : "-");
}

void procid_parse(const char *text, long pid, struct procid *out)
{
    memset(out, 0, sizeof *out);
    out->pid = pid;
    const char *p = strstr(text, " start=");
    if (p)
        out->start = strtoull(p + 7, NULL, 10);
    p = strstr(text, " boot=");
    if (p && sscanf(p + 6, "%39[0-9a-f-]", out->boot) != 1)
        out->boot[0] = '\0';
}

int procid_open(const struct procid *id, const char *proc_root, char *why, size_t whysz)
{
    char now[40] = "";
    if (id->pid <= 0) {
        snprintf(why, whysz, "no process named");
        return -1;
    }
    if (id->boot[0] && procid_boot(proc_root, now, sizeof now) == 0 && strcmp(now, id->boot) != 0) {
        snprintf(why, whysz, "PID %ld is from an earlier boot", id->pid);
        return -1;
    }
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)id->pid, 0);
    if (fd < 0) {
        if (errno == ESRCH)
            snprintf(why, whysz, "PID %ld is gone", id->pid);
        else
            snprintf(why, whysz, "PID %ld: pidfd_open: %s", id->pid, strerror(errno));
        return -1;
    }
    /* read after the pidfd is open: a match means the pidfd holds that very
     * process, not one that took the number between the two */
    unsigned long long start = start_of(id->pid, proc_root);
    if (id->start && start != id->start) {
        snprintf(why, whysz, "PID %ld now belongs to another process (started at tick %llu, not "
                 "%llu)", id->pid, start, id->start);
        close(fd);
        return -1;
    }
    return fd;
}
