/* mono: the monotonic clock, in seconds and in milliseconds, and deadlines
 * for pthread_cond_timedwait. One place for what every module needs
 * (elapsed times, rates, timeouts); libc only, so the static helpers link
 * it too. */
#ifndef DSV41_MONO_H
#define DSV41_MONO_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
double mono_s(void);
/* Milliseconds on CLOCK_MONOTONIC. */
long long mono_ms(void);
/* ms from now on clock (the clock the condition variable waits on). */
void mono_deadline(struct timespec *ts, clockid_t clock, long ms);

#endif
