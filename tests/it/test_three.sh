#!/bin/bash
# Three nodes: WORKERS=worker,worker2, rank i on node i, TP 3.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

model_skeleton
for h in $HOSTS; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
# WORKER_RUNTIME_SOCKET=none: the hosts share one filesystem, and the one
# setting would send worker2 to the worker's engine
T="WORKERS=worker,worker2 WORKER_RUNTIME_SOCKET=none EXTRA_ENV=DSV41_SIM_BOOT_MS=1500"

# shellcheck disable=SC2086
out=$(top_head $T launch --dry-run 2>&1); rc=$?
check "3 nodes: dry run" [ $rc -eq 0 ]
check "3 nodes: TP 3" contains "$out" "launch: 3 nodes, TP 3 x PP 1"
check "3 nodes: rank 2 on worker2" contains "$out" "# worker2 (rank 2)"
check "3 nodes: worker2's address" contains "$out" "VLLM_HOST_IP=$WORKER2_IP"
# shellcheck disable=SC2086
out=$(top_head $T launch 2>&1); rc=$?
check "3 nodes: launch ready" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "ready after"'
check "3 nodes: workers first, last worker first" eval 'printf "%s\n" "$out" | grep "^started" | tr "\n" " " | grep -q "started dsv41-r2 on worker2 started dsv41-r1 on worker started dsv41-r0 on head"'
check "3 nodes: rank 2 runs on worker2" [ "$(on_host worker2 podman inspect -f '{{.State.Running}}' dsv41-r2)" = true ]
check "3 nodes: rank 2 joined the group" contains "$(on_host worker2 podman logs dsv41-r2 2>&1)" "rank 2 joined the group at $HEAD_IP:29655"
# shellcheck disable=SC2086
json=$(top_head $T status --json 2>&1); rc=$?
check "3 nodes: status all well" [ $rc -eq 0 ]
check "3 nodes: status lists worker2" [ "$(printf '%s' "$json" | jq -r '.nodes[2].name + " " + .nodes[2].hostname')" = "worker2 spark-worker2" ]
check "3 nodes: worker2's rank" [ "$(printf '%s' "$json" | jq -r '.nodes[2].containers[0].name')" = dsv41-r2 ]
# shellcheck disable=SC2086
out=$(top_head $T logs r2 --tail 1 2>&1)
check "3 nodes: logs r2" contains "$out" "headless rank 2 ready"
# shellcheck disable=SC2086
out=$(top_head $T stop 2>&1); rc=$?
check "3 nodes: stop removes all three" eval '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | grep -c "^stopped")" = 3 ]'
summary
