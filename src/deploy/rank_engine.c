#include "rank_engine.h"

#include <stdio.h>
#include <string.h>

#include "interrupt.h"

/* the engine answers a ping in milliseconds; one that does not leaves the CLI */
#define RANK_ENGINE_PING_MS 2000

bool rank_engine_open(struct node *n, const char *runtime, struct rank_engine *e)
{
    memset(e, 0, sizeof *e);
    e->n = n;
    e->at = (struct engine_at){e->sock, NULL, NULL};
    if (n->local) {
        if (!n->engine_sock[0])
            return false;
        snprintf(e->sock, sizeof e->sock, "%s", n->engine_sock);
        /* asked at each open (a ping costs about a millisecond), so that
         * an engine restarted meanwhile is found again */
        struct buf err = BUF_INIT;
        int rc = engine_ping(e->sock, RANK_ENGINE_PING_MS, &err);
        buf_free(&err);
        return rc == 0;
    }
    /* no ping over the session: a socket that does not answer is
     * ENGINE_NO_ANSWER at the first verb, which leaves the CLI */
    if (node_engine_sock(n, runtime, interrupt_token(), e->sock, sizeof e->sock) != 1)
        return false;
    e->at = (struct engine_at){e->sock, node_engine_exchange, n};
    return true;
}
