/* memsig: the signals of a node's memory beyond MemAvailable, parsed from
 * the kernel's text without allocating, because the guard reads them
 * between a sample and a kill: PSI (/proc/pressure/memory), free blocks of
 * high order (/proc/buddyinfo: fragmentation) and the NVIDIA driver's lines
 * in the kernel log (/dev/kmsg records). A GB10 has wedged with MemAvailable
 * still at ~22 GiB (REFERENCE.md §8); these are what came first. Pure: the
 * same functions serve the guard, the snapshots and the fuzz target. */
#ifndef DSV41_MEMSIG_H
#define DSV41_MEMSIG_H

#include <stdbool.h>
#include <stddef.h>

/* A "large free block" is 4 MiB: order 10 with 4 KiB pages (x86, most
 * arm64 kernels), 8 with 16 KiB, 6 with 64 KiB (arm64's other page sizes). */
#define MEMSIG_BUDDY_ORDER 10
#define MEMSIG_LARGE_BLOCK (4L << 20)
/* The buddy order of a 4 MiB block with pages of page_bytes (the node's
 * own: the guard's sysconf, a snapshot's getconf PAGESIZE); anything not a
 * power of two up to 4 MiB gives MEMSIG_BUDDY_ORDER. */
int memsig_buddy_order(long page_bytes);

struct memsig_psi {
    bool some_ok, full_ok;
    double some_avg10, full_avg10; /* percent of the last 10 s */
};

/* "some avg10=... " and "full avg10=..." lines; 0 when the full line was
 * found (kernels before 5.2 and CONFIG_PSI=n have no file: the caller says
 * n/a), -1 otherwise. */
int memsig_parse_psi(const char *text, size_t len, struct memsig_psi *out);

/* The free blocks of order >= min_order summed over every zone of
 * /proc/buddyinfo ("Node 0, zone   Normal   c0 c1 ... c10"); -1 when no
 * zone line parsed. */
long memsig_parse_buddy(const char *text, size_t len, int min_order);

/* One /dev/kmsg record ("PRI,SEQ,USEC,FLAGS;TEXT" then continuation lines
 * that start with a blank). Fills the sequence number and where the message
 * text lies in rec; returns 1 for the NVIDIA driver's lines ("NVRM:", which
 * its Xid lines also carry),
 * 0 for any other record, -1 for a malformed one. */
int memsig_parse_kmsg(const char *rec, size_t len, unsigned long long *seq, size_t *msg_off,
                      size_t *msg_len);

#endif
