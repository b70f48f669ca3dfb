/* drift: has the fabric moved under running ranks? A rank keeps the
 * fabric it was started with (NCCL_IB_GID_INDEX, NCCL_IB_HCA, the netdev
 * and IPv4 in its env file), while a netplan / NetworkManager re-apply
 * renumbers the RoCE v2 IPv4 GID, or a reboot loses the fabric IPv4
 * (REFERENCE.md §10): NCCL then fails or hangs. The node's fabric as read
 * now (every snapshot reads sysfs) is compared with the env file of the
 * rank that runs there. */
#ifndef DSV41_DRIFT_H
#define DSV41_DRIFT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "cluster.h"
#include "config.h"
#include "rdma.h"

struct drift_start {
    bool known;
    char ifname[32], ipv4[16], hcas[256];
    int gid_index; /* -1 when the env file has none */
};

/* Pure: the fabric words of a rank's env file (KEY=VALUE lines). */
void drift_parse_env(const char *text, struct drift_start *d);
/* Pure: true, with what changed in why, when now is not what the rank
 * started with. */
bool drift_check(const struct drift_start *d, const struct rdma_fabric *now, char *why,
                 size_t whysz);
/* Reads the env file of the rank that runs on cn (STATE_DIR/dsv41-rN.env);
 * cancel (NULL: none) ends the ask early. */
int drift_read(const struct config *c, struct cluster_node *cn, const atomic_int *cancel,
               struct drift_start *d);

#endif
