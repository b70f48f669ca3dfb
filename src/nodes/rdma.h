/* rdma: RDMA ports and fabric detection. Every node is read through sysfs
 * text ("relpath:value" lines, as `grep -H .` prints them from
 * /sys/class/infiniband), so the head and a remote worker share one parser;
 * the local node is also cross-checked through libibverbs. */
#ifndef DSV41_RDMA_H
#define DSV41_RDMA_H

#include <stdbool.h>

#include "buf.h"
#include "shcmd.h"
#include "probe.h"

#define RDMA_MAX_PORTS 16
#define RDMA_MAX_GIDS 32

struct rdma_gid {
    int index;
    char type[16]; /* "RoCE v2", "IB/RoCE v1" */
    char gid[48];
    char ndev[32];
};

struct rdma_port {
    char dev[48];
    int port;
    int state_num; /* 4 = ACTIVE; -1 unknown */
    char state[24];
    char phys_state[24];
    char link_layer[16];
    char rate[48];
    char netdev[32];
    char ipv4[16]; /* of netdev; "" when none */
    int prefix;
    int gid_index; /* RoCE v2 IPv4 GID; -1 when none */
    struct pval xmit_bytes, rcv_bytes;
    struct pval errors; /* the sum of the error counters (RDMA_ERROR_COUNTERS) */
    int ngids;
    struct rdma_gid gids[RDMA_MAX_GIDS];
};

/* Counters that only rise when something is wrong with the link or the
 * transport: under counters/ (IB PMA) and hw_counters/ (mlx5 RoCE). */
#define RDMA_ERROR_COUNTERS                                                                        \
    "symbol_error", "port_rcv_errors", "port_xmit_discards", "link_downed",                      \
        "link_error_recovery", "local_link_integrity_errors", "excessive_buffer_overrun_errors", \
        "port_rcv_remote_physical_errors", "out_of_sequence", "packet_seq_err",                  \
        "local_ack_timeout_err", "rnr_nak_retry_err", "implied_nak_seq_err"

struct rdma_ifaddr {
    char ifname[32];
    char ipv4[16];
    int prefix;
};

struct rdma_fabric {
    bool ok;
    char ifname[32];
    char ipv4[16];
    int prefix;
    char hcas[256];
    int gid_index;
    char why[256]; /* when !ok: what is missing and what to do */
};

/* Overrides from the configuration; empty strings mean "detect". */
struct rdma_override {
    const char *ip, *ifname, *hcas;
};

/* The sysfs text for one node; sorted by device then port. Returns the number
 * of ports (at most max). Lines that do not parse are skipped. */
int rdma_parse_sysfs(const char *text, struct rdma_port *ports, int max);
/* Lines "IFNAME A.B.C.D/PREFIX". */
int rdma_parse_ipv4(const char *text, struct rdma_ifaddr *addrs, int max);
/* Gives each port its netdev's IPv4 and picks its RoCE v2 IPv4 GID index. */
void rdma_resolve(struct rdma_port *ports, int n, const struct rdma_ifaddr *addrs, int na);
void rdma_detect_fabric(const struct rdma_port *ports, int n, const struct rdma_ifaddr *addrs,
                        int na, const struct rdma_override *ov, struct rdma_fabric *out);
/* True when a and b are in one IPv4 subnet (the smaller of both prefixes). */
bool rdma_same_subnet(const struct rdma_fabric *a, const struct rdma_fabric *b);

/* Reads sys_root/class/infiniband into the sysfs text format. */
int rdma_collect_local(const char *sys_root, struct buf *out);
/* The script that prints the same text on a remote node, reading the sysfs
 * root from $SYS: one grep for every file (a blank line and the all-zero GID
 * left out; no other file's line can read as that GID). */
#define RDMA_SH_SYSFS                                                                              \
    "if cd \"$SYS\"/class/infiniband 2>/dev/null; then "                                            \
    "grep -H -v -x -e '' -e 0000:0000:0000:0000:0000:0000:0000:0000 "                              \
    "*/ports/*/state */ports/*/phys_state */ports/*/link_layer */ports/*/rate "                    \
    "*/ports/*/counters/port_xmit_data */ports/*/counters/port_rcv_data "                          \
    "*/ports/*/counters/*err* */ports/*/counters/link_* */ports/*/counters/port_xmit_discards "    \
    "*/ports/*/hw_counters/* */ports/*/gid_attrs/types/* */ports/*/gid_attrs/ndevs/* "             \
    "*/ports/*/gids/* 2>/dev/null; "                                                               \
    "for n in */device/net/*; do [ -e \"$n\" ] && echo \"$n\"; done; cd /; fi\n"
/* That script alone, for sys_root. */
void rdma_remote_cmd(struct shcmd *c, const char *sys_root);
/* libibverbs view of the local node: number of devices, or 0 with a reason
 * when the kernel has no RDMA (NULL/ENOSYS is not an error). */
int rdma_verbs_probe(struct buf *msg);

#endif
