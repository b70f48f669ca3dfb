/* rank_engine: a rank's container through its node's engine API instead
 * of the runtime's CLI: the local node's socket (when it answers a ping),
 * a remote node's through its ssh session (WORKER_RUNTIME_SOCKET, or the
 * one found there: node_engine_sock). The verbs are engine_at's on e->at;
 * ENGINE_NO_ANSWER from any of them means the engine could not be asked:
 * the caller uses the CLI then. */
#ifndef DSV41_RANK_ENGINE_H
#define DSV41_RANK_ENGINE_H

#include <stdbool.h>

#include "engine_at.h"
#include "node.h"

struct rank_engine {
    struct node *n;
    char sock[256];
    struct engine_at at; /* at.sock is sock: not to be copied */
};

/* False when the node has no engine to ask (the CLI then). */
bool rank_engine_open(struct node *n, const char *runtime, struct rank_engine *e);

#endif
