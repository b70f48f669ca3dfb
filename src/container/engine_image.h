/* engine_image: an image's inspect document through the engine's API
 * socket (GET /images/NAME/json), for alike on the local node and
 * preflight on every node (a remote one's through engine_at): its id and
 * the CUDA_VERSION its Config.Env sets, with no `RUNTIME image inspect`
 * started (podman's CLI takes ~0.2 s to start). An image reference goes
 * into a URL path: only the characters a reference has ([A-Za-z0-9._/:@-],
 * no "..", no "//", not starting with '/', '-' or '.') are taken, anything
 * else is refused, never escaped. */
#ifndef DSV41_ENGINE_IMAGE_H
#define DSV41_ENGINE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "engine_at.h"

#define ENGINE_IMAGE_REF_MAX 255

struct engine_image {
    char id[136];   /* as the runtime's CLI prints {{.Id}} (see strip_prefix) */
    char cuda[120]; /* Config.Env's CUDA_VERSION=; "" when it sets none */
};

/* 0 when ref may go into a URL path, else -1 with a message. */
int engine_image_ref_ok(const char *ref, struct buf *err);
/* The pure part: the document into img. strip_prefix: the id without
 * "sha256:" (podman's CLI prints it so; the API, docker's CLI and docker's
 * API write the prefix). -1 with *why when it is malformed or has no Id. */
int engine_image_parse(const char *json, size_t len, bool strip_prefix, struct engine_image *img,
                       const char **why);
/* GET /images/REF/json: 0, ENGINE_NOSUCH (404: not on this node), or -1. */
int engine_image_inspect(const char *sock, const char *ref, bool strip_prefix, long timeout_ms,
                         struct engine_image *img, struct buf *err);
/* engine_image_inspect through at (a remote node's socket over its ssh
 * session): the same codes, or ENGINE_NO_ANSWER / the transport's when the
 * engine could not be asked (the CLI then). */
int engine_image_inspect_at(const struct engine_at *at, const char *ref, bool strip_prefix,
                            long timeout_ms, struct engine_image *img, struct buf *err);

#endif
