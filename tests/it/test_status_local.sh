#!/bin/bash
# `status` of the head starts no process for the head (issue #18): with the
# ranks running and podman's API socket there, `strace -f -e trace=execve`
# of status sees one execve, status's own; the head's alike values (kernel,
# driver, image id, CUDA, the rank's NCCL and its sha256), its unit's state,
# the guard, the rank's phase from its log while the API is not answering,
# and the fabric drift from the rank's env file are those the script path
# gives (RUNTIME_SOCKET=none: the CLI and the shell scripts), which starts
# processes. Needs the hosts of hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
T=$(mktemp -d /tmp/dsv41-status-local.XXXXXX)
trap 'top_head stop --now >/dev/null 2>&1; stop_test_guards; rm -rf "$T"' EXIT
model_skeleton
M=$MODEL_SKELETON
stop_test_guards
for h in $HOSTS; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state"
mkdir -p "$M/nccl/r0" "$M/nccl/r1"
head -c 65536 /dev/urandom > "$M/nccl/r0/libnccl.so.2"
head -c 65536 /dev/urandom > "$M/nccl/r1/libnccl.so.2"
# the head's own sysfs tree: its GID is renumbered below
SYS=$T/sysfs-head
cp -a "$IT_ROOT/tests/fixtures/sysfs/spark-head" "$SYS"
E=(DSV41_SYS_ROOT="$SYS")
out=$(top_head "${E[@]}" "EXTRA_ENV=DSV41_SIM_BOOT_MS=300 DSV41_SIM_NCCL_DIR=/model/nccl" launch 2>&1); rc=$?
check "launch: ranks up" eval '[ $rc = 0 ]' || printf '%s\n' "$out" | tail -5 >&2

# status under strace; $1: a name for its files, the rest VAR=value for it
traced() {
    local name=$1 envs=()
    shift
    while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
    # shellcheck disable=SC2046
    on_host head env $(head_env) "${E[@]}" "${envs[@]}" strace -f -qq -e trace=execve \
        -o "$T/$name.trace" "$BIN" "$@" > "$T/$name.out" 2>"$T/$name.err"
}
execs() { grep -c 'execve(.*) = 0' "$T/$1.trace"; }
named() { grep 'execve(.*) = 0' "$T/$1.trace" | sed 's/.*execve("\([^"]*\)".*/\1/' | sort | uniq -c | tr '\n' ';'; }
keys='.nodes[0] | {alike, unit: .guard.unit, guard: .guard.running, containers: [.containers[] | {name, running, pid}]}'

traced direct status --json
n=$(execs direct)
check "status --json: one execve, status's own (the head's part starts nothing): $(named direct)" \
    eval '[ "$n" = 1 ]'
check "status --json: answered" jq -e '.nodes[0].containers[0].running == true' "$T/direct.out"
check "status: the head's NCCL found in its rank's map, hashed here" jq_is "$(cat "$T/direct.out")" \
    '.nodes[0].alike.nccl_sha256' "$(sha256sum < "$M/nccl/r0/libnccl.so.2" | cut -d' ' -f1)"
check "status: the head's image id as podman's CLI prints it" jq_is "$(cat "$T/direct.out")" \
    '.nodes[0].alike.image_id' "$(on_host head podman image inspect -f '{{.Id}}' "$SIM_IMAGE")"
traced script RUNTIME_SOCKET=none status --json
check "the script path starts processes (this test can tell): $(named script)" \
    eval '[ "$(execs script)" -gt 3 ]'
a=$(jq -S "$keys" "$T/direct.out"); b=$(jq -S "$keys" "$T/script.out")
check "the head's alike, unit, guard and rank: the same both ways" eval '[ -n "$a" ] && [ "$a" = "$b" ]' ||
    diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") >&2
check "... with the kernel, the image and NCCL known (no driver on the test hosts: null both ways)" eval \
    'printf "%s" "$a" | jq -e ".alike.kernel and .alike.image_id and .alike.nccl_path and .alike.driver == null" >/dev/null'

# no systemd on the test hosts: the head's unit from its files reads as the
# worker's from systemctl (the script; the hosts share one filesystem)
check "the head's unit, from files, as the worker's script says it" eval \
    '[ "$(jq -c ".nodes[0].guard.unit" "$T/direct.out")" = "$(jq -c ".nodes[1].guard.unit" "$T/direct.out")" ]'

# the rank's phase from its log's tail while the API does not answer
traced direct_tail API_URL=http://127.0.0.1:1 status --json
traced script_tail API_URL=http://127.0.0.1:1 RUNTIME_SOCKET=none status --json
pa=$(jq -r '.nodes[0].phase // empty' "$T/direct_tail.out")
pb=$(jq -r '.nodes[0].phase // empty' "$T/script_tail.out")
check "API down: the head's phase from the socket's log, as the CLI's ($pa)" eval '[ -n "$pa" ] && [ "$pa" = "$pb" ]'
check "API down: still one execve" eval '[ "$(execs direct_tail)" = 1 ]' || named direct_tail >&2

# the head's fabric renumbered under its running rank: drift read from its env file here
# (every port's RoCE v2 IPv4 GID moves to index 7, as a network re-apply may do)
moved=0
for P in "$SYS"/class/infiniband/*/ports/1; do
    for g in "$P"/gids/*; do
        i=${g##*/}
        case $(cat "$g") in 0000:0000:0000:0000:0000:ffff:*) ;; *) continue ;; esac
        [ "$(cat "$P/gid_attrs/types/$i")" = "RoCE v2" ] || continue
        cp "$g" "$P/gids/7"
        cp "$P/gid_attrs/ndevs/$i" "$P/gid_attrs/ndevs/7"
        echo "RoCE v2" > "$P/gid_attrs/types/7"
        echo "IB/RoCE v1" > "$P/gid_attrs/types/$i"
        moved=$((moved + 1))
        break
    done
done
check "the head's RoCE v2 IPv4 GIDs renumbered ($moved ports)" eval '[ "$moved" -gt 0 ]'
traced direct_drift status
traced script_drift RUNTIME_SOCKET=none status
d=$(grep "the fabric changed since rank r0 started" "$T/direct_drift.out")
check "drift: the head's fabric changed since its rank started, from its env file" \
    eval '[ -n "$d" ] && grep -qF -- "$d" "$T/script_drift.out"' || head -40 "$T/direct_drift.out" >&2
check "drift: still one execve" eval '[ "$(execs direct_drift)" = 1 ]' || named direct_drift >&2
summary
