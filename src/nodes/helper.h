/* helper: our static helper programs (dsv41-guard, dsv41-verify). A worker
 * has nothing of ours installed, so the head finds each helper beside the
 * running dsv41-top (the build directory, or PREFIX/bin) and pushes it into
 * the node's STATE_DIR/bin over sftp. */
#ifndef DSV41_HELPER_H
#define DSV41_HELPER_H

#include "buf.h"
#include "cluster.h"

/* Reads helper NAME from beside the running binary; -1 and why (with the
 * fix) when it is missing. */
int helper_read(const char *name, struct buf *data, struct buf *why);
/* The CPU an ELF program is built for, as Linux's `uname -m` names it
 * ("x86_64", "aarch64", ...; "another CPU" for others), or NULL when data is
 * no ELF file. */
const char *helper_elf_machine(const struct buf *data);
/* 0 when helper NAME (data) runs on a node whose `uname -m` is uname_m (""
 * when unknown: not judged); -1 with err naming both and the fix. */
int helper_check_machine(const char *node, const char *uname_m, const char *name,
                         const struct buf *data, struct buf *err);
/* data's sha256 in hex ("" when it cannot be computed): what a node's copy
 * is compared with. */
void helper_sha256_hex(const struct buf *data, char hex[65]);
/* Installs data as STATE_DIR/bin/NAME on the node, mode 0700: written under
 * another name, then renamed over the old one (a running executable cannot
 * be written, but it can be replaced); nothing is sent when the node's copy
 * has data's sha256 already, nor when data is built for another CPU than
 * the node's (helper_check_machine). The installed path goes into path.
 * -1 with err naming the node. */
int helper_install(struct cluster_node *cn, const char *state_dir, const char *name,
                   const struct buf *data, struct buf *path, struct buf *err);
/* Only the sending: data written as a fresh name beside STATE_DIR/bin/NAME
 * (the directory must exist), mode 0700, that name in tmp, for a caller
 * that renames it into place in a round trip it makes anyway (the guard's
 * start: #32). -1 with err naming the node. */
int helper_send(struct cluster_node *cn, const char *state_dir, const char *name,
                const struct buf *data, struct buf *tmp, struct buf *err);

#endif
