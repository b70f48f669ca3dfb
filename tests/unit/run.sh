#!/bin/bash
# The unit tests (cmocka) of one build, then the README's generated tables
# against that build's program (not the TSan build's): make unit, and tests/run.sh's unit jobs.
# usage: tests/unit/run.sh [BUILD]   (build, build-address-undefined, build-thread)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
b=${1:-build}
rc=0
for t in tests/unit/test_*.c; do
    t=$b/tests/$(basename "$t" .c)
    echo "== $t"
    DSV41_FIXTURES=tests/fixtures "$t" || { echo "FAIL - $t"; rc=1; }
done
# the tables, man page and completions the program prints: in the plain and
# ASan builds (the printing code checked for memory errors); the TSan build
# prints the same text from one thread, and the check takes most of a minute
[ "$b" = build-thread ] || tests/check_docs.sh "$b/dsv41-top" || rc=1
exit $rc
