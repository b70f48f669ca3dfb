/* peer: see peer.h. */
#include "peer.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shcmd.h"

bool peer_parse_progress(const char *line, struct peer_progress *p)
{
    const char *s = line;
    while (*s == ' ')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    int64_t bytes = 0;
    int digits = 0;
    for (; isdigit((unsigned char)*s) || *s == ','; s++)
        if (*s != ',') {
            if (++digits > 18)
                return false;
            bytes = bytes * 10 + (*s - '0');
        }
    int pct;
    char rate[24], eta[16];
    int used = 0;
    /* "  97%  123.45MB/s    0:00:08" then anything ("(xfr#3, ...)") */
    if (sscanf(s, " %d%% %23s %15s%n", &pct, rate, eta, &used) != 3 || pct < 0 || pct > 100)
        return false;
    if (!strstr(rate, "/s") || !strchr(eta, ':'))
        return false;
    p->bytes = bytes;
    p->pct = pct;
    snprintf(p->rate, sizeof p->rate, "%s", rate);
    snprintf(p->eta, sizeof p->eta, "%s", eta);
    return true;
}

void peer_rsync_argv(const struct config *c, const char *src_dir, const char *target,
                     const char *also_known_hosts, const char *dst_dir, bool dry_run,
                     struct strv *argv)
{
    struct buf ssh = BUF_INIT;
    buf_puts(&ssh, "ssh -o BatchMode=yes -o StrictHostKeyChecking=yes");
    const char *cfg = config_str(c, CFG_SSH_CONFIG);
    if (cfg && *cfg && access(cfg, R_OK) == 0) {
        buf_puts(&ssh, " -F ");
        shcmd_quote_rsync(&ssh, cfg);
    }
    const char *kh = config_str(c, CFG_SSH_KNOWN_HOSTS);
    if (kh && *kh) {
        /* OpenSSH splits this value on blanks itself: each file in quotes;
         * the ssh config's own file for the host stays in the list, as we
         * read it too */
        struct buf opt = BUF_INIT;
        buf_puts(&opt, "UserKnownHostsFile=");
        shcmd_quote_openssh(&opt, kh);
        if (also_known_hosts && *also_known_hosts && strcmp(also_known_hosts, kh) != 0) {
            buf_puts(&opt, " ");
            shcmd_quote_openssh(&opt, also_known_hosts);
        }
        buf_puts(&ssh, " -o ");
        shcmd_quote_rsync(&ssh, buf_str(&opt));
        buf_free(&opt);
    }
    const char *to = config_str(c, CFG_SSH_TIMEOUT);
    if (to && atoi(to) > 0)
        buf_printf(&ssh, " -o ConnectTimeout=%d", atoi(to));
    strv_add(argv, "rsync");
    /* -a: times and modes too, so a second run skips what is there;
     * -s: names reach the far side as they are, never through its shell;
     * --partial: a killed copy resumes from what arrived;
     * --no-inc-recursive: the percentage is of the whole copy from the start */
    strv_add(argv, "-a");
    strv_add(argv, "-s");
    strv_add(argv, "--partial");
    strv_add(argv, "--no-inc-recursive");
    strv_add(argv, "--info=progress2");
    strv_add(argv, "--out-format=+ %n"); /* a line per file sent */
    strv_add(argv, "--exclude=*.safetensors.part[0-9]*");
    strv_add(argv, "--exclude=/.cache/");
    if (dry_run)
        strv_add(argv, "--dry-run");
    strv_add(argv, "-e");
    strv_add(argv, buf_str(&ssh));
    strv_add(argv, "--"); /* operands, whatever their first byte */
    strv_addf(argv, "%s/", src_dir);
    strv_addf(argv, "%s:%s/", target, dst_dir);
    buf_free(&ssh);
}
