/* guardpoll: one remote node's memory guard, read in a thread of its own
 * every few seconds (its heartbeat, whether its process lives, its log's
 * last line). A node that hangs holds up only its own poller: the console
 * goes on reading the other nodes' guards, and its own sampling, meanwhile. */
#ifndef DSV41_GUARDPOLL_H
#define DSV41_GUARDPOLL_H

#include <stdbool.h>
#include <stddef.h>

#include "cluster.h"
#include "config.h"

struct guardpoll;

struct guardpoll *guardpoll_start(const struct config *c, struct cluster_node *cn,
                                  double every_s);
/* The three lines guardview_parse reads (the newest answer), or the reason
 * it could not ask, and when (monotonic s) that ask began; false when
 * nothing new came since the last take. */
bool guardpoll_take(struct guardpoll *p, bool *asked, double *asked_at, char *text,
                    size_t textsz);
/* Tells the poller to end (its ask in flight gives up); guardpoll_stop
 * then joins it. Cancel them all first, and the waits overlap. */
void guardpoll_cancel(struct guardpoll *p);
void guardpoll_stop(struct guardpoll *p);

#endif
