/* job: the console's long actions (launch, stop, smoke, bench, gates, ...).
 * A job runs the same subcommand a script would (`dsv41-top smoke`) as a
 * child process, on a thread that feeds every line it prints into the job's
 * output in state and keeps the last one as its progress. A child rather
 * than a thread because the commands print as they go, install signal
 * handlers and may block on the network for minutes: a job can be
 * cancelled (SIGTERM to its process group), and nothing it does can hang
 * or crash the screen. The result is the exit status, with the output kept. */
#ifndef DSV41_JOB_H
#define DSV41_JOB_H

#include "state.h"

/* Global options every child gets before its command (--config FILE,
 * --set K=V ...), as the console was started with. Not copied: must live. */
void job_set_base_args(char **args, int n);
/* Starts `dsv41-top <argv...>` as job `name`; its id, or 0 when it could not
 * start (said on the status line). */
unsigned job_start(struct state *s, const char *name, char *const argv[]);
/* True when a job of that name is running. */
bool job_running(struct state *s, const char *name);
/* Job id's status (JOB_FAILED when it is no longer kept), its exit code,
 * and once it ended its last lines appended to tail (when not NULL). */
struct strv;
enum job_status job_result(struct state *s, unsigned id, int *exit_code, struct strv *tail,
                           int lines);
/* The newest running job's id (its name into name), or 0 when none runs. */
unsigned job_newest_running(struct state *s, char *name, size_t sz);
/* Asks a running job to stop (SIGTERM, then SIGKILL after 5 s). */
int job_cancel(struct state *s, unsigned id);
/* Cancels every running job and waits for their threads (at exit); an
 * acceptance is left to finish its window on its own. Returns the jobs left
 * running: their threads still read into s, which must then not be freed. */
int job_shutdown(struct state *s);

#endif
