#include "rdma.h"
#include "fixstr.h"
#include "text.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct rdma_port *port_get(struct rdma_port *ports, int *n, int max, const char *dev,
                                  size_t devlen, int portno)
{
    for (int i = 0; i < *n; i++)
        if (ports[i].port == portno && strlen(ports[i].dev) == devlen &&
            memcmp(ports[i].dev, dev, devlen) == 0)
            return &ports[i];
    if (*n == max || devlen >= sizeof ports[0].dev)
        return NULL;
    struct rdma_port *p = &ports[(*n)++];
    memset(p, 0, sizeof *p);
    text_copy_field(p->dev, sizeof p->dev, dev, devlen);
    p->port = portno;
    p->state_num = -1;
    p->gid_index = -1;
    return p;
}

static struct rdma_gid *gid_get(struct rdma_port *p, int index)
{
    for (int i = 0; i < p->ngids; i++)
        if (p->gids[i].index == index)
            return &p->gids[i];
    if (p->ngids == RDMA_MAX_GIDS)
        return NULL;
    struct rdma_gid *g = &p->gids[p->ngids++];
    memset(g, 0, sizeof *g);
    g->index = index;
    return g;
}

static bool parse_int(const char *s, size_t len, int *out)
{
    if (!len || len > 9)
        return false;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

struct sysfs_ctx {
    struct rdma_port *ports;
    int max, n;
    /* netdevs seen before their port: "DEV/device/net/NETDEV" */
    char netdev_dev[RDMA_MAX_PORTS][48];
    char netdev_name[RDMA_MAX_PORTS][32];
    int nnetdev;
};

static void set_field(char *dst, size_t sz, const char *v, size_t vl)
{
    text_copy_field(dst, sz, v, vl);
}

/* port_xmit_data and port_rcv_data count units of 4 octets. */
static struct pval counter_octets(const char *val, size_t vl)
{
    char tmp[32];
    text_copy_field(tmp, sizeof tmp, val, vl);
    struct pval v = probe_parse_smi_number(tmp);
    v.v *= 4;
    return v;
}

static bool is_error_counter(const char *attr, size_t al)
{
    static const char *const names[] = {RDMA_ERROR_COUNTERS};
    const char *slash = memchr(attr, '/', al);
    if (!slash)
        return false;
    size_t nl = al - (size_t)(slash + 1 - attr);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == nl && memcmp(slash + 1, names[i], nl) == 0)
            return true;
    return false;
}

