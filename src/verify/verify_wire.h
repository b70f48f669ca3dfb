/* verify_wire: how dsv41-verify, run on a worker, reports to the head. One
 * line per event, fields separated by single spaces, the path last and
 * escaped as sha256sum escapes names ("\\" and "\n"), so a file name
 * cannot forge a line:
 *   progress DONE TOTAL
 *   file RESULT SIZE SHA256|- ERR PATH     (ERR: an errno, or "notreg")
 *   end BAD INTERRUPTED
 * The head reads every line it did not expect as text to show, never as
 * a result. */
#ifndef DSV41_VERIFY_WIRE_H
#define DSV41_VERIFY_WIRE_H

#include "usage.h"
#include "verify.h"

enum verify_wire_kind { VW_TEXT, VW_PROGRESS, VW_FILE, VW_END };

struct verify_wire {
    enum verify_wire_kind kind;
    int64_t done, total;   /* progress */
    struct verify_entry e; /* file: e.path points into path */
    char path[4096];
    int bad;               /* end */
    bool interrupted;
};

void verify_wire_progress(struct buf *out, int64_t done, int64_t total);
void verify_wire_file(struct buf *out, const struct verify_entry *e);
void verify_wire_end(struct buf *out, int bad, bool interrupted);
/* Parses one line; anything malformed is VW_TEXT. */
void verify_wire_parse(const char *line, struct verify_wire *w);

/* dsv41-verify's options, its --help and its man page, dsv41-verify(1). */
extern const struct usage_doc verifyd_doc;

#endif
