/* liveview: the engine's liveness probe (serve/liveness.h) for the console
 * and `watch`. A thread of its own sends the probe, so a wedged engine that
 * holds the request for the whole deadline never stalls the sampling; the
 * collector feeds it each scrape and copies the outcome into state. */
#ifndef DSV41_LIVEVIEW_H
#define DSV41_LIVEVIEW_H

#include "config.h"
#include "liveness.h"
#include "status.h"

struct liveview;

struct liveview *liveview_start(const struct config *c);
/* One sample at now: starts a probe when one is due; out gets the state. */
void liveview_feed(struct liveview *lv, const struct status_report *r, double now,
                   struct liveness *out);
/* Cancels a probe in flight and joins the thread. */
void liveview_stop(struct liveview *lv);

#endif
