/* preflight: what a node needs before its rank can start - the model files
 * and the plan, the image, disk for the caches - asked in one round trip.
 * doctor reports it, launch acts on it (a missing image is pulled). */
#ifndef DSV41_PREFLIGHT_H
#define DSV41_PREFLIGHT_H

#include "config.h"
#include "node.h"

struct preflight {
    struct strv missing; /* files of the checkpoint not there, relative to model_dir */
    int image;           /* 1 present, 0 not, -1 the node did not say */
    char image_id[80];   /* its id when present ("" not said): launch prints it */
    double free_kib;     /* free under state_dir (or its nearest existing parent); -1 unknown */
};

/* 0 when the node answered (p filled), -1 when it could not be asked. */
int preflight_check(const struct config *c, struct node *n, const char *model_dir,
                    const char *state_dir, struct preflight *p, struct buf *err);
void preflight_free(struct preflight *p);

#endif
