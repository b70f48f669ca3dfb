/* xfer_wire: what the head and dsv41-xfer (the copy's helper on a worker)
 * say to each other. Three paths:
 *  - the plan, a file the head puts on the worker over sftp: a line
 *    "dsv41-copy-plan 2", then per file "ID SIZE MTIME_NS SUM PATH"
 *    (MTIME_NS -1: not known, the worker's file keeps its own time)
 *    (SUM: the sha256 in hex when the head's manifest or the hub knows it;
 *    "git:" and the git blob sha1 the hub listed for a small file, checked
 *    on the worker beside the sum the head sends; "-" when only the head's
 *    sum, hashed as it reads the file and sent after its last byte, is
 *    known. Version 1 had no "git:");
 *  - the helper's report, lines on its ssh channel (authenticated by ssh):
 *      need ID A B     bytes [A, B) of ID are wanted (before "listen")
 *      cores N         the node's cores (the streams' default)
 *      listen ADDR PORT      ready for the streams
 *      ok ID           ID matched and is in place
 *      bad ID GEN      ID's hash differed: dropped, wanted again as GEN
 *      fail ID ERRNO   ID cannot be written (ENOSPC, ...): given up
 *      progress BYTES  bytes landed in this run
 *      refused ADDR    a connection without the token (closed)
 *      end OK BAD      every file settled; the helper exits
 *    any other line is text to show, never a result;
 *  - the streams, TCP connections to ADDR PORT: first the hello
 *    "DSV41XFER1 " + the token in hex + "\n" (answered "OK\n", or closed),
 *    then frames of a 32-byte header (big-endian: magic, type, id, gen,
 *    offset, length) and length bytes: DATA (bytes of a file at offset),
 *    SUM (the 32-byte sha256 the head computed, for a "-" file), BYE.
 * The data path is plain TCP: the weights are public, a file's integrity is
 * its hash, and the token keeps anyone else from writing; --rsync copies
 * through ssh where the link is not private. */
#ifndef DSV41_XFER_WIRE_H
#define DSV41_XFER_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "usage.h"

#define XFER_MAX_FILES 100000
#define XFER_TOKEN_HEX 64
#define XFER_HELLO_LEN (11 + XFER_TOKEN_HEX + 1) /* "DSV41XFER1 " token "\n" */
#define XFER_HDR_LEN 32
#define XFER_MAGIC 0x44584631u /* "DXF1" */
#define XFER_MAX_FRAME (64LL << 20)
#define XFER_MAX_SIZE (1LL << 50)   /* a file of the plan: 1 PiB */
#define XFER_MAX_GENERATIONS 3      /* a file whose hash differs this often: given up */
#define XFER_MAX_STREAMS 64

enum xfer_frame { XF_DATA = 1, XF_SUM = 2, XF_BYE = 3 };

struct xfer_hdr {
    uint32_t type, id, gen;
    int64_t off, len;
};

void xfer_hdr_pack(const struct xfer_hdr *h, unsigned char out[XFER_HDR_LEN]);
/* false: not a frame of ours (bad magic or type, a negative field). */
bool xfer_hdr_unpack(const unsigned char in[XFER_HDR_LEN], struct xfer_hdr *h);

struct xfer_file {
    char *path; /* relative to the directory */
    int64_t size, mtime_ns;
    bool has_sha;
    unsigned char sha[32];
    bool has_git; /* the hub's git blob sha1 of it (a small file) */
    unsigned char git[20];
};

struct xfer_plan {
    struct xfer_file *f;
    int n;
};

void xfer_plan_format(const struct xfer_plan *p, struct buf *out);
/* -1 and why (the line) when malformed: a path that leaves the directory,
 * one of ours (.dsv41-, .incomplete), a duplicate, a negative size. */
int xfer_plan_parse(const char *text, struct xfer_plan *p, struct buf *err);
int xfer_plan_add(struct xfer_plan *p, const char *path, int64_t size, int64_t mtime_ns,
                  const unsigned char *sha);
void xfer_plan_free(struct xfer_plan *p);

enum xfer_report_kind {
    XR_TEXT,
    XR_NEED,
    XR_LISTEN,
    XR_OK,
    XR_BAD,
    XR_FAIL,
    XR_PROGRESS,
    XR_REFUSED,
    XR_END,
    XR_CORES
};

struct xfer_report {
    enum xfer_report_kind kind;
    int64_t id, a, b; /* need: id a b; bad: id gen (in a); fail: id errno (in a);
                       * progress: bytes, cores: N (in a); end: ok bad (a b) */
    char addr[64];    /* listen, refused */
    int port;
};

/* Parses a report line for a plan of nfiles; anything else is XR_TEXT. */
void xfer_report_parse(const char *line, int nfiles, struct xfer_report *r);

/* dsv41-xfer's options, its --help and its man page, dsv41-xfer(1). */
extern const struct usage_doc xferd_doc;

#endif