static int sysfs_line(const char *line, size_t len, void *vctx)
{
    struct sysfs_ctx *ctx = vctx;
    const char *colon = memchr(line, ':', len);
    const char *slash = memchr(line, '/', len);
    if (!slash || (colon && colon < slash))
        return 0;
    size_t devlen = (size_t)(slash - line);
    if (!colon) {
        /* DEV/device/net/NETDEV */
        static const char mid[] = "/device/net/";
        size_t ml = sizeof mid - 1;
        if (len > devlen + ml && memcmp(slash, mid, ml) == 0 &&
            ctx->nnetdev < RDMA_MAX_PORTS && devlen < 48) {
            const char *nd = slash + ml;
            size_t ndl = len - devlen - ml;
            if (ndl && ndl < 32 && !memchr(nd, '/', ndl) && !memchr(nd, '*', ndl)) {
                text_copy_field(ctx->netdev_dev[ctx->nnetdev], 48, line, devlen);
                text_copy_field(ctx->netdev_name[ctx->nnetdev], 32, nd, ndl);
                ctx->nnetdev++;
            }
        }
        return 0;
    }
    const char *path = slash + 1;
    size_t pathlen = (size_t)(colon - path);
    const char *val = colon + 1;
    size_t vl = len - (size_t)(val - line);
    if (pathlen < 8 || memcmp(path, "ports/", 6) != 0)
        return 0;
    const char *pn = path + 6;
    const char *ps = memchr(pn, '/', (size_t)(colon - pn));
    int portno;
    if (!ps || !parse_int(pn, (size_t)(ps - pn), &portno))
        return 0;
    const char *attr = ps + 1;
    size_t al = (size_t)(colon - attr);
    struct rdma_port *p = port_get(ctx->ports, &ctx->n, ctx->max, line, devlen, portno);
    if (!p)
        return 0;
#define IS(s) (al == sizeof(s) - 1 && memcmp(attr, s, al) == 0)
#define HAS(s) (al > sizeof(s) - 1 && memcmp(attr, s, sizeof(s) - 1) == 0)
    int idx;
    if (IS("state")) {
        set_field(p->state, sizeof p->state, val, vl);
        /* "4: ACTIVE" */
        const char *c = memchr(val, ':', vl);
        if (!c || !parse_int(val, (size_t)(c - val), &p->state_num))
            p->state_num = -1;
    } else if (IS("phys_state")) {
        set_field(p->phys_state, sizeof p->phys_state, val, vl);
    } else if (IS("link_layer")) {
        set_field(p->link_layer, sizeof p->link_layer, val, vl);
    } else if (IS("rate")) {
        set_field(p->rate, sizeof p->rate, val, vl);
    } else if (IS("counters/port_xmit_data")) {
        p->xmit_bytes = counter_octets(val, vl);
    } else if (IS("counters/port_rcv_data")) {
        p->rcv_bytes = counter_octets(val, vl);
    } else if ((HAS("counters/") || HAS("hw_counters/")) && is_error_counter(attr, al)) {
        struct pval v = counter_octets(val, vl);
        if (v.ok) {
            p->errors.v = (p->errors.ok ? p->errors.v : 0) + v.v / 4;
            p->errors.ok = true;
        }
    } else if (HAS("gids/") && parse_int(attr + 5, al - 5, &idx)) {
        struct rdma_gid *g = gid_get(p, idx);
        if (g)
            set_field(g->gid, sizeof g->gid, val, vl);
    } else if (HAS("gid_attrs/types/") && parse_int(attr + 16, al - 16, &idx)) {
        struct rdma_gid *g = gid_get(p, idx);
        if (g)
            set_field(g->type, sizeof g->type, val, vl);
    } else if (HAS("gid_attrs/ndevs/") && parse_int(attr + 16, al - 16, &idx)) {
        struct rdma_gid *g = gid_get(p, idx);
        if (g)
            set_field(g->ndev, sizeof g->ndev, val, vl);
    }
#undef IS
#undef HAS
    return 0;
}

static int port_cmp(const void *a, const void *b)
{
    const struct rdma_port *x = a, *y = b;
    int c = strcmp(x->dev, y->dev);
    return c ? c : x->port - y->port;
}

int rdma_parse_sysfs(const char *text, struct rdma_port *ports, int max)
{
    struct sysfs_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return -1;
    ctx->ports = ports;
    ctx->max = max;
    probe_for_each_line(text, sysfs_line, ctx);
    for (int i = 0; i < ctx->n; i++)
        for (int j = 0; j < ctx->nnetdev; j++)
            if (!ports[i].netdev[0] && strcmp(ports[i].dev, ctx->netdev_dev[j]) == 0)
                snprintf(ports[i].netdev, sizeof ports[i].netdev, "%s", ctx->netdev_name[j]);
    int n = ctx->n;
    free(ctx);
    qsort(ports, (size_t)n, sizeof *ports, port_cmp);
    return n;
}

struct ip_ctx {
    struct rdma_ifaddr *a;
    int max, n;
};

