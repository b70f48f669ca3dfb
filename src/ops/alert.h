/* alert: events told to the operator's receiver - ALERT_WEBHOOK (a JSON
 * POST, or a line of text with ALERT_FORMAT=text for ntfy-style services)
 * and/or ALERT_CMD (a program run without a shell, the event as JSON on its
 * stdin). Each kind at most ALERT_RATE times in 10 minutes (what is held
 * back is counted into the next one of its kind). A thread of its own
 * delivers, in order: a receiver that fails is tried again with backoff
 * (1 s doubling to 60 s, for up to 10 minutes, then the alert is dropped
 * and said), and nothing ever waits on it - the ops thread only queues. */
#ifndef DSV41_ALERT_H
#define DSV41_ALERT_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "state.h"

#define ALERT_WINDOW_S 600
#define ALERT_RATE_MAX 1000
#define ALERT_QUEUE 64
#define ALERT_GIVE_UP_S 600

struct alerter;

/* 0 with *out NULL when neither ALERT_WEBHOOK nor ALERT_CMD is set; -1
 * with the fix in err when a setting is wrong. s: where failures are said. */
int alert_start(const struct config *c, struct state *s, struct alerter **out, struct buf *err);
/* An event to tell (rate-limited, queued; never blocks). */
void alert_post(struct alerter *a, const struct state_event *e);
void alert_stats(struct alerter *a, uint64_t *sent, uint64_t *failed, uint64_t *dropped);
/* Gives what is queued up to 3 s to go, then stops. */
void alert_stop(struct alerter *a);

/* Pure parts, for tests. The event as JSON (malloc'd): kind, node, what,
 * incident (null when none), time (ISO 8601), host, seq, suppressed. */
char *alert_json(const struct state_event *e, const char *host, unsigned suppressed);
/* The text form's body and its title. */
void alert_text(const struct state_event *e, const char *host, unsigned suppressed,
                struct buf *body, char *title, size_t titlesz);

/* The send times of one kind's alerts in the window. */
struct alert_limit {
    double t[ALERT_RATE_MAX];
    int n;
    unsigned held; /* held back since the last one sent */
};
/* True when one more may go at now (and it is counted). */
bool alert_limit_take(struct alert_limit *l, int rate, double now);
/* Seconds before try n+1 after n failures: 1, 2, 4 .. 60. */
double alert_backoff(int failures);

#endif
