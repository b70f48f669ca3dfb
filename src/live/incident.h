/* incident: the evidence, kept when something goes wrong. When a memory
 * guard fires, the engine is called wedged, or a rank exits, the engine
 * (the monitor, so the console and `watch` alike) writes
 * STATE_DIR/incidents/DATE-what/ with a one-page summary.txt, each rank's
 * last 2,000 log lines, every node's samples of the last minute (memory,
 * PSI, free 4 MiB blocks, GPU), the metrics before and after, each node's
 * guard log and kernel log tail, and the exact launch configuration (the
 * settings with secrets hidden, each rank's env file). What follows within
 * 30 s (the ranks a guard killed, the wedge a dead rank causes) is added to
 * the same summary rather than a directory of its own - unless a rank was
 * started in between (a relaunch: what fails next is the new deployment's
 * own incident, and the supervisor's next event). A thread of its own
 * writes, so a slow node never stalls the sampling. */
#ifndef DSV41_INCIDENT_H
#define DSV41_INCIDENT_H

#include "cluster.h"
#include "config.h"
#include "state.h"

#define INCIDENT_LOG_LINES 2000
#define INCIDENT_COALESCE_S 30

struct incident;

struct incident *incident_start(const struct config *c, struct cluster *cl, struct state *s);
/* After each sample (the state unlocked): looks for the triggers. The first
 * call only learns how things stand. */
void incident_check(struct incident *in);
/* The guards were asked at `at` and incident_check saw what they said: once
 * the writer has told every trigger found so far (a symptom's event renamed
 * for its cause: coalesce), a symptom seen before at may be acted on
 * (events_causes_seen). */
void incident_causes_seen(struct incident *in, double at);
/* Finishes the incident being written, drops what is queued, stops. */
void incident_stop(struct incident *in);

/* `dsv41-top incidents`: STATE_DIR/incidents, newest last, each with the
 * first line of its summary. Returns the number listed. */
int incident_list(const char *state_dir, FILE *out);

#endif
