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
# The TSan round: the tests whose subject is our threads' concurrency (the
# console's and watch's monitor and pollers, the ssh I/O thread under drops
# and streams, launch/stop/copy on every node at once, cancellation across
# threads, the guard's threads). The rest (settings and quoting, one-shot
# probes, valgrind) run in the plain build only: the threads they use are
# the ones these drive. DSV41_IT_TSAN=all: every test twice.
tsan_round="test_copy.sh test_download_copy.sh test_engine_remote.sh test_guard.sh test_hang.sh
    test_interrupt.sh test_launch.sh test_status.sh test_stop.sh test_three.sh test_watch.sh
    test_console.sh test_soak.sh"
in_tsan_round() {
    [ "${DSV41_IT_TSAN:-}" = all ] && return 0
    local t
    for t in $tsan_round; do [ "$t" = "$1" ] && return 0; done
    return 1
}
# tests/tui: the console's screens, on the same hosts
# DSV41_IT_ONLY: space-separated file patterns (default: every test)
for t in $(for p in ${DSV41_IT_ONLY:-test_*.sh}; do echo "$here"/$p "$root"/tests/tui/$p; done); do
    [ -e "$t" ] || continue
    echo "== $(basename "$t")"
    t0=$SECONDS
    bash "$t" || rc=1
    echo "== $(basename "$t"): $((SECONDS - t0)) s"
    if [ -x "$root/build-thread/dsv41-top" ] && in_tsan_round "$(basename "$t")"; then
        echo "== $(basename "$t") (TSan build)"
        t0=$SECONDS
        DSV41_BIN=$root/build-thread/dsv41-top DSV41_SESSION=$root/build-thread/tests/it-session \
            TSAN_OPTIONS="halt_on_error=1 exitcode=66" bash "$t" || rc=1
        echo "== $(basename "$t") (TSan build): $((SECONDS - t0)) s"
    fi
done
echo "== integration tests: $SECONDS s in all"
exit $rc