static int ipv4_line(const char *line, size_t len, void *vctx)
{
    struct ip_ctx *ctx = vctx;
    char tmp[512];
    if (len >= sizeof tmp || ctx->n == ctx->max)
        return 0;
    memcpy(tmp, line, len);
    tmp[len] = '\0';
    /* "IFNAME ADDR/LEN", or `ip -o -4 addr show`'s own line, read as its
     * words 2 and 4 ("2: eth0    inet 10.0.0.1/24 brd ... scope global eth0\ ...") */
    char *w[4], *save = NULL;
    int nw = 0;
    for (char *t = strtok_r(tmp, " \t", &save); t && nw < 4; t = strtok_r(NULL, " \t", &save))
        w[nw++] = t;
    char *name, *addr;
    if (nw == 2) {
        name = w[0];
        addr = w[1];
    } else if (nw == 4 && w[0][strlen(w[0]) - 1] == ':' && strcmp(w[2], "inet") == 0) {
        name = w[1];
        addr = w[3];
    } else {
        return 0;
    }
    char *sl = strchr(addr, '/');
    int prefix = 32;
    if (sl) {
        *sl = '\0';
        if (!parse_int(sl + 1, strlen(sl + 1), &prefix) || prefix > 32)
            return 0;
    }
    struct in_addr in;
    if (inet_pton(AF_INET, addr, &in) != 1 || strlen(name) >= 32)
        return 0;
    struct rdma_ifaddr *r = &ctx->a[ctx->n++];
    text_copy_field(r->ifname, sizeof r->ifname, name, strlen(name));
    snprintf(r->ipv4, sizeof r->ipv4, "%s", addr);
    r->prefix = prefix;
    return 0;
}

int rdma_parse_ipv4(const char *text, struct rdma_ifaddr *addrs, int max)
{
    struct ip_ctx ctx = {addrs, max, 0};
    probe_for_each_line(text, ipv4_line, &ctx);
    return ctx.n;
}

/* "0000:0000:0000:0000:0000:ffff:0a0a:0a0d" -> "10.10.10.13" */
static bool gid_ipv4(const char *gid, char out[16])
{
    static const char pre[] = "0000:0000:0000:0000:0000:ffff:";
    if (strlen(gid) != 39 || strncmp(gid, pre, sizeof pre - 1) != 0)
        return false;
    unsigned a, b;
    if (sscanf(gid + 30, "%4x:%4x", &a, &b) != 2)
        return false;
    snprintf(out, 16, "%u.%u.%u.%u", (a >> 8) & 255u, a & 255u, (b >> 8) & 255u, b & 255u);
    return true;
}

void rdma_resolve(struct rdma_port *ports, int n, const struct rdma_ifaddr *addrs, int na)
{
    for (int i = 0; i < n; i++) {
        struct rdma_port *p = &ports[i];
        p->ipv4[0] = '\0';
        for (int j = 0; j < na; j++)
            if (p->netdev[0] && strcmp(addrs[j].ifname, p->netdev) == 0) {
                snprintf(p->ipv4, sizeof p->ipv4, "%s", addrs[j].ipv4);
                p->prefix = addrs[j].prefix;
                break;
            }
        /* The RoCE v2 GID that carries the netdev's IPv4; the lowest such
         * index when the address is unknown. */
        p->gid_index = -1;
        for (int k = 0; k < p->ngids; k++) {
            char ip[16];
            const struct rdma_gid *g = &p->gids[k];
            if (strcmp(g->type, "RoCE v2") != 0 || !gid_ipv4(g->gid, ip))
                continue;
            bool match = p->ipv4[0] && strcmp(ip, p->ipv4) == 0;
            if (match || (!p->ipv4[0] && (p->gid_index < 0 || g->index < p->gid_index)))
                p->gid_index = g->index;
            if (match)
                break;
        }
    }
}

