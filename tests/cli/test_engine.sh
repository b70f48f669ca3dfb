#!/bin/bash
# The engine module (src/container/engine*.c, src/util/http1*.c, jscan.c)
# against a real engine: podman's Docker-compatible API service on a socket
# of its own, with its own storage in a temporary directory (nothing of the
# test hosts' /tmp/dsv41-it or their namespaces is touched), a tiny image
# imported from a rootfs tarball (no registry). Through build/tests/engine-probe:
# inspect beside `podman container inspect` for the same container, a missing
# name, logs of both streams (and of a TTY container's raw stream), logs -f
# getting a line written after the call began, kill and stop, a socket that
# accepts and never answers (the deadline holds), no socket, a refused name.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
PROBE=${DSV41_ENGINE_PROBE:-$root/build/tests/engine-probe}
# PROBE_INSPECT_FORMAT (src/nodes/probe.h), as the runtime's CLI is given it
FMT='{{.Name}}|{{.State.Running}}|{{.State.Pid}}|{{.State.StartedAt}}|{{.State.ExitCode}}|{{.State.OOMKilled}}|{{.Image}}|{{index .Config.Labels "dsv41-top.managed"}}'
IMAGE=localhost/dsv41-engine-test:1

T=$(mktemp -d /tmp/dsv41-engine-test.XXXXXX)
SOCK=$T/podman.sock
svc=
cleanup() {
    set +e
    pm rm -f -a -t 0 >/dev/null 2>&1
    [ -n "$svc" ] && kill "$svc" 2>/dev/null && wait "$svc" 2>/dev/null
    # podman's overlay mounts must go before the files
    grep " $T/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

mkdir -p "$T/storage" "$T/run" "$T/tmp" "$T/rootfs/bin" "$T/rootfs/etc" "$T/rootfs/tmp"
cat > "$T/storage.conf" <<EOC
[storage]
driver = "overlay"
graphroot = "$T/storage"
runroot = "$T/run"
EOC
cat > "$T/containers.conf" <<EOC
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
tmp_dir = "$T/tmp"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOC
export CONTAINERS_CONF=$T/containers.conf CONTAINERS_STORAGE_CONF=$T/storage.conf
pm() { podman "$@"; }

# /bin/sh and sleep with their libraries: all a rank stand-in needs
cp /bin/dash "$T/rootfs/bin/sh"
cp /bin/sleep "$T/rootfs/bin/sleep"
for bin in /bin/dash /bin/sleep; do
    for lib in $(ldd "$bin" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}'); do
        mkdir -p "$T/rootfs$(dirname "$lib")"
        cp -L "$lib" "$T/rootfs$lib"
    done
done
echo "root:x:0:0:root:/root:/bin/sh" > "$T/rootfs/etc/passwd"
tar -C "$T/rootfs" -c . > "$T/rootfs.tar"
pm import "$T/rootfs.tar" "$IMAGE" > "$T/import.log" 2>&1 || { cat "$T/import.log"; exit 1; }

podman system service --time=0 "unix://$SOCK" > "$T/service.log" 2>&1 &
svc=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && "$PROBE" ping "$SOCK" 2>/dev/null && break; sleep 0.1; done
check "ping: the API service answers" "$PROBE" ping "$SOCK"

# a rank stand-in: a numbered line on stdout and on stderr every 0.3 s
LOOP='i=0; while :; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); sleep 0.3; done'
pm run -d --name dsv41-r0 --network none --label dsv41-top.managed=1 "$IMAGE" /bin/sh -c "$LOOP" >/dev/null
pm run -d -t --name dsv41-r1 --network none "$IMAGE" /bin/sh -c 'i=0; while :; do echo "tty $i"; i=$((i+1)); sleep 0.3; done' >/dev/null
sleep 1

same_as_cli() { # name: the API's inspect beside the CLI's, normalised alike
    local api cli
    api=$("$PROBE" inspect "$SOCK" "$1") || return 1
    cli=$("$PROBE" cli-line "$(pm container inspect -f "$FMT" "$1")") || return 1
    [ "$api" = "$cli" ] && [ -n "$api" ] && return 0
    echo "    API: $api" >&2
    echo "    CLI: $cli" >&2
    return 1
}
check "inspect (running, labelled): as the CLI says" same_as_cli dsv41-r0
check "inspect (no label, TTY): as the CLI says" same_as_cli dsv41-r1
out=$("$PROBE" inspect "$SOCK" dsv41-r0)
pid=$(pm container inspect -f '{{.State.Pid}}' dsv41-r0)
check "inspect: running, the PID, managed" eval '[[ "$out" == "dsv41-r0|1|$pid|"*"|1" ]] && [ "$pid" -gt 0 ]'
check "inspect: the PID is the container's sh" eval '[ "$(cat /proc/$pid/comm)" = sh ]'
out=$("$PROBE" inspect "$SOCK" dsv41-r1)
check "inspect: no label, not managed" eval '[[ "$out" == *"|0" ]]'

err=$("$PROBE" inspect "$SOCK" dsv41-r9 2>&1); rc=$?
check "inspect of a missing name: no such container (3)" eval '[ $rc = 3 ] && contains "$err" "no such container"'
err=$("$PROBE" logs "$SOCK" dsv41-r9 5 0 0 5000 2>&1); rc=$?
check "logs of a missing name: no such container (3)" eval '[ $rc = 3 ]'
err=$("$PROBE" kill "$SOCK" dsv41-r9 KILL 2>&1); rc=$?
check "kill of a missing name: no such container (3)" eval '[ $rc = 3 ]'
err=$("$PROBE" stop "$SOCK" dsv41-r9 1 2>&1); rc=$?
check "stop of a missing name: no such container (3)" eval '[ $rc = 3 ]'
err=$("$PROBE" inspect "$SOCK" '../containers/json' 2>&1); rc=$?
check "a name with a '/': refused before any request" eval '[ $rc = 1 ] && contains "$err" "only letters, digits"'

out=$("$PROBE" logs "$SOCK" dsv41-r0 6 0 0 5000); rc=$?
check "logs (tail 6): both streams, line by line" eval '[ $rc = 0 ] && grep -Eq "^1 out [0-9]+$" <<<"$out" && grep -Eq "^2 err [0-9]+$" <<<"$out" && [ $(wc -l <<<"$out") = 6 ]'
all=$("$PROBE" logs "$SOCK" dsv41-r0 -1 0 0 5000)
check "logs (all): from the first line on" eval 'grep -qx "1 out 0" <<<"$all" && grep -qx "2 err 0" <<<"$all"'
cli=$(pm logs dsv41-r0 2>/dev/null | head -4)
check "logs: the CLI's first lines alike" eval '[ "$(sed -n "s/^1 //p" <<<"$all" | head -2)" = "$(grep "^out" <<<"$cli" | head -2)" ]'
out=$("$PROBE" logs "$SOCK" dsv41-r1 3 0 0 5000); rc=$?
check "logs of a TTY container: the raw stream, as stream 1" eval '[ $rc = 0 ] && grep -Eq "^1 tty [0-9]+$" <<<"$out"'

last=$("$PROBE" logs "$SOCK" dsv41-r0 1 0 0 5000 | grep -o '[0-9]*$')
out=$("$PROBE" logs "$SOCK" dsv41-r0 0 1 1 20000); rc=$?
n=$(grep -o '[0-9]*$' <<<"$out")
check "logs -f (tail 0): a line written after the call began" eval '[ $rc = 0 ] && [ -n "$n" ] && [ "$n" -ge "$last" ]'

check "kill (KILL): accepted" "$PROBE" kill "$SOCK" dsv41-r0 KILL
for _ in $(seq 50); do [[ $("$PROBE" inspect "$SOCK" dsv41-r0) == dsv41-r0\|0\|* ]] && break; sleep 0.1; done
out=$("$PROBE" inspect "$SOCK" dsv41-r0)
check "after the kill: not running, exit code 137" eval '[[ "$out" == "dsv41-r0|0|0|"*"|137|0|"* ]]'
check "after the kill: inspect as the CLI says" same_as_cli dsv41-r0
err=$("$PROBE" kill "$SOCK" dsv41-r0 KILL 2>&1); rc=$?
check "kill of a stopped container: not running (4)" eval '[ $rc = 4 ]'
err=$("$PROBE" kill "$SOCK" dsv41-r0 'KILL&x=1' 2>&1); rc=$?
check "kill: a signal that is no name is refused" eval '[ $rc = 1 ] && contains "$err" "no signal name"'
out=$("$PROBE" logs "$SOCK" dsv41-r0 2 1 0 20000); rc=$?
check "logs -f of an exited container: ends with the log" eval '[ $rc = 0 ] && [ $(wc -l <<<"$out") = 2 ]'

pm start dsv41-r0 >/dev/null
# sh as PID 1 ignores SIGTERM: stop waits its 1 s, then kills
check "stop -t 1: done" "$PROBE" stop "$SOCK" dsv41-r0 1
out=$("$PROBE" inspect "$SOCK" dsv41-r0)
check "after stop: not running, exit code 137 (the kill after the grace)" eval '[[ "$out" == "dsv41-r0|0|0|"*"|137|"* ]]'
check "stop of a stopped container: fine (304)" "$PROBE" stop "$SOCK" dsv41-r0 1

# a stop the caller gives up on (Ctrl-C during `dsv41-top stop`): the cancel fd ends the wait
pm start dsv41-r0 >/dev/null
out=$("$PROBE" stop-cancel "$SOCK" dsv41-r0 60 300); rc=$?
took=$(grep -o 'after [0-9]* ms' <<<"$out" | grep -o '[0-9]*')
check "stop, cancelled: says interrupted (5)" eval '[ $rc = 5 ] && contains "$out" "interrupted"'
# bounded: far under the 60 s the engine would wait
check "stop, cancelled: the wait ends with the cancel (< 20 s)" eval '[ -n "$took" ] && [ "$took" -lt 20000 ]'
# remove: killed and gone at once (sh as PID 1 would hold a plain stop 10 s)
check "remove of a running container: done" "$PROBE" remove "$SOCK" dsv41-r0
err=$("$PROBE" inspect "$SOCK" dsv41-r0 2>&1); rc=$?
check "after remove: no such container" eval '[ $rc = 3 ] && ! pm container exists dsv41-r0'
err=$("$PROBE" remove "$SOCK" dsv41-r0 2>&1); rc=$?
check "remove of a missing name: no such container (3)" eval '[ $rc = 3 ]'
pm create --name dsv41-r8 --network none "$IMAGE" /bin/sh -c 'sleep 600' >/dev/null
check "remove of a created, never started container: done" "$PROBE" remove "$SOCK" dsv41-r8
check "after remove: the created one is gone" eval '! pm container exists dsv41-r8'

# bounded from outside too: a deadline that does not hold must fail here, not hang
out=$(timeout 60 "$PROBE" hang 300); rc=$?
check "a socket that never answers: both calls fail" eval '[ $rc = 0 ]'
check "a socket that never answers: \"timed out after 300 ms\"" contains "$out" "no answer: timed out after 300 ms"
took=$(grep -o 'after [0-9]* ms:' <<<"$out" | grep -o '[0-9]*' | sort -n | tail -1)
# not a timing assertion on a rate: only that the deadline bounds the call
check "a socket that never answers: the deadline holds (< 5 s)" eval '[ -n "$took" ] && [ "$took" -lt 5000 ]'
err=$("$PROBE" inspect "$T/none.sock" dsv41-r0 2>&1); rc=$?
check "no socket: a clear error" eval '[ $rc = 1 ] && contains "$err" "$T/none.sock: no such socket"'
: > "$T/plain-file"
err=$("$PROBE" inspect "$T/plain-file" dsv41-r0 2>&1); rc=$?
check "a file that is no socket: refused" eval '[ $rc = 1 ] && contains "$err" "$T/plain-file: connection refused"'
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
    # the socket is root's, 0600 (podman's own mode): a user without rights
    cp "$PROBE" "$T/probe-copy" && chmod 755 "$T" "$T/probe-copy"
    err=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$T/probe-copy" inspect \
        "$SOCK" dsv41-r0 2>&1); rc=$?
    check "no permission: says so, and what to do" eval '[ $rc = 1 ] && contains "$err" "permission denied: add the user to the docker group"'
fi
summary
