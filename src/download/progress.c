/* progress: see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "mono.h"

void progress_bytes(char *out, size_t n, double bytes)
{
    static const char *unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000 && u < 5) {
        bytes /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(out, n, "%.0f B", bytes);
    else
        snprintf(out, n, bytes < 10 ? "%.2f %s" : "%.1f %s", bytes, unit[u]);
}

void progress_duration(char *out, size_t n, double s)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t < 60)
        snprintf(out, n, "%lds", t);
    else if (t < 3600)
        snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, n, "%ldh%02ldm", t / 3600, t % 3600 / 60);
}

void progress_format(struct buf *out, int64_t done, int64_t total, double elapsed_s,
                     int bar_width)
{
    double frac = total > 0 ? (double)done / (double)total : 0;
    if (frac > 1)
        frac = 1;
    if (bar_width > 0) {
        int fill = (int)(frac * bar_width);
        buf_puts(out, "[");
        for (int i = 0; i < bar_width; i++)
            buf_puts(out, i < fill ? "#" : ".");
        buf_puts(out, "] ");
    }
    char d[32], t[32];
    progress_bytes(d, sizeof d, (double)done);
    progress_bytes(t, sizeof t, (double)total);
    buf_printf(out, "%s of %s  %.1f %%", d, t, frac * 100);
    /* a rate over less than half a second is noise */
    if (elapsed_s >= 0.5 && done > 0) {
        double rate = (double)done / elapsed_s;
        char r[32], left[32];
        progress_bytes(r, sizeof r, rate);
        buf_printf(out, "  %s/s", r);
        if (total > done) {
            progress_duration(left, sizeof left, (double)(total - done) / rate);
            buf_printf(out, "  %s left", left);
        }
    }
}

void progress_out_init(struct progress_out *o, double every_s, FILE *lines)
{
    *o = (struct progress_out){.tty = isatty(STDERR_FILENO), .every_s = every_s,
                               .last = mono_s(), .lines = lines};
}

bool progress_out_due(const struct progress_out *o)
{
    return o->tty || (o->every_s > 0 && mono_s() - o->last >= o->every_s);
}

void progress_out_show(struct progress_out *o, const char *text)
{
    if (!progress_out_due(o))
        return;
    if (o->tty) {
        fprintf(stderr, "\r\033[K%s", text);
        fflush(stderr);
        o->shown = true;
    } else {
        fprintf(o->lines, "%s\n", text);
        o->last = mono_s();
    }
}

void progress_out_clear(struct progress_out *o)
{
    if (o->shown) {
        fputs("\r\033[K", stderr);
        o->shown = false;
    }
}
