/* mono: the monotonic clock, in seconds and in milliseconds, and timed
 * waits on it. One place for what every module needs (elapsed times, rates,
 * timeouts); libc only, so the static helpers link it too. */
#ifndef DSV41_MONO_H
#define DSV41_MONO_H

#include <pthread.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
double mono_s(void);
/* Milliseconds on CLOCK_MONOTONIC. */
long long mono_ms(void);
/* ms from now on CLOCK_MONOTONIC: a deadline for mono_cond_wait. */
void mono_deadline(struct timespec *ts, long ms);
/* pthread_cond_timedwait with the deadline on CLOCK_MONOTONIC, whatever
 * clock cv was made with. A condition variable's own clock is CLOCK_REALTIME,
 * whose deadlines a step of the wall clock moves (NTP setting it at boot, an
 * operator's date -s): a 200 ms wait lasts an hour more after the clock went
 * back an hour. The only timed wait of src/ and tui/ (make check). Returns
 * what pthread_cond_timedwait does (0, ETIMEDOUT). */
int mono_cond_wait(pthread_cond_t *cv, pthread_mutex_t *mu, const struct timespec *deadline);

#endif
