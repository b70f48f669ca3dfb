#!/bin/bash
# Launch beside the script era's: how long after the API's first answer the
# launch says ready, and the launch's own time beyond the simulator's boot,
# step by step, over BENCH_LAUNCHES (10) launches of both nodes; the first
# of them installs the guard on every node (a first launch of a build).
# Needs the test hosts up (make bench: tests/bench/run.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/it/lib.sh"
echo "== launch: ready noticed after the API first answers, and launch overhead (10 launches)"
model_skeleton
# the first launch finds no guard of this build (as on fresh test hosts)
rm -f "$IT_DIR/head/state/bin/dsv41-guard" "$IT_DIR/worker/state/bin/dsv41-guard"
on_host head podman rm -f -a -t 0 >/dev/null 2>&1
on_host worker podman rm -f -a -t 0 >/dev/null 2>&1
delays=() overheads=() s_plan=() s_guard=() s_ranks=() s_rest=()
for i in $(seq "${BENCH_LAUNCHES:-10}"); do
    top_head stop >/dev/null 2>&1
    t0=$(date +%s%3N)
    # each step's end as the launch says it: its plan (the survey done), the
    # last guard up, the last rank started, ready
    marks=$(top_head EXTRA_ENV=DSV41_SIM_BOOT_MS=2000 launch 2>&1 |
        while IFS= read -r l; do
            case $l in
                "launch: "*) echo "plan $(date +%s%3N)" ;;
                *"memory guard up"*) echo "guard $(date +%s%3N)" ;;
                "started dsv41-r"*) echo "ranks $(date +%s%3N)" ;;
                "ready after"*) echo "seen $(date +%s%3N)" ;;
            esac
        done)
    mark() { printf '%s\n' "$marks" | awk -v k="$1" '$1 == k { v = $2 } END { print v }'; }
    seen=$(mark seen)
    up=$(on_host head podman logs dsv41-r0 2>&1 | sed -n 's/.*Application startup complete. (t=\([0-9]*\)).*/\1/p')
    b0=$(on_host head podman logs dsv41-r0 2>&1 | sed -n 's/.*rank 0 of [0-9]*, t=\([0-9]*\)).*/\1/p')
    b1=$(on_host worker podman logs dsv41-r1 2>&1 | sed -n 's/.*rank 1 of [0-9]*, t=\([0-9]*\)).*/\1/p')
    if [ -z "$seen" ] || [ -z "$up" ] || [ -z "$b0" ] || [ -z "$b1" ]; then
        echo "launch $i did not complete"; continue
    fi
    # the simulator's boot counts from the LAST rank's start (each rank's
    # first log line, t= its clock): a rank started later than another is
    # launch's delay, not the boot's
    blast=$(( b0 > b1 ? b0 : b1 ))
    delays+=($((seen - up)))
    overheads+=($(( (seen - t0) - (up - blast) )))
    p=$(mark plan) g=$(mark guard) r=$(mark ranks)
    s_plan+=($((p - t0))) s_guard+=($((g - p))) s_ranks+=($((r - g)))
    s_rest+=($(( (blast - t0) - (r - t0) + (seen - up) )))
done
top_head stop >/dev/null 2>&1
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "median %d ms, max %d ms", a[int((NR+1)/2)], a[NR]}'; }
dmax=$(printf '%s\n' "${delays[@]}" | sort -n | tail -1)
omax=$(printf '%s\n' "${overheads[@]}" | sort -n | tail -1)
printf '%-44s %s   goal <= 1000 ms: %s\n' "ready noticed after the API answered" "$(stats "${delays[@]}")" \
    "$([ "${dmax:-99999}" -le 1000 ] && echo met || echo 'NOT met')"
printf '%-44s %s\n' "script-era launcher (polls every 15 s)" "expected median 7500 ms, max 15000 ms"
printf '%-44s %s   goal <= 1000 ms: %s\n' "launch overhead beyond the simulator's boot" "$(stats "${overheads[@]}")" \
    "$([ "${omax:-99999}" -le 1000 ] && echo met || echo 'NOT met')"
# in order: the first launch of a build installs the helpers on every node (sftp)
printf '%-44s %s\n' "  each launch's, in order (ms)" "${overheads[*]}"
# where it goes, step by step (medians): the program's start and the
# survey of every node; checks, preflight, state, stale ranks and guards;
# the ranks' `run`; the last rank's start to its first line and the API's
# first answer to ready said
printf '%-44s %s\n' "  to the plan (start, survey)" "$(stats "${s_plan[@]}")"
printf '%-44s %s\n' "  checks, preflight, state, stale, guards" "$(stats "${s_guard[@]}")"
printf '%-44s %s\n' "  the ranks started (run, every node at once)" "$(stats "${s_ranks[@]}")"
printf '%-44s %s\n' "  rank's first line, ready said" "$(stats "${s_rest[@]}")"

