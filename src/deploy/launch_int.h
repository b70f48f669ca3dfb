/* launch_int: what launch's files share inside src/deploy - launch.c (the
 * steps, in order), launch_image.c (the image pulled where it is missing,
 * its id on every node) and launch_wait.c (the ranks watched until the API
 * answers). Not for other folders: launch.h is the interface. */
#ifndef DSV41_LAUNCH_INT_H
#define DSV41_LAUNCH_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "cluster.h"
#include "config.h"
#include "deploy.h"
#include "launch.h"
#include "logstream.h"
#include "phase.h"
#include "strv.h"

#define TAIL_LINES 40
#define PULL_TIMEOUT_MS (60 * 60 * 1000)

/* What launch keeps per node. */
struct lnode {
    struct cluster_node *cn;
    char state_dir[512], model_dir[512];
    char unknown[128]; /* why the node's fabric is not known; "" when it is */
    struct deploy_node dn;
    /* the rank's log, watched while it starts */
    struct logstream *logs;
    pthread_mutex_t mu;
    struct phase_state ph;
    char tail[TAIL_LINES][256];
    int ntail;
    enum phase shown;
    struct strv transitions; /* phase changes not printed yet, each with its time */
    double t0;
    char image_id[80]; /* the image's id, as the preflight found it; "" not known */
};

/* launch.c: the ranks this launch started on every node removed (an
 * interrupt or a failure after they started). */
int launch_kill_all(const struct config *c, struct lnode *ln, int n);
/* launch_image.c: the image pulled on node l (progress said), 0 or -1 with
 * why said; the image id each node has, said when they differ. */
int launch_pull_image(const struct config *c, struct lnode *l);
void launch_show_image_ids(const struct config *c, struct lnode *ln, int n);
/* launch_wait.c: every rank's log followed and its phase said until the API
 * answers (0), a rank exits, a guard fires or timeout_s passes (the ranks
 * removed, why said; 1). */
int launch_wait_ready(const struct config *c, struct lnode *ln, int n, int timeout_s, double t0);

#endif
