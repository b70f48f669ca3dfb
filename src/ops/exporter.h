/* exporter: `dsv41-top exporter`'s HTTP side. GET /metrics answers the
 * page ops_render makes from the last sample (nothing is asked of a node
 * during a scrape). libmicrohttpd, one polling thread: at most
 * EXPORTER_CONNS connections (EXPORTER_PER_IP from one address), a
 * request's headers within EXPORTER_REQ_BYTES, idle connections closed
 * after EXPORTER_IDLE_S. A bearer token from EXPORTER_TOKEN_FILE (mode
 * 0600, ours) is asked of every scrape when set, and must be set when the
 * address is not loopback; a wrong or missing one gets 401. */
#ifndef DSV41_EXPORTER_H
#define DSV41_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "buf.h"
#include "config.h"
#include "ops.h"

#define EXPORTER_CONNS 128
#define EXPORTER_PER_IP 4
#define EXPORTER_REQ_BYTES (16 * 1024)
#define EXPORTER_IDLE_S 5
#define EXPORTER_TOKEN_MAX 512

struct exporter;

/* listen: ADDR:PORT (NULL: EXPORTER_LISTEN). -1 with the fix in err. */
int exporter_start(const struct config *c, const char *listen, struct ops *o,
                   struct exporter **out, struct buf *err);
/* The address it listens on, as given. */
const char *exporter_address(const struct exporter *x);
void exporter_stop(struct exporter *x);

/* Pure parts, for tests. "127.0.0.1:9841", "[::1]:9841", ":9841" (every
 * address): into ss; -1 with why. */
int exporter_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
                          struct buf *err);
bool exporter_is_loopback(const struct sockaddr_storage *ss);
/* The token file's one line: a file of ours, mode 0600 or stricter, 16 to
 * EXPORTER_TOKEN_MAX printable bytes. -1 with the fix in err. */
int exporter_read_token(const char *path, char *tok, size_t sz, struct buf *err);
/* "Bearer TOKEN" checked in constant time. */
bool exporter_auth_ok(const char *header, const char *token);

#endif