void rdma_detect_fabric(const struct rdma_port *ports, int n, const struct rdma_ifaddr *addrs,
                        int na, const struct rdma_override *ov, struct rdma_fabric *out)
{
    memset(out, 0, sizeof *out);
    out->gid_index = -1;
    size_t hl = 0;
    const struct rdma_port *chosen = NULL;
    for (int i = 0; i < n; i++) {
        if (ports[i].port != 1 || ports[i].state_num != 4)
            continue;
        fixstr_appendf_whole(out->hcas, sizeof out->hcas, &hl, "%s%s", hl ? "," : "",
                             ports[i].dev);
        if (!chosen && ports[i].ipv4[0])
            chosen = &ports[i];
    }
    if (chosen) {
        snprintf(out->ifname, sizeof out->ifname, "%s", chosen->netdev);
        snprintf(out->ipv4, sizeof out->ipv4, "%s", chosen->ipv4);
        out->prefix = chosen->prefix;
        out->gid_index = chosen->gid_index;
    }
    if (ov && ov->hcas && *ov->hcas)
        snprintf(out->hcas, sizeof out->hcas, "%s", ov->hcas);
    if (ov && ov->ifname && *ov->ifname) {
        snprintf(out->ifname, sizeof out->ifname, "%s", ov->ifname);
        out->ipv4[0] = '\0';
        for (int j = 0; j < na; j++)
            if (strcmp(addrs[j].ifname, ov->ifname) == 0) {
                snprintf(out->ipv4, sizeof out->ipv4, "%s", addrs[j].ipv4);
                out->prefix = addrs[j].prefix;
            }
        for (int i = 0; i < n; i++)
            if (strcmp(ports[i].netdev, ov->ifname) == 0)
                out->gid_index = ports[i].gid_index;
    }
    if (ov && ov->ip && *ov->ip) {
        snprintf(out->ipv4, sizeof out->ipv4, "%s", ov->ip);
        if (!out->prefix)
            out->prefix = 24;
    }
    if (!out->hcas[0])
        snprintf(out->why, sizeof out->why,
                 "no ACTIVE RDMA port (check the QSFP cable and `rdma link`, or set *_HCAS)");
    else if (!out->ipv4[0] || !out->ifname[0])
        snprintf(out->why, sizeof out->why,
                 "no IPv4 address on the netdev of an ACTIVE RDMA port (see `ip -br a`; "
                 "assign one, or set *_IP and *_IFNAME)");
    else
        out->ok = true;
}

bool rdma_same_subnet(const struct rdma_fabric *a, const struct rdma_fabric *b)
{
    struct in_addr x, y;
    if (inet_pton(AF_INET, a->ipv4, &x) != 1 || inet_pton(AF_INET, b->ipv4, &y) != 1)
        return false;
    int prefix = a->prefix < b->prefix ? a->prefix : b->prefix;
    uint32_t mask = prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
    return (ntohl(x.s_addr) & mask) == (ntohl(y.s_addr) & mask);
}

/* Appends "rel:content" for a readable, non-empty file (as grep -H . would). */
static void emit_file(struct buf *out, const char *root, const char *rel)
{
    struct buf path = BUF_INIT, content = BUF_INIT;
    if (buf_printf(&path, "%s/%s", root, rel) == 0 &&
        buf_read_file(&content, buf_str(&path), 4096) == 0) {
        const char *s = buf_str(&content);
        while (*s) {
            size_t l = strcspn(s, "\n");
            if (l)
                buf_printf(out, "%s:%.*s\n", rel, (int)l, s);
            s += l;
            if (*s)
                s++;
        }
    }
    buf_free(&path);
    buf_free(&content);
}

/* Calls fn for each entry of root/rel that does not start with '.'. */
static void each_entry(const char *root, const char *rel, void (*fn)(struct buf *, const char *,
                                                                     const char *, const char *),
                       struct buf *out)
{
    struct buf path = BUF_INIT;
    if (buf_printf(&path, "%s/%s", root, rel) < 0)
        goto done;
    DIR *d = opendir(buf_str(&path));
    if (!d)
        goto done;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            fn(out, root, rel, e->d_name);
    closedir(d);
done:
    buf_free(&path);
}

static void emit_entry(struct buf *out, const char *root, const char *rel, const char *name)
{
    struct buf r = BUF_INIT;
    if (buf_printf(&r, "%s/%s", rel, name) == 0)
        emit_file(out, root, buf_str(&r));
    buf_free(&r);
}

static void emit_netdev(struct buf *out, const char *root, const char *rel, const char *name)
{
    (void)root;
    buf_printf(out, "%s/%s\n", rel, name);
}

static void emit_gid(struct buf *out, const char *root, const char *rel, const char *idx)
{
    /* rel = DEV/ports/N/gid_attrs/types */
    size_t base = strlen(rel) - strlen("gid_attrs/types");
    struct buf t = BUF_INIT;
    size_t before = out->len;
    if (buf_printf(&t, "%s/%s", rel, idx) == 0)
        emit_file(out, root, buf_str(&t));
    if (out->len != before) {
        buf_reset(&t);
        if (buf_printf(&t, "%.*sgids/%s", (int)base, rel, idx) == 0)
            emit_file(out, root, buf_str(&t));
        buf_reset(&t);
        if (buf_printf(&t, "%.*sgid_attrs/ndevs/%s", (int)base, rel, idx) == 0)
            emit_file(out, root, buf_str(&t));
    }
    buf_free(&t);
}

