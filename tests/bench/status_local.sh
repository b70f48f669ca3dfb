#!/bin/bash
# `status` of the local node alone (WORKER= : the head only) with both ranks
# up and the API answering, two ways in one run: direct (podman's API
# socket, the files, NVML where it is) and the CLI path as before issue #18
# (RUNTIME_SOCKET=none, DSV41_NVML_LIB pointing nowhere: the runtime's CLI
# and the shell scripts). Per way: the median wall time, the CPU of status
# with its children (user+sys, from wait4 through /usr/bin/time), and the
# processes one status starts (strace -f, its own exec not counted). Figures,
# not pass/fail; the issue's goal is 0 processes. Needs hosts.sh up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/it/lib.sh"
require_hosts
N=${BENCH_STATUS_LOCAL_N:-20}
T=$(mktemp -d /tmp/dsv41-bench-status-local.XXXXXX)
trap 'rm -rf "$T"' EXIT

# both ranks up, as run.sh's status figures have them
KEY=bench-$$
mkdir -p "$IT_DIR/head/state"
printf '%s' "$KEY" > "$IT_DIR/head/state/api_key"; chmod 600 "$IT_DIR/head/state/api_key"
printf 'VLLM_API_KEY=%s\n' "$KEY" > "$IT_DIR/head/rank0.env"; chmod 600 "$IT_DIR/head/rank0.env"
on_host head podman rm -f -t 0 dsv41-r0 >/dev/null 2>&1
on_host worker podman rm -f -t 0 dsv41-r1 >/dev/null 2>&1
A="vllm serve /model --served-model-name deepseek-v4.1-flash --tensor-parallel-size 2 --nnodes 2 --master-addr $HEAD_IP --master-port 29655"
# shellcheck disable=SC2086
on_host worker podman run -d --name dsv41-r1 --network host -e DSV41_SIM_BOOT_MS=100 "$SIM_IMAGE" $A --node-rank 1 --headless >/dev/null
# shellcheck disable=SC2086
on_host head podman run -d --name dsv41-r0 --network host --env-file "$IT_DIR/head/rank0.env" -e DSV41_SIM_BOOT_MS=100 "$SIM_IMAGE" $A --node-rank 0 --port 8000 >/dev/null
for _ in $(seq 100); do on_host head curl -sf -o /dev/null http://127.0.0.1:8000/health && break; sleep 0.1; done

DIRECT=(WORKER=)
CLI=(WORKER= RUNTIME_SOCKET=none DSV41_NVML_LIB=/nonexistent/libnvidia-ml.so.1)
run_status() { # name envs... : N timed runs, then one under strace
    local name=$1
    shift
    : > "$T/$name.times"
    : > "$T/$name.wall"
    local t0 t1
    for _ in $(seq "$N"); do
        t0=$(date +%s%N)
        # shellcheck disable=SC2046
        on_host head env $(head_env) "$@" /usr/bin/time -a -o "$T/$name.times" -f 'cpu %U %S' \
            "$BIN" status >/dev/null 2>&1
        t1=$(date +%s%N)
        echo $(( (t1 - t0) / 1000 )) >> "$T/$name.wall"
    done
    # shellcheck disable=SC2046
    on_host head env $(head_env) "$@" strace -f -qq -e trace=execve -o "$T/$name.trace" \
        "$BIN" status >/dev/null 2>&1
}
figures() { # name -> "median W ms, CPU C ms (own + children), P processes (names)"
    local med cpu procs names
    # wall from outside (ip netns exec and env included, the same both ways); the
    # CPU lines are time's own (it adds "Command exited with non-zero status" lines)
    med=$(sort -n "$T/$1.wall" | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}')
    cpu=$(awk '$1 == "cpu" {s += $2 + $3; n++} END {printf "%.1f", n ? s / n * 1000 : 0}' "$T/$1.times")
    procs=$(( $(grep -c 'execve(.*) = 0' "$T/$1.trace") - 1 ))
    names=$(grep 'execve(.*) = 0' "$T/$1.trace" | tail -n +2 | sed 's/.*execve("\([^"]*\)".*/\1/' |
        xargs -r -n1 basename | sort | uniq -c | awk '{printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1}')
    printf 'median %5s ms, CPU %6s ms (own + children), %2d processes%s' "$med" "$cpu" "$procs" \
        "${names:+ ($names)}"
}
run_status direct "${DIRECT[@]}"
run_status cli "${CLI[@]}"
echo "== status of the local node alone (head, ranks up), $N runs each: direct vs the CLI path"
printf '%-44s %s\n' "direct: API socket, files, NVML" "$(figures direct)"
printf '%-44s %s\n' "CLI path: RUNTIME_SOCKET=none, no NVML" "$(figures cli)"
p=$(( $(grep -c 'execve(.*) = 0' "$T/direct.trace") - 1 ))
printf '%-44s goal 0 processes: %s\n' "" "$([ "$p" = 0 ] && echo met || echo 'NOT met')"
