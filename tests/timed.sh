#!/bin/sh
# timed.sh NAME CMD...: runs CMD, then says how long it took (make test's
# steps, so a CI log shows where its time goes); CMD's exit status.
name=$1
shift
t0=$(date +%s)
"$@"
rc=$?
echo "== $name: $(($(date +%s) - t0)) s (exit $rc)"
exit $rc
