#!/bin/bash
# make coverage BUILD: line coverage per folder of src/ and tui/ on a
# --coverage build (gcov's counters, lcov's capture): every unit test, then
# the command tests that take the program from DSV41_BIN. Not in make test
# (it is a measurement, and slow); the figures go to BUILD/coverage.txt.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-coverage}
cd "$root" || exit 2
command -v lcov > /dev/null || { echo "coverage: lcov is missing (make test-deps installs it)" >&2; exit 2; }
lcov -q --zerocounters -d "$build"
tests/unit/run.sh "$build" > "$build/coverage-unit.log" 2>&1 || echo "coverage: a unit test failed (see $build/coverage-unit.log); counted anyway"
for t in cli/test_verify.sh cli/test_key.sh cli/test_units.sh hub/test_download.sh hub/test_assemble.sh \
         sim/test_client.sh pi/test_pi.sh; do
    DSV41_BIN=$root/$build/dsv41-top bash "tests/$t" > "$build/coverage-${t//\//_}.log" 2>&1 ||
        echo "coverage: $t failed (see $build/coverage-${t//\//_}.log); counted anyway"
done
lcov -q --capture -d "$build" -o "$build/coverage.info" 2> "$build/coverage-lcov.log" || {
    echo "coverage: lcov could not capture (see $build/coverage-lcov.log)" >&2; exit 1; }
# per folder: lines found and hit, counted from lcov's DA records (line,
# count); its LF/LH summaries are not always written
awk -v root="$root/" '
    /^SF:/ { f = substr($0, 4); sub(root, "", f); d = f; sub(/\/[^\/]*$/, "", d); keep = d ~ /^(src|tui)/ }
    keep && /^DA:/ { split(substr($0, 4), a, ","); lf[d]++; LF++; if (a[2] + 0 > 0) { lh[d]++; LH++ } }
    END {
        printf "%-16s %8s %8s %7s\n", "folder", "lines", "hit", "cover"
        for (d in lf) printf "%-16s %8d %8d %6.1f%%\n", d, lf[d], lh[d], 100 * lh[d] / lf[d] | "sort"
        close("sort")
        printf "%-16s %8d %8d %6.1f%%\n", "all", LF, LH, LF ? 100 * LH / LF : 0
    }' "$build/coverage.info" | tee "$build/coverage.txt"
