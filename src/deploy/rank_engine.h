/* rank_engine: a rank's container through its node's engine API instead
 * of the runtime's CLI: the local node's socket (when it answers a ping).
 * A remote node's socket through its ssh session (engine_at) is meant to
 * follow; remote nodes use the CLI for now (see rank_engine.c). ENGINE_NO_ANSWER from any verb means the
 * engine could not be asked: the caller uses the CLI then. A socket the
 * sampler found on a worker by itself (the setting empty) is not known
 * here: the CLI serves those. */
#ifndef DSV41_RANK_ENGINE_H
#define DSV41_RANK_ENGINE_H

#include <stdbool.h>

#include "engine_at.h"
#include "node.h"

struct rank_engine {
    struct node *n;
    const char *sock;    /* local: engine.c's calls on this path */
    struct engine_at at; /* remote: through the session */
};

/* False when the node has no engine to ask (the CLI then). */
bool rank_engine_open(struct node *n, struct rank_engine *e);
/* The verbs, with engine.h's codes (and ENGINE_NO_ANSWER). A remote stop
 * cannot be cut short: it is bounded by timeout_s and its margin. */
int rank_engine_inspect(const struct rank_engine *e, const char *name, long timeout_ms,
                        struct probe_container *ct, struct buf *err);
int rank_engine_kill(const struct rank_engine *e, const char *name, long timeout_ms,
                     struct buf *err);
int rank_engine_remove(const struct rank_engine *e, const char *name, long timeout_ms,
                       struct buf *err);
int rank_engine_stop(const struct rank_engine *e, const char *name, int timeout_s, int cancel_fd,
                     struct buf *err);

#endif
