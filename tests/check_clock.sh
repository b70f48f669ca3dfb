#!/bin/bash
# Every timed wait is on CLOCK_MONOTONIC: pthread_cond_timedwait (a deadline
# on the condition variable's clock, CLOCK_REALTIME unless made otherwise,
# which a step of the wall clock moves) in src/util/mono.c alone, through
# mono_cond_wait; and no deadline taken from CLOCK_REALTIME in src/ or tui/.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
fail=0
h=$(grep -rnE '\bpthread_cond_(timed|clock)wait\(' src tui --include='*.c' --include='*.h' | grep -v '^src/util/mono\.c:')
[ -z "$h" ] && echo "ok   - a timed wait only through mono_cond_wait (src/util/mono.c)" ||
    { echo "FAIL - a timed wait on the condition variable's clock (use mono_deadline and mono_cond_wait):"; printf '    %s\n' "$h"; fail=1; }
h=$(grep -rn 'CLOCK_REALTIME' src tui --include='*.c' --include='*.h' | grep -vE '^src/util/mono\.h:')
[ -z "$h" ] && echo "ok   - no CLOCK_REALTIME in src/ or tui/ (wall time comes from time())" ||
    { echo "FAIL - CLOCK_REALTIME (a wall-clock step moves it: CLOCK_MONOTONIC for deadlines and intervals):"; printf '    %s\n' "$h"; fail=1; }
exit $fail