static void emit_port(struct buf *out, const char *root, const char *rel, const char *port)
{
    static const char *files[] = {"state",
                                  "phys_state",
                                  "link_layer",
                                  "rate",
                                  "counters/port_xmit_data",
                                  "counters/port_rcv_data",
                                  "counters/symbol_error",
                                  "counters/port_rcv_errors",
                                  "counters/port_xmit_discards",
                                  "counters/link_downed",
                                  "counters/link_error_recovery",
                                  "counters/local_link_integrity_errors",
                                  "counters/excessive_buffer_overrun_errors",
                                  "counters/port_rcv_remote_physical_errors"};
    struct buf r = BUF_INIT;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        buf_reset(&r);
        if (buf_printf(&r, "%s/%s/%s", rel, port, files[i]) == 0)
            emit_file(out, root, buf_str(&r));
    }
    buf_reset(&r);
    if (buf_printf(&r, "%s/%s/hw_counters", rel, port) == 0)
        each_entry(root, buf_str(&r), emit_entry, out);
    buf_reset(&r);
    if (buf_printf(&r, "%s/%s/gid_attrs/types", rel, port) == 0)
        each_entry(root, buf_str(&r), emit_gid, out);
    buf_free(&r);
}

static void emit_dev(struct buf *out, const char *root, const char *rel, const char *dev)
{
    (void)rel;
    struct buf r = BUF_INIT;
    if (buf_printf(&r, "%s/ports", dev) == 0)
        each_entry(root, buf_str(&r), emit_port, out);
    buf_reset(&r);
    if (buf_printf(&r, "%s/device/net", dev) == 0)
        each_entry(root, buf_str(&r), emit_netdev, out);
    buf_free(&r);
}

int rdma_collect_local(const char *sys_root, struct buf *out)
{
    struct buf root = BUF_INIT;
    if (buf_printf(&root, "%s/class/infiniband", sys_root) < 0)
        return -1;
    each_entry(buf_str(&root), ".", emit_dev, out);
    buf_free(&root);
    /* each_entry prefixes "./": the parser wants paths relative to the root */
    char *s = out->data;
    size_t w = 0;
    for (size_t r = 0; s && r < out->len;) {
        if ((r == 0 || s[r - 1] == '\n') && s[r] == '.' && s[r + 1] == '/')
            r += 2;
        s[w++] = s[r++];
    }
    if (s) {
        out->len = w;
        s[w] = '\0';
    }
    return 0;
}

void rdma_remote_cmd(struct shcmd *c, const char *sys_root)
{
    shcmd_script(c, "SYS=$1\n" RDMA_SH_SYSFS);
    shcmd_arg(c, sys_root);
}

int rdma_verbs_probe(struct buf *msg)
{
    int num = 0;
    errno = 0;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (!list) {
        /* ENOSYS: the kernel has no RDMA support at all; that is a fact to
         * show, not a failure of this program. */
        buf_printf(msg, "libibverbs: no RDMA devices (%s)",
                   errno == ENOSYS ? "kernel without RDMA" : strerror(errno ? errno : ENODEV));
        return 0;
    }
    if (num == 0)
        buf_puts(msg, "libibverbs: no RDMA devices");
    for (int i = 0; i < num; i++) {
        struct ibv_context *ctx = ibv_open_device(list[i]);
        struct ibv_port_attr pa;
        const char *name = ibv_get_device_name(list[i]);
        if (ctx && ibv_query_port(ctx, 1, &pa) == 0)
            buf_printf(msg, "%s%s/1 %s", i ? ", " : "libibverbs: ", name,
                       ibv_port_state_str(pa.state));
        else
            buf_printf(msg, "%s%s (cannot query)", i ? ", " : "libibverbs: ", name);
        if (ctx)
            ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    return num;
}
