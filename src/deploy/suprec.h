/* suprec: the supervisor's record, STATE_DIR/supervise.tsv - one line per
 * thing it did, "EPOCH<TAB>ACTION<TAB>CAUSE<TAB>WHAT" (ACTION: restart,
 * stopped, gave-up; CAUSE: the event's kind). Written by src/ops's
 * supervisor; read by status (its warning), the exporter (restarts by cause)
 * and the supervisor itself (the hourly cap outlives a restart of watch). */
#ifndef DSV41_SUPREC_H
#define DSV41_SUPREC_H

#include <stdbool.h>
#include <time.h>

#include "buf.h"

#define SUPREC_FILE "supervise.tsv"
#define SUPREC_CAUSES 8
#define SUPREC_HOUR_MAX 128

struct suprec {
    int ncauses;
    struct {
        char cause[24];
        unsigned restarts;
    } causes[SUPREC_CAUSES];
    time_t hour[SUPREC_HOUR_MAX]; /* the restarts of the last hour */
    int nhour;
    bool gave_up;      /* the newest line is a gave-up or a stop after a guard */
    time_t last_at;    /* when the newest line was written; 0 none */
    char last[400];    /* the newest line, cleaned: "TIME ACTION after CAUSE: WHAT"; "" none */
};

/* Pure: the record's text as of now. */
void suprec_parse(const char *text, time_t now, struct suprec *r);
/* STATE_DIR's record; an empty one when there is none. */
void suprec_load(const char *state_dir, time_t now, struct suprec *r);
/* A line appended (the file 0600); -1 with why in err. */
int suprec_append(const char *state_dir, const char *action, const char *cause, const char *what,
                  struct buf *err);

/* STATE_DIR/last-stop: "EPOCH PPID", written by `stop` and `restart` before
 * they stop anything. The supervisor's own stops are its children (PPID is
 * its pid); any other is an operator's, which it never undoes. */
#define SUPREC_STOP_FILE "last-stop"
void suprec_mark_stop(const char *state_dir);
/* The newest stop's time and its parent's pid; false when none is known. */
bool suprec_last_stop(const char *state_dir, time_t *at, long *ppid);

#endif
