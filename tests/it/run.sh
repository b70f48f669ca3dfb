#!/bin/bash
# The integration tests (tests/it/test_*.sh and the console's, tests/tui),
# each on test hosts of its own, several at a time: tests/run.sh's 'it/*' and
# 'tui/*' jobs, the TSan round with them. DSV41_IT_ONLY: space-separated file
# patterns (e.g. 'test_guard.sh test_hang.sh'), both builds' jobs of each.
# One test by hand, on the one set of hosts: tests/it/hosts.sh up; bash tests/it/test_X.sh.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
pats=()
for p in ${DSV41_IT_ONLY:-test_*.sh}; do pats+=("it/$p" "it/$p+tsan" "tui/$p" "tui/$p+tsan"); done
exec "$root/tests/run.sh" "$@" "${pats[@]}"
