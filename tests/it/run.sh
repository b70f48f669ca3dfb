#!/bin/bash
# Integration tests: builds the two test hosts, runs every tests/it/test_*.sh
# against them, and tears everything down, also when a test fails or the run
# is interrupted. Needs root (namespaces, sshd, podman).
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
    echo "integration tests need root (network namespaces, sshd, podman)" >&2
    exit 1
fi
root=$(cd "$here/../.." && pwd)
trap '"$here/hosts.sh" down' EXIT INT TERM
"$here/hosts.sh" up || { echo "could not build the test hosts" >&2; exit 1; }
rc=0
# tests/tui: the console's screens, on the same hosts
# DSV41_IT_ONLY: space-separated file patterns (default: every test)
for t in $(for p in ${DSV41_IT_ONLY:-test_*.sh}; do echo "$here"/$p "$root"/tests/tui/$p; done); do
    [ -e "$t" ] || continue
    echo "== $(basename "$t")"
    t0=$SECONDS
    bash "$t" || rc=1
    echo "== $(basename "$t"): $((SECONDS - t0)) s"
    if [ -x "$root/build-thread/dsv41-top" ]; then
        echo "== $(basename "$t") (TSan build)"
        t0=$SECONDS
        DSV41_BIN=$root/build-thread/dsv41-top DSV41_SESSION=$root/build-thread/tests/it-session \
            TSAN_OPTIONS="halt_on_error=1 exitcode=66" bash "$t" || rc=1
        echo "== $(basename "$t") (TSan build): $((SECONDS - t0)) s"
    fi
done
echo "== integration tests: $SECONDS s in all"
exit $rc
