#include "rank_engine.h"

#include <string.h>

/* the engine answers a ping in milliseconds; one that does not leaves the CLI */
#define RANK_ENGINE_PING_MS 2000

bool rank_engine_open(struct node *n, struct rank_engine *e)
{
    memset(e, 0, sizeof *e);
    e->n = n;
    if (n->local) {
        if (!n->engine_sock[0])
            return false;
        /* asked at each verb (a ping costs about a millisecond), so that
         * an engine restarted meanwhile is found again */
        struct buf err = BUF_INIT;
        int rc = engine_ping(n->engine_sock, RANK_ENGINE_PING_MS, &err);
        buf_free(&err);
        e->sock = n->engine_sock;
        return rc == 0;
    }
    /* a worker's ranks through its socket (engine_at over the session)
     * are not used yet: the post-stop CI found a stop that still ran podman
     * on the worker and a runtime failure no longer quoted (test_first_contact's
     * hostile node); until that is understood, remote nodes keep the CLI */
    return false;
}

int rank_engine_inspect(const struct rank_engine *e, const char *name, long timeout_ms,
                        struct probe_container *ct, struct buf *err)
{
    return e->n->local ? engine_inspect(e->sock, name, timeout_ms, ct, err)
                       : engine_inspect_at(&e->at, name, timeout_ms, ct, err);
}

int rank_engine_kill(const struct rank_engine *e, const char *name, long timeout_ms,
                     struct buf *err)
{
    return e->n->local ? engine_kill(e->sock, name, "KILL", timeout_ms, err)
                       : engine_kill_at(&e->at, name, "KILL", timeout_ms, err);
}

int rank_engine_remove(const struct rank_engine *e, const char *name, long timeout_ms,
                       struct buf *err)
{
    return e->n->local ? engine_remove(e->sock, name, timeout_ms, err)
                       : engine_remove_at(&e->at, name, timeout_ms, err);
}

int rank_engine_stop(const struct rank_engine *e, const char *name, int timeout_s, int cancel_fd,
                     struct buf *err)
{
    return e->n->local ? engine_stop_cancel(e->sock, name, timeout_s, cancel_fd, err)
                       : engine_stop_at(&e->at, name, timeout_s, err);
}
