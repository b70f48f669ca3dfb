#include "alike.h"

#include <stdio.h>
#include <string.h>

#include "text.h"
#include "shcmd.h"

static const char *const FIELD[ALIKE_FIELDS] = {"kernel", "driver", "image", "cuda", "nccl"};
static const char *const NAME[ALIKE_FIELDS] = {"kernel", "NVIDIA driver", "image id",
                                               "CUDA in the image", "NCCL library (sha256)"};

const char *alike_field_name(int i)
{
    return i >= 0 && i < ALIKE_FIELDS ? NAME[i] : "?";
}

/* Lines "FIELD VALUE" or "FIELD - WHY" (n/a); "nccl PATH SHA" for NCCL. */
void alike_parse(const char *text, struct alike_print *p)
{
    memset(p, 0, sizeof *p);
    p->asked = true;
    for (const char *l = text; *l;) {
        size_t n = strcspn(l, "\n");
        char line[512];
        text_clean(line, sizeof line, l, n); /* remote text: no controls, no bidi */
        l += n + (l[n] == '\n');
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp++ = '\0';
        for (int i = 0; i < ALIKE_FIELDS; i++) {
            if (strcmp(line, FIELD[i]) != 0)
                continue;
            if (sp[0] == '-' && sp[1] == ' ') {
                snprintf(p->note[i], sizeof p->note[i], "%s", sp + 2);
            } else if (i == 4) {
                char *sha = strrchr(sp, ' ');
                if (sha && strlen(sha + 1) == 64) {
                    *sha = '\0';
                    snprintf(p->nccl_path, sizeof p->nccl_path, "%s", sp);
                    snprintf(p->value[i], sizeof p->value[i], "%s", sha + 1);
                } else {
                    snprintf(p->note[i], sizeof p->note[i], "unreadable answer");
                }
            } else if (sp[0]) {
                snprintf(p->value[i], sizeof p->value[i], "%s", sp);
            }
        }
    }
}

/* Prints one line per field; an unknown one as "FIELD - why". $1 runtime,
 * $2 image, $3 the rank's container. */
#define ALIKE_SH                                                                                   \
    "echo \"kernel $(uname -r)\"\n" \
    "v=$(cat /sys/module/nvidia/version 2>/dev/null)\n" \
    "[ -n \"$v\" ] || v=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null" \
    " | head -n 1)\n" \
    "case $v in *[!0-9.]* | '' | .*) echo 'driver - no NVIDIA driver version';; " \
    "*) echo \"driver $v\";; esac\n" \
    "id=$(\"$1\" image inspect -f '{{.Id}}' -- \"$2\" 2>/dev/null) && echo \"image $id\" || " \
    "echo 'image - not on this node'\n" \
    "c=$(\"$1\" image inspect -f '{{range .Config.Env}}{{println .}}{{end}}' -- \"$2\" " \
    "2>/dev/null | sed -n 's/^CUDA_VERSION=//p' | head -n 1)\n" \
    "[ -n \"$c\" ] && echo \"cuda $c\" || echo 'cuda - the image sets no CUDA_VERSION'\n" \
    "pid=$(\"$1\" container inspect -f '{{.State.Pid}}' -- \"$3\" 2>/dev/null)\n" \
    "if [ -z \"$pid\" ] || [ \"$pid\" = 0 ]; then echo 'nccl - the rank is not running'\n" \
    "elif ! head -c 1 /proc/$pid/maps >/dev/null 2>&1; then echo 'nccl - cannot read the " \
    "rank'\\''s memory map (ssh as root)'\n" \
    "else p=$(grep -o '/[^ ]*libnccl[^ ]*' /proc/$pid/maps 2>/dev/null | head -n 1)\n" \
    "  if [ -z \"$p\" ]; then echo 'nccl - the rank has loaded no NCCL yet'\n" \
    "  elif [ ! -f \"/proc/$pid/root$p\" ] || [ -L \"/proc/$pid/root$p\" ]; then " \
    "echo \"nccl - $p is not a plain file\"\n" \
    "  else s=$(timeout 30 sha256sum < \"/proc/$pid/root$p\" 2>/dev/null | cut -d' ' -f1)\n" \
    "    [ -n \"$s\" ] && echo \"nccl $p $s\" || echo \"nccl - cannot read $p\"; fi; fi\n"

int alike_collect(const struct config *c, struct cluster_node *cn, struct alike_print *p)
{
    if (cn->node.local && alike_collect_local(c, cn, p) == 0)
        return 0;
    memset(p, 0, sizeof *p);
    struct shcmd cmd = SHCMD_INIT;
    shcmd_script(&cmd, ALIKE_SH);
    shcmd_arg(&cmd, config_str(c, CFG_RUNTIME));
    shcmd_arg(&cmd, config_str(c, CFG_IMG));
    shcmd_argf(&cmd, "dsv41-r%d", cn->rank);
    struct ssh_result res;
    struct buf err = BUF_INIT;
    int rc = node_run(&cn->node, &cmd, 60000, &res, &err);
    if (rc == 0) {
        alike_parse(buf_str(&res.out), p);
        ssh_result_free(&res);
    } else {
        snprintf(p->error, sizeof p->error, "%s", buf_str(&err));
    }
    shcmd_free(&cmd);
    buf_free(&err);
    return rc;
}

int alike_compare(const struct alike_print *p, const char *const *names, int n, char (*warn)[320],
                  int max)
{
    int w = 0;
    for (int f = 0; f < ALIKE_FIELDS && w < max; f++) {
        int first = -1;
        bool differ = false;
        for (int i = 0; i < n; i++) {
            if (!p[i].asked || !p[i].value[f][0])
                continue;
            if (first < 0)
                first = i;
            else if (strcmp(p[i].value[f], p[first].value[f]) != 0)
                differ = true;
        }
        if (!differ)
            continue;
        size_t len = (size_t)snprintf(warn[w], 320, "the nodes differ in the %s:", NAME[f]);
        for (int i = 0; i < n && len < 320; i++)
            if (p[i].asked && p[i].value[f][0])
                len += (size_t)snprintf(warn[w] + len, 320 - len, "%s %s %.*s", i == first ? "" : ",",
                                        names[i], f == 2 || f == 4 ? 19 : 60, p[i].value[f]);
        if (f == 4 && len < 320)
            snprintf(warn[w] + len, 320 - len, " (NCCL builds must match: hangs after 20-55 min)");
        w++;
    }
    return w;
}
