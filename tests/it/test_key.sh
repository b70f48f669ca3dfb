#!/bin/bash
# `dsv41-top key --rotate --restart` against a launched deployment: the API
# answers the new key and refuses the old one, the key reached rank 0 from
# its file (not argv, not inspect). And why --restart restarts every rank:
# a worker's rank does not outlive rank 0. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

clean_ranks() {
    on_host head podman rm -f -a -t 0 >/dev/null 2>&1
    on_host worker podman rm -f -a -t 0 >/dev/null 2>&1
}
started() { on_host "$1" podman inspect -f '{{.State.StartedAt}}' "$2" 2>/dev/null; }
api_code() { # key
    on_host head curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" \
        http://127.0.0.1:8000/v1/models
}
FAST="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500"
key=$IT_DIR/head/state/api_key
rm -rf "$MODEL_SKELETON"
model_skeleton
clean_ranks

out=$(top_head "$FAST" launch 2>&1); rc=$?
check "launch: ready" eval '[ $rc -eq 0 ] && contains "$out" "ready after"'
OLD=$(cat "$key")
r0_before=$(started head dsv41-r0)
r1_before=$(started worker dsv41-r1)
check "the API answers the launch's key" [ "$(api_code "$OLD")" = 200 ]

# --- rotate without restart: the running rank keeps the old key ----------------------
out=$(top_head key --rotate 2>&1); rc=$?
MID=$(cat "$key")
check "rotate: exit 0, says rank 0 keeps the old key" eval '[ $rc -eq 0 ] && contains "$out" "a running rank 0 still answers the old key"'
check "rotate: the running rank 0 still answers the old key" [ "$(api_code "$OLD")" = 200 ]
check "rotate: ... and not yet the new one" [ "$(api_code "$MID")" = 401 ]
check "rotate: no rank restarted" eval '[ "$(started head dsv41-r0)" = "$r0_before" ] && [ "$(started worker dsv41-r1)" = "$r1_before" ]'

# --- rotate --restart --------------------------------------------------------------------
out=$(top_head "$FAST" key --rotate --restart 2>&1); rc=$?
NEW=$(cat "$key")
fp=$(top_head key 2>&1 | awk '$1 == "fingerprint" {print $2}')
check "rotate --restart: exit 0, ready" eval '[ $rc -eq 0 ] && contains "$out" "ready after"'
check "rotate --restart: the new fingerprint printed" eval '[ -n "$fp" ] && contains "$out" "fingerprint $fp"'
check "rotate --restart: says the workers restart too" contains "$out" "the workers' ranks too"
check "rotate --restart: the key never in its output" eval '! grep -qF -- "$NEW" <<< "$out" && ! grep -qF -- "$MID" <<< "$out"'
check "rotate --restart: the API answers the new key" [ "$(api_code "$NEW")" = 200 ]
check "rotate --restart: the API refuses the old one" [ "$(api_code "$OLD")" = 401 ]
check "rotate --restart: ... and the one before it" [ "$(api_code "$MID")" = 401 ]
check "rotate --restart: rank 0 restarted" eval '[ "$(started head dsv41-r0)" != "$r0_before" ]'
check "rotate --restart: the worker's rank restarted with it" eval '[ "$(started worker dsv41-r1)" != "$r1_before" ]'
inspect=$(on_host head podman inspect dsv41-r0)
check "rotate --restart: the new key not in podman inspect" eval '! grep -qF -- "$NEW" <<< "$inspect"'
check "rotate --restart: the new key not in any argv" eval '! grep -qaF -- "$NEW" /proc/[0-9]*/cmdline 2>/dev/null'
check "rotate --restart: rank 0's process read the new key from its file" eval 'grep -qa -- "VLLM_API_KEY=$NEW" /proc/$(on_host head podman inspect -f "{{.State.Pid}}" dsv41-r0)/environ'

# --- why not rank 0 alone: its worker does not outlive it --------------------------------
on_host head podman restart -t 1 dsv41-r0 >/dev/null 2>&1
for _ in $(seq 50); do
    [ "$(on_host worker podman inspect -f '{{.State.Running}}' dsv41-r1 2>/dev/null)" = false ] && break
    sleep 0.2
done
check "rank 0 restarted alone: the worker's rank exits" eval '[ "$(on_host worker podman inspect -f "{{.State.Running}}" dsv41-r1)" = false ]'
check "rank 0 restarted alone: the worker's NCCL communicator is gone" eval 'on_host worker podman logs dsv41-r1 2>&1 | grep -q "rank 0 is gone"'

top_head stop --now >/dev/null 2>&1
clean_ranks
# the next test starts from hosts without this one's deployment
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state/dsv41-r1.env" "$IT_DIR/worker/state/plans"
summary
