#include "alike.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "buf.h"
#include "engine.h"
#include "engine_image.h"
#include "mono.h"
#include "nvml.h"
#include "runtime.h"
#include "shcmd.h"
#include "text.h"

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

/* ---- on the local node, without a process ---- */

/* alike on the local node without a process: what ALIKE_SH (alike.c)
 * prints, found in this process - uname(2), the driver's sysfs file (or
 * NVML), the image and the rank through the engine's API socket, the rank's
 * memory map read here and its NCCL hashed here with OpenSSL - and written
 * as the script's lines, so alike_parse cleans and cuts both alike. */

#define ALIKE_SHA_S 30.0 /* the script's `timeout 30 sha256sum` */

bool alike_maps_nccl(const char *maps, size_t len, char *path, size_t sz)
{
    path[0] = '\0';
    const char *end = maps + len;
    for (const char *l = maps; l < end;) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        const char *le = nl ? nl : end;
        /* grep -o '/[^ ]*libnccl[^ ]*': the leftmost '/' whose run of
         * non-blanks holds "libnccl", to the run's end */
        for (const char *p = l; p < le; p++) {
            if (*p != '/')
                continue;
            const char *q = p;
            while (q < le && *q != ' ')
                q++;
            for (const char *k = p; k + 7 <= q; k++)
                if (memcmp(k, "libnccl", 7) == 0) {
                    size_t n = (size_t)(q - p);
                    if (n >= sz)
                        n = sz - 1;
                    memcpy(path, p, n);
                    path[n] = '\0';
                    return true;
                }
            p = q; /* a later '/' in this run has a subset of it */
        }
        l = le + (nl != NULL);
    }
    return false;
}

/* The driver as the script decides it: the module's version file, else
 * NVML where nvidia-smi would have asked it (nvidia-smi is NVML's front
 * end: without the library it cannot say either). */
static void driver_line(struct buf *t)
{
    char v[128] = "";
    struct buf b = BUF_INIT;
    if (buf_read_file(&b, "/sys/module/nvidia/version", 4096) == 0) {
        size_t n = b.len;
        while (n && buf_str(&b)[n - 1] == '\n')
            n--;
        snprintf(v, sizeof v, "%.*s", (int)(n < sizeof v - 1 ? n : sizeof v - 1), buf_str(&b));
    }
    buf_free(&b);
    if (!v[0]) {
        struct buf why = BUF_INIT;
        if (nvml_driver_version(v, sizeof v, &why) < 0)
            v[0] = '\0';
        buf_free(&why);
    }
    bool ok = v[0] && v[0] != '.' && strspn(v, "0123456789.") == strlen(v);
    if (ok)
        buf_printf(t, "driver %s\n", v);
    else
        buf_puts(t, "driver - no NVIDIA driver version\n");
}

/* sha256 of path in hex, reading for at most ALIKE_SHA_S; -1 when it
 * cannot be read whole in time. */
static int sha256_hex(const char *path, char hex[65])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? 0 : -1;
    enum { CHUNK = 1 << 16 };
    char *chunk = malloc(CHUNK); /* status asks every node at once, from threads */
    if (!chunk)
        rc = -1;
    double until = mono_s() + ALIKE_SHA_S;
    while (rc == 0) {
        ssize_t r = read(fd, chunk, CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || mono_s() > until)
            rc = -1;
        else if (r == 0)
            break;
        else if (EVP_DigestUpdate(ctx, chunk, (size_t)r) != 1)
            rc = -1;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (rc == 0 && (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32))
        rc = -1;
    for (unsigned i = 0; rc == 0 && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    EVP_MD_CTX_free(ctx);
    free(chunk);
    close(fd);
    return rc;
}

/* The script's nccl line for the rank's pid. */
static void nccl_line(struct buf *t, long pid)
{
    char f[64];
    snprintf(f, sizeof f, "/proc/%ld/maps", pid);
    struct buf maps = BUF_INIT;
    /* a running vLLM's map is well under a MiB; the cut keeps the head */
    if (pid <= 0) {
        buf_puts(t, "nccl - the rank is not running\n");
    } else if (buf_read_file(&maps, f, 64u << 20) < 0) {
        buf_puts(t, "nccl - cannot read the rank's memory map (ssh as root)\n");
    } else {
        char p[1024], in[1100], hex[65];
        struct stat ls, st;
        if (!alike_maps_nccl(maps.data, maps.len, p, sizeof p)) {
            buf_puts(t, "nccl - the rank has loaded no NCCL yet\n");
        } else if (snprintf(in, sizeof in, "/proc/%ld/root%s", pid, p) >= (int)sizeof in ||
                   lstat(in, &ls) < 0 || S_ISLNK(ls.st_mode) || stat(in, &st) < 0 ||
                   !S_ISREG(st.st_mode)) {
            buf_printf(t, "nccl - %s is not a plain file\n", p);
        } else if (sha256_hex(in, hex) < 0) {
            buf_printf(t, "nccl - cannot read %s\n", p);
        } else {
            buf_printf(t, "nccl %s %s\n", p, hex);
        }
    }
    buf_free(&maps);
}

int alike_collect_local(const struct config *c, struct cluster_node *cn, struct alike_print *p)
{
    memset(p, 0, sizeof *p);
    const char *sock = cn->node.engine_sock;
    if (!cn->node.local || !sock[0])
        return -1;
    const char *rt = config_str(c, CFG_RUNTIME);
    struct engine_image img;
    struct buf err = BUF_INIT;
    int irc = engine_image_inspect(sock, config_str(c, CFG_IMG), runtime_ids_bare(rt), 10000,
                                   &img, &err);
    char name[32];
    snprintf(name, sizeof name, "dsv41-r%d", cn->rank);
    struct container_info ct;
    int crc = irc == -1 ? -1 : engine_inspect(sock, name, 10000, &ct, &err);
    buf_free(&err);
    if (irc == -1 || crc == -1)
        return -1; /* the socket did not answer: the script says it all */
    struct buf t = BUF_INIT;
    struct utsname u;
    if (uname(&u) == 0)
        buf_printf(&t, "kernel %s\n", u.release);
    driver_line(&t);
    if (irc == 0 && img.id[0])
        buf_printf(&t, "image %s\n", img.id);
    else
        buf_puts(&t, "image - not on this node\n");
    if (irc == 0 && img.cuda[0])
        buf_printf(&t, "cuda %s\n", img.cuda);
    else
        buf_puts(&t, "cuda - the image sets no CUDA_VERSION\n");
    /* the script asks for .State.Pid: 0 for a container that is not running */
    nccl_line(&t, crc == 0 ? ct.pid : 0);
    alike_parse(buf_str(&t), p);
    buf_free(&t);
    return 0;
}
