#!/bin/sh
# timed.sh NAME CMD...: runs CMD, then says how long it took, and with
# DSV41_TEST_T0 (make test sets it: the run's start, in epoch seconds) how
# long the whole run has taken so far, so a CI log shows where its time goes
# and its last such line the total; CMD's exit status.
name=$1
shift
t0=$(date +%s)
"$@"
rc=$?
t1=$(date +%s)
all=
[ -n "${DSV41_TEST_T0:-}" ] && all=", $((t1 - DSV41_TEST_T0)) s since make test began"
echo "== $name: $((t1 - t0)) s (exit $rc)$all"
exit $rc
