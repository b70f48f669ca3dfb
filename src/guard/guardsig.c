/* The guard's signals beyond MemAvailable: PSI memory pressure, free blocks
 * of high order and the NVIDIA driver's kernel log lines. Read from
 * descriptors opened once, parsed by memsig without allocating, so that the
 * loop that reads them stays as cheap as the MemAvailable sample. */
#include "guard.h"
#include "fixstr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

#define WARN_KMSG_WINDOW_S 600.0

static int open_proc(const struct guard *g, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g->o.proc_root, name);
    return open(path, O_RDONLY | O_CLOEXEC);
}

void guardsig_open(struct guard *g)
{
    struct guard_sig *s = &g->sig;
    memset(s, 0, sizeof *s);
    s->frag = -1;
    s->buddy_order = memsig_buddy_order(sysconf(_SC_PAGESIZE));
    s->psi_fd = open_proc(g, "pressure/memory");
    if (s->psi_fd < 0)
        guard_log(g, "memory pressure (PSI): n/a: %s/pressure/memory: %s", g->o.proc_root,
                  strerror(errno));
    s->buddy_fd = open_proc(g, "buddyinfo");
    if (s->buddy_fd < 0)
        guard_log(g, "fragmentation: n/a: %s/buddyinfo: %s", g->o.proc_root, strerror(errno));
    const char *kp = g->o.kmsg_path[0] ? g->o.kmsg_path : "/dev/kmsg";
    s->kmsg_fd = open(kp, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (s->kmsg_fd < 0) {
        guard_log(g, "kernel log: n/a: %s: %s", kp, strerror(errno));
    } else if (lseek(s->kmsg_fd, 0, SEEK_END) < 0) {
        /* from the guard's start: what came before was another boot's or
         * another guard's to see */
        guard_log(g, "kernel log: n/a: cannot seek %s: %s", kp, strerror(errno));
        close(s->kmsg_fd);
        s->kmsg_fd = -1;
    }
}

bool guardsig_read_psi(struct guard *g)
{
    struct guard_sig *s = &g->sig;
    if (s->psi_fd < 0)
        return false;
    char buf[512];
    ssize_t n = pread(s->psi_fd, buf, sizeof buf, 0);
    if (n <= 0 || memsig_parse_psi(buf, (size_t)n, &s->psi) < 0)
        s->psi.full_ok = false;
    return s->psi.full_ok && g->o.psi_kill > 0 && s->psi.full_avg10 >= g->o.psi_kill;
}

static void read_buddy(struct guard *g)
{
    struct guard_sig *s = &g->sig;
    if (s->buddy_fd < 0)
        return;
    char buf[4096];
    ssize_t n = pread(s->buddy_fd, buf, sizeof buf, 0);
    s->frag = n > 0 ? memsig_parse_buddy(buf, (size_t)n, s->buddy_order) : -1;
}

static void kmsg_record(struct guard *g, const char *rec, size_t len, double now)
{
    struct guard_sig *s = &g->sig;
    unsigned long long seq;
    size_t off, ml;
    int k = memsig_parse_kmsg(rec, len, &seq, &off, &ml);
    if (k < 0 || (s->kmsg_any && seq <= s->kmsg_seq))
        return;
    s->kmsg_any = true;
    s->kmsg_seq = seq;
    if (k == 0)
        return;
    s->kmsg_lines++;
    s->kmsg_times[s->kmsg_next++ % GUARD_KMSG_RING] = now;
    char clean[300];
    text_clean(clean, sizeof clean, rec + off, ml); /* hostile bytes stay out of the log */
    guard_log(g, "kernel: %s", clean);
}

/* /dev/kmsg gives one record per read; a file (tests) gives many: both are
 * split on newlines, and a file's partial last record is read again. */
static void read_kmsg(struct guard *g, double now)
{
    struct guard_sig *s = &g->sig;
    for (int rounds = 0; s->kmsg_fd >= 0 && rounds < 64; rounds++) {
        char buf[8192];
        ssize_t n = read(s->kmsg_fd, buf, sizeof buf);
        if (n < 0 && errno == EPIPE)
            continue; /* records were overwritten before we read them: go on */
        if (n <= 0)
            return; /* EAGAIN: nothing new */
        size_t i = 0;
        while (i < (size_t)n) {
            size_t e = i;
            /* a record ends at a newline not followed by a continuation blank */
            while (e < (size_t)n && !(buf[e] == '\n' && (e + 1 == (size_t)n || buf[e + 1] != ' ')))
                e++;
            if (e == (size_t)n) {
                if (i > 0 && lseek(s->kmsg_fd, -(off_t)(e - i), SEEK_CUR) >= 0)
                    return;
                kmsg_record(g, buf + i, e - i, now); /* whole (a record) or too long */
                break;
            }
            kmsg_record(g, buf + i, e - i, now);
            i = e + 1;
        }
    }
}

static unsigned kmsg_recent(const struct guard_sig *s, double now)
{
    unsigned n = 0;
    unsigned have = s->kmsg_next < GUARD_KMSG_RING ? s->kmsg_next : GUARD_KMSG_RING;
    for (unsigned i = 0; i < have; i++)
        n += now - s->kmsg_times[i] <= WARN_KMSG_WINDOW_S;
    return n;
}

static void say_change(struct guard *g, unsigned bit, bool on, long avail, double now)
{
    const struct guard_sig *s = &g->sig;
    const char *w = on ? "warning" : "cleared";
    switch (bit) {
    case GUARD_WARN_MEM:
        guard_log(g, "%s: MemAvailable %ld MiB %s the warning level %ld MiB", w, avail / 1024,
                  on ? "below" : "back above", g->o.warn_kib / 1024);
        break;
    case GUARD_WARN_PSI:
        guard_log(g, "%s: memory pressure (PSI full avg10) %.1f%% %s %d%%", w, s->psi.full_avg10,
                  on ? "at or above" : "back under", g->o.psi_warn);
        break;
    case GUARD_WARN_FRAG:
        guard_log(g, "%s: %ld free blocks of 4 MiB or more (order >= %d) %s %ld: fragmented", w,
                  s->frag, s->buddy_order, on ? "under" : "back at", g->o.frag_warn);
        break;
    case GUARD_WARN_KMSG:
        guard_log(g, "%s: %lu NVRM line(s) in the kernel log in the last 10 minutes", w,
                  (unsigned long)kmsg_recent(s, now));
        break;
    }
}

void guardsig_read_rest(struct guard *g, double now, long avail)
{
    struct guard_sig *s = &g->sig;
    if (now - s->last_slow_s >= 1.0 || s->last_slow_s == 0) {
        s->last_slow_s = now;
        read_buddy(g);
    }
    read_kmsg(g, now);
    unsigned w = 0;
    if (g->o.warn_kib > 0 && avail < g->o.warn_kib)
        w |= GUARD_WARN_MEM;
    if (s->psi.full_ok && g->o.psi_warn > 0 && s->psi.full_avg10 >= g->o.psi_warn)
        w |= GUARD_WARN_PSI;
    if (s->frag >= 0 && g->o.frag_warn > 0 && s->frag < g->o.frag_warn)
        w |= GUARD_WARN_FRAG;
    if (g->o.kmsg_warn > 0 && kmsg_recent(s, now) >= (unsigned)g->o.kmsg_warn)
        w |= GUARD_WARN_KMSG;
    for (unsigned bit = 1; bit <= GUARD_WARN_KMSG; bit <<= 1)
        if ((w ^ s->warn) & bit)
            say_change(g, bit, (w & bit) != 0, avail, now);
    s->warn = w;
}

void guardsig_format(const struct guard *g, char *out, size_t sz)
{
    const struct guard_sig *s = &g->sig;
    char psi[16] = "n/a", frag[24] = "n/a", kmsg[24] = "n/a", warn[32] = "";
    if (s->psi.full_ok)
        snprintf(psi, sizeof psi, "%.1f", s->psi.full_avg10);
    if (s->frag >= 0)
        snprintf(frag, sizeof frag, "%ld", s->frag);
    if (s->kmsg_fd >= 0)
        snprintf(kmsg, sizeof kmsg, "%lu", s->kmsg_lines);
    static const char *const names[] = {"mem", "psi", "frag", "kmsg"};
    size_t wl = 0;
    for (unsigned i = 0; i < 4; i++)
        if (s->warn & (1u << i))
            fixstr_appendf_whole(warn, sizeof warn, &wl, "%s%s", wl ? "," : "", names[i]);
    snprintf(out, sz, " psi=%s frag=%s kmsg=%s warn=%s", psi, frag, kmsg, wl ? warn : "-");
}

void guardsig_close(struct guard *g)
{
    int *fds[] = {&g->sig.psi_fd, &g->sig.buddy_fd, &g->sig.kmsg_fd};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
}
