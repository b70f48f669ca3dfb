#!/bin/bash
# launch / status / logs / stop / restart across the test hosts with the
# simulator image, and every way a launch can fail. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

M=$MODEL_SKELETON
PLAN=J268-ho-v31-K5n.json
reset_model() {
    rm -rf "$M"
    model_skeleton
}
clean_ranks() {
    on_host head podman rm -f -a -t 0 >/dev/null 2>&1
    on_host worker podman rm -f -a -t 0 >/dev/null 2>&1
}
FAST="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500"
reset_model
clean_ranks
rm -rf "$IT_DIR/worker/state/dsv41-r1.env" "$IT_DIR/worker/state/plans"

# --- dry run changes nothing -----------------------------------------------------
rm -rf "$IT_DIR/head/state"
out=$(top_head "$FAST" launch --dry-run 2>&1); rc=$?
check "dry run: exit 0" [ $rc -eq 0 ]
check "dry run: the worker's full command" contains "$out" "podman run -d --name dsv41-r1 --label dsv41-top.managed=1"
check "dry run: rank 1 headless" contains "$out" "--node-rank 1 --headless"
check "dry run: the worker's own GID index" contains "$out" "NCCL_IB_GID_INDEX=5"
check "dry run: the head's own GID index" contains "$out" "NCCL_IB_GID_INDEX=3"
check "dry run: the key read from its file in the container" contains "$out" "# VLLM_API_KEY: read inside the container from $IT_DIR/head/state/api_key"
check "dry run: the key file mounted read-only" contains "$out" "$IT_DIR/head/state/api_key:/run/dsv41/api_key:ro"
check "dry run: no key file made" [ ! -e "$IT_DIR/head/state/api_key" ]
check "dry run: no container made" eval '[ -z "$(on_host worker podman ps -aq)" ]'

# --- quoted argument lists: a bad one stops launch before anything, a good one
# reaches the containers word for word --------------------------------------------
out=$(top_head "EXTRA=--override-generation-config '{\"temperature\": 0.6}" launch --dry-run 2>&1); rc=$?
check "quoting: an open quote stops the dry run" [ $rc -eq 2 ]
check "quoting: names the setting and the column" contains "$out" "column 30: the ' there is never closed"
check "quoting: ... and the setting" contains "$out" "EXTRA='--override-generation-config"
out=$(top_head "EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 'NO EQUALS'" launch 2>&1); rc=$?
check "quoting: an EXTRA_ENV word without NAME= stops launch" eval '[ $rc -eq 2 ] && printf "%s" "$out" | grep -q "word 2 is .NO EQUALS."'
out=$(top_head "EXTRA=--x \"" doctor 2>&1); rc=$?
check "quoting: doctor reports it too" eval '[ $rc -ne 0 ] && printf "%s" "$out" | grep -q "column 5: the \" there is never closed"'
check "quoting: nothing made" eval '[ ! -e "$IT_DIR/head/state/api_key" ] && [ -z "$(on_host worker podman ps -aq)" ]'
# the issue's own spelling: the JSON unquoted, one word to its matching }
QEXTRA='EXTRA=--override-generation-config {"temperature": 0.6}'
QENV="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 DSV41_QUOTED='two  words' \"DSV41_Q2=it's\""
out=$(top_head "$QEXTRA" "$QENV" launch --dry-run 2>&1); rc=$?
check "quoting: dry run prints the words to paste back" contains "$out" "--override-generation-config '{\"temperature\": 0.6}'"
check "quoting: dry run's env file, the value with its blanks" eval 'printf "%s\n" "$out" | grep -qx "DSV41_QUOTED=two  words"'
# --- a dry run with problems: the plan still printed, the problems after it, exit 1 ---
nothing_changed() { # what a dry run must leave as it was
    [ ! -e "$IT_DIR/head/state/api_key" ] && [ ! -e "$IT_DIR/head/state/dsv41-r0.env" ] &&
        [ ! -e "$IT_DIR/worker/state/dsv41-r1.env" ] && [ ! -e "$IT_DIR/worker/state/plans" ] &&
        [ -z "$(on_host worker podman ps -aq)" ] && [ -z "$(on_host head podman ps -aq)" ]
}
problems_after_plan() { # output: the plan's last rank comes before "problems ("
    local plan prob
    plan=$(printf '%s\n' "$1" | grep -n "^# worker (rank 1)" | head -n 1 | cut -d: -f1)
    prob=$(printf '%s\n' "$1" | grep -n "^problems (" | cut -d: -f1)
    [ -n "$plan" ] && [ -n "$prob" ] && [ "$plan" -lt "$prob" ]
}
# what an earlier test's launch left (test_key runs before this one) is not this dry run's
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state/dsv41-r1.env" "$IT_DIR/worker/state/plans"
clean_ranks
# the worker's sshd PATH has no docker: a CLI that is not there (and no engine socket
# asked in its place: the worker's podman would answer docker's API)
out=$(top_head "$FAST" RUNTIME=docker WORKER_RUNTIME_SOCKET=none launch --dry-run 2>&1); rc=$?
check "dry run, runtime CLI missing: exit 1" [ $rc -eq 1 ]
check "dry run, runtime CLI missing: both plans printed" eval 'printf "%s" "$out" | grep -q "^docker run -d --name dsv41-r0" && printf "%s" "$out" | grep -q "^docker run -d --name dsv41-r1"'
check "dry run, runtime CLI missing: listed after the plan" problems_after_plan "$out"
check "dry run, runtime CLI missing: named with its fix" contains "$out" "  - worker: container runtime docker: container runtime not found (install it or set RUNTIME)"
check "dry run, runtime CLI missing: nothing changed" nothing_changed
out=$(top_head "$FAST" WORKER_MODEL_DIR=$IT_DIR/worker/nomodel launch --dry-run 2>&1); rc=$?
check "dry run, model missing: exit 1" [ $rc -eq 1 ]
check "dry run, model missing: the worker's plan mounts it" contains "$out" "-v $IT_DIR/worker/nomodel:/model:ro"
check "dry run, model missing: each file listed after the plan" eval 'problems_after_plan "$out" && printf "%s\n" "$out" | grep -q "^  - worker: missing $IT_DIR/worker/nomodel/config.json"'
check "dry run, model missing: the fix" contains "$out" "    fix: dsv41-top copy-to-peer from the head"
check "dry run, model missing: the head is fine" eval '! printf "%s" "$out" | grep -q "  - head: missing"'
check "dry run, model missing: nothing changed" nothing_changed
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
out=$(top_head "$FAST" launch --dry-run 2>&1); rc=$?
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker
check "dry run, worker unreachable: exit 1" [ $rc -eq 1 ]
check "dry run, worker unreachable: the head's plan in full" contains "$out" "NCCL_IB_GID_INDEX=3"
check "dry run, worker unreachable: the worker's plan printed" contains "$out" "# worker (rank 1): $IT_DIR/worker/state/dsv41-r1.env"
check "dry run, worker unreachable: its address unknown, not made up" contains "$out" "VLLM_HOST_IP=unknown (worker unreachable)"
check "dry run, worker unreachable: its GID unknown" contains "$out" "NCCL_IB_GID_INDEX=unknown (worker unreachable)"
check "dry run, worker unreachable: the summary says so" contains "$out" "worker   fabric unknown (worker unreachable)"
check "dry run, worker unreachable: listed after the plan" eval 'problems_after_plan "$out" && printf "%s\n" "$out" | grep -q "^  - worker: unreachable: "'
check "dry run, worker unreachable: nothing changed" nothing_changed
out=$(top_head "$FAST" launch --dry-run 2>&1); rc=$?
check "dry run, all well again: exit 0" eval '[ $rc -eq 0 ] && ! printf "%s" "$out" | grep -q "^problems ("'

# --- "~/" in a worker's path is the worker account's home, not the head's HOME -----
FH=$IT_DIR/fishhome # dsv41fish's home (passwd), reached as worker-fish
HH=$IT_DIR/head-home-elsewhere
mkdir -p "$HH"
out=$(top_head "$FAST" WORKER=worker-fish HOME="$HH" MODEL_DIR='~/m' WORKER_STATE_DIR='~/st' launch --dry-run 2>&1); rc=$?
check "worker ~: the worker's model mount in its account's home" contains "$out" "-v $FH/m:/model:ro"
check "worker ~: the worker's env file there too" contains "$out" "# worker (rank 1): $FH/st/dsv41-r1.env"
check "worker ~: the head's own ~ is its HOME" contains "$out" "-v $HH/m:/model:ro"
check "worker ~: never the head's home on the worker" eval 'printf "%s\n" "$out" | grep -q "^podman run -d --name dsv41-r1" && ! printf "%s\n" "$out" | grep "^podman run -d --name dsv41-r1" | grep -q -- "$HH"'
check "worker ~: missing files named at the worker's path" contains "$out" "  - worker: missing $FH/m/config.json"
out=$(top_head WORKER=worker-fish HOME="$HH" MODEL_DIR="$M" WORKER_MODEL_DIR='~/copy' WORKER_STATE_DIR='~/st' copy-to-peer --dry-run --progress 0 2>&1)
check "worker ~: copy-to-peer copies to the worker's home" contains "$out" "to worker:$FH/copy/"
out=$(top_head WORKER=worker-fish HOME="$HH" MODEL_DIR="$M" WORKER_MODEL_DIR='~/nocopy' WORKER_STATE_DIR='~/st' verify --node worker 2>&1)
check "worker ~: verify --node hashes in the worker's home" contains "$out" "on worker in $FH/nocopy"
out=$(top_head WORKER=worker-fish HOME="$HH" WORKER_MODEL_DIR='~/m' config 2>&1)
check "worker ~: config shows it unexpanded, and what ~ means" contains "$out" "~/m (~ is the worker's home)"
rm -rf "$FH/copy" "$FH/st" "$HH"

# --- a worker of another CPU: no guard sent, no rank started ----------------------
# launch_faking TOOL BODY: a launch with the worker's TOOL a script of BODY (its
# sshd's PATH starts with $IT_DIR/bin); the output in out, the exit in rc
launch_faking() {
    printf '#!/bin/sh\n%s\n' "$2" > "$IT_DIR/bin/$1"
    chmod +x "$IT_DIR/bin/$1"
    out=$(top_head "$FAST" launch 2>&1); rc=$?
    rm -f "$IT_DIR/bin/$1"
}
# refused LABEL: that launch refused with exit 1, no rank started, nothing left in
# the worker's bin directory
refused() {
    check "$1: launch refused, exit 1" [ $rc -eq 1 ] || printf '%s\n' "$out" | tail -5
    check "$1: no rank started" eval 'case $out in *"started dsv41-r"*) false ;; esac'
    check "$1: nothing installed or left" eval '[ -z "$(ls "$IT_DIR/worker/state/bin" 2>/dev/null)" ]'
}
# (its uname -m says aarch64, as a Spark's does; the worker has no guard yet, so
# the guard's first round trip asks for its CPU: guards.c start_one; a copy whose
# send dropped 20 minutes ago is removed in that round trip)
rm -f "$IT_DIR/worker/state/bin/dsv41-guard"
mkdir -p "$IT_DIR/worker/state/bin"
touch -d '20 minutes ago' "$IT_DIR/worker/state/bin/dsv41-guard.new-0123456789ab"
launch_faking uname '[ "$1" = -m ] && echo aarch64 || exec /bin/uname "$@"'
refused "guard for another CPU"
check "guard for another CPU: both named, and the fix" contains "$out" \
    "worker is aarch64, but the helper dsv41-guard found next to this program is built for $(uname -m)"

# a copy that lands other than it was sent (a disk that loses writes sftp does not hear
# of; here the worker's sha256sum says so): removed, never renamed into place or started
launch_faking sha256sum 'echo "0000  -"'
refused "a damaged copy"
check "a damaged copy: said, with the question to ask" contains "$out" \
    "worker: cannot start the memory guard: the copy sent ($IT_DIR/worker/state/bin/dsv41-guard.new-"
check "a damaged copy: ...and why" contains "$out" "arrived with another sha256 and was removed: is that disk full or failing?"

# a copy another launch is sending now (a home shared by two nodes): left alone
fresh=$IT_DIR/worker/state/bin/dsv41-guard.new-00000000fe5h
touch "$fresh"

# --- launch -> ready -------------------------------------------------------------
out=$(top_head "$QEXTRA" "$QENV" launch 2>&1); rc=$?
check "launch: exit 0" [ $rc -eq 0 ]
check "launch: the guard sent, another's copy being sent left alone" eval '[ -x "$IT_DIR/worker/state/bin/dsv41-guard" ] && [ -e "$fresh" ]'
rm -f "$fresh"
args=$(on_host head podman inspect -f '{{json .Args}}' dsv41-r0)
check "quoting: the JSON one argument after its option in rank 0's command" eval 'printf "%s" "$args" | jq -e "(index(\"--override-generation-config\")) as \$i | \$i != null and .[\$i + 1] == \"{\\\"temperature\\\": 0.6}\"" >/dev/null'
for h in head:dsv41-r0 worker:dsv41-r1; do
    env=$(on_host "${h%%:*}" podman inspect -f '{{json .Config.Env}}' "${h#*:}")
    check "quoting: ${h#*:}'s environment has the values with blanks and a quote" eval 'printf "%s" "$env" | jq -e "index(\"DSV41_QUOTED=two  words\") != null and index(\"DSV41_Q2=it'"'"'s\") != null" >/dev/null'
done
# started at once (launch.c: start_one), said the last worker first, the head last
check "launch: both ranks started, said worker first" eval '[ "$(printf "%s\n" "$out" | grep -n "^started dsv41-r1 on worker" | cut -d: -f1)" -lt "$(printf "%s\n" "$out" | grep -n "^started dsv41-r0 on head" | cut -d: -f1)" ]'
# the image ids as each node's engine API gives them (preflight.c), as its CLI prints them
for h in head worker; do
    id=$(on_host "$h" podman image inspect -f '{{.Id}}' "$SIM_IMAGE" | cut -c1-24)
    check "launch: $h's image id said" contains "$out" "$(printf '  %-8s image id %s' "$h" "$id")"
done
check "launch: phases shown with elapsed time" contains "$out" "r0 head    loading weights"
check "launch: weights phase on the worker" contains "$out" "r1 worker  weights loaded"
check "launch: ready" contains "$out" "ready after"
check "launch: KV cache size from the log" contains "$out" "KV cache 2023717 tokens"
key=$IT_DIR/head/state/api_key
check "key: created 0600" [ "$(stat -c %a "$key")" = 600 ]
check "key: 43 URL-safe characters" eval '[ "$(tr -d "\n" < "$key" | grep -cE "^[A-Za-z0-9_-]{43}$")" = 1 ]'
K=$(cat "$key")
check "key: not in argv of any process" eval '! grep -qa -- "$K" /proc/[0-9]*/cmdline 2>/dev/null'
inspect=$(on_host head podman inspect dsv41-r0)
check "key: not anywhere in podman inspect of rank 0 (command, env, mounts)" eval '! printf "%s" "$inspect" | grep -q -- "$K"'
check "key: inspect shows the key file's path, mounted read-only" contains "$inspect" '"Destination": "/run/dsv41/api_key"'
check "key: no VLLM_API_KEY in rank 0's environment as inspect sees it" eval '! printf "%s" "$inspect" | grep -q "\"VLLM_API_KEY="'
check "key: the rank's process has it (read from the file)" eval 'grep -qa -- "VLLM_API_KEY=$K" /proc/$(on_host head podman inspect -f "{{.State.Pid}}" dsv41-r0)/environ'
check "key: rank 0's env file 0600" [ "$(stat -c %a "$IT_DIR/head/state/dsv41-r0.env")" = 600 ]
check "key: not in rank 0's env file" eval '! grep -q -- "$K" "$IT_DIR/head/state/dsv41-r0.env"'
check "key: not in the worker's env file" eval '! grep -q -- "$K" "$IT_DIR/worker/state/dsv41-r1.env"'
check "env file: the worker's fabric address" contains "$(cat "$IT_DIR/worker/state/dsv41-r1.env")" "VLLM_HOST_IP=$WORKER_IP"
check "plan: rewritten on the worker" contains "$(cat "$IT_DIR/worker/state/plans/$PLAN")" '"qdir":"/model/exl3/qn:/model/exl3/q31:/model/exl3/q31s"'
check "plan: rewritten on the head" contains "$(cat "$IT_DIR/head/state/plans/$PLAN")" '/model/exl3/q31s'
code=$(on_host head curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $K" http://127.0.0.1:8000/v1/models)
check "the API answers with the key" [ "$code" = 200 ]
labels=$(on_host worker podman inspect -f '{{index .Config.Labels "dsv41-top.managed"}}' dsv41-r1)
check "the rank is labelled as ours" [ "$labels" = 1 ]

out=$(top_head status 2>&1); rc=$?
check "status after launch: all well" [ $rc -eq 0 ]
check "status: uptime of the worker's rank" contains "$out" "dsv41-r1 running pid"
check "status: uptime shown" contains "$out" " up 0h00m"

out=$(top_head logs r1 2>&1); rc=$?
check "logs r1: the worker's rank" contains "$out" "headless rank 1 ready"
out=$(top_head logs --tail 1 2>&1)
check "logs: both ranks, prefixed" eval 'printf "%s" "$out" | grep -q "^r0| " && printf "%s" "$out" | grep -q "^r1| "'
out=$(timeout 3 bash -c "$(declare -f on_host top_head head_env); IT_DIR=$IT_DIR NS_PREFIX=$NS_PREFIX BIN=$BIN IT_ROOT=$IT_ROOT SIM_IMAGE=$SIM_IMAGE top_head logs r0 -f" 2>&1)
check "logs -f: follows until stopped" contains "$out" "Application startup complete."

# --- a second launch refuses; --force replaces --------------------------------------
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "second launch: refused" [ $rc -eq 1 ]
check "second launch: says why and what to do" contains "$out" "already running and answering"
out=$(top_head "$FAST" launch --force 2>&1); rc=$?
check "launch --force: replaces the running deployment" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "ready after"'

# --- a stale rank left running is replaced ------------------------------------------------
on_host worker podman kill dsv41-r1 >/dev/null # r0 stays up, answering but wedged
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "stale rank: replaced without --force" [ $rc -eq 0 ]
check "stale rank: said" contains "$out" "replacing 1 rank(s) left from an earlier launch"

# --- the memory budget: what the last boot logged decides the next launch -------------------
check "budget: each node's boot recorded" eval 'jq -e ".head.weights_gib == 0.61 and .worker.graphs_gib == 0.31" "$IT_DIR/head/state/budget.json" >/dev/null'
check "budget: its record 0600" [ "$(stat -c %a "$IT_DIR/head/state/budget.json")" = 600 ]
check "budget: launch said it fits" contains "$out" "worker: memory budget: weights 0.6 (last boot's log)"
# ranks that log a Spark's weights (61 GiB) on a test host of ~24 GiB
out=$(top_head "EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 DSV41_SIM_WEIGHTS_GIB=61.37" launch --force 2>&1); rc=$?
check "budget: a boot logging 61 GiB recorded" eval '[ $rc -eq 0 ] && jq -e ".worker.weights_gib == 61.37" "$IT_DIR/head/state/budget.json" >/dev/null'
top_head stop >/dev/null 2>&1
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "budget: launch refuses what does not fit" [ $rc -eq 1 ]
check "budget: says by how much and what to lower" contains "$out" "does NOT fit in"
check "budget: names the way out" contains "$out" "spread the model over more nodes (TP)"
check "budget: refused, and says --force" contains "$out" "refusing to launch: the ranks would not fit in memory on 2 node(s)"
check "budget: no rank started" eval '[ -z "$(on_host worker podman ps -q)" ] && [ -z "$(on_host head podman ps -q)" ]'
out=$(top_head "$FAST" doctor 2>&1)
check "budget: doctor fails the node's budget" eval 'printf "%s\n" "$out" | grep -q "^FAIL worker memory budget: weights 61.4"'
out=$(top_head "$FAST" launch --force 2>&1); rc=$?
check "budget: --force launches anyway, and the new boot is recorded" eval '[ $rc -eq 0 ] && jq -e ".worker.weights_gib == 0.61" "$IT_DIR/head/state/budget.json" >/dev/null'

# --- restart --------------------------------------------------------------------------
out=$(top_head "$FAST" restart 2>&1); rc=$?
check "restart: stops, then launches" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "stopped dsv41-r0 on head" && printf "%s" "$out" | grep -q "ready after"'

# --- status while booting shows each rank's phase; a timeout fails the launch -------------
top_head stop >/dev/null 2>&1
top_head EXTRA_ENV=DSV41_SIM_BOOT_MS=6000 launch --timeout 3 >"$IT_DIR/slow.log" 2>&1 &
lp=$!
for _ in $(seq 100); do grep -q "^started dsv41-r0 on head" "$IT_DIR/slow.log" && break; sleep 0.1; done
sleep 0.5
out=$(top_head status 2>&1)
check "status while booting: the phase of a rank" contains "$out" "phase: "
wait $lp; rc=$?
out=$(cat "$IT_DIR/slow.log")
check "timeout: launch fails" [ $rc -eq 1 ]
check "timeout: says so" contains "$out" "the API did not answer within 3 s"

# --- stop, idempotent ------------------------------------------------------------------
out=$(top_head stop 2>&1); rc=$?
check "stop: exit 0" [ $rc -eq 0 ]
check "stop: both ranks" eval 'printf "%s" "$out" | grep -q "stopped dsv41-r0 on head" && printf "%s" "$out" | grep -q "stopped dsv41-r1 on worker"'
out=$(top_head stop 2>&1); rc=$?
check "stop again: nothing to do, exit 0" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -qx "no ranks running"'
check "stop: no containers left" eval '[ -z "$(on_host worker podman ps -aq)" ] && [ -z "$(on_host head podman ps -aq)" ]'

# --- a rank that dies during startup ---------------------------------------------------------
out=$(top_head EXTRA_ENV="DSV41_SIM_BOOT_MS=1500 DSV41_SIM_DIE_AT=3 DSV41_SIM_DIE_RANK=1" launch 2>&1); rc=$?
check "rank dies: launch fails" [ $rc -eq 1 ]
check "rank dies: names rank, node and phase" eval 'printf "%s" "$out" | grep -q "^launch failed: r1 on worker .* during weights loaded"'
check "rank dies: the fatal line in the reason" eval 'printf "%s" "$out" | grep -q "^launch failed: .*RuntimeError: simulated failure of rank 1"'
check "rank dies: the worker's last lines" contains "$out" "---- last"
check "rank dies: the traceback shown" contains "$out" "RuntimeError: simulated failure of rank 1"
check "rank dies: the head's lines too" contains "$out" "lines of dsv41-r0 on head"
check "rank dies: the other rank is stopped" eval '[ "$(on_host head podman inspect -f "{{.State.Running}}" dsv41-r0)" = false ]'
out=$(top_head EXTRA_ENV="DSV41_SIM_BOOT_MS=1500 DSV41_SIM_DIE_AT=5 DSV41_SIM_DIE_RANK=0 DSV41_SIM_DIE_QUIET=1" launch 2>&1); rc=$?
check "rank exits quietly: launch fails" [ $rc -eq 1 ]
check "rank exits quietly: exit code and phase" contains "$out" "launch failed: r0 on head exited during sizing KV cache (exit code 3)"

# --- a container of that name that is not ours -------------------------------------------------
clean_ranks
on_host worker podman run -d --name dsv41-r1 "$SIM_IMAGE" vllm serve /model >/dev/null 2>&1 || true
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "foreign container: refused" [ $rc -eq 1 ]
check "foreign container: named" contains "$out" "worker: a container named dsv41-r1 exists that dsv41-top did not start"
out=$(top_head stop 2>&1)
check "foreign container: stop leaves it" contains "$out" "was not started by dsv41-top: left alone"
out=$(top_head "$FAST" launch --force 2>&1); rc=$?
check "foreign container: --force replaces it" [ $rc -eq 0 ]
top_head stop >/dev/null 2>&1

# --- failures ---------------------------------------------------------------------------------
out=$(top_head "$FAST" WORKER=root@$WORKER_IP:2222 launch 2>&1); rc=$?
check "worker unreachable: refused" [ $rc -eq 1 ]
check "worker unreachable: named" contains "$out" "worker: unreachable: worker: cannot connect to $WORKER_IP port 2222"
out=$(top_head "$FAST" WORKER_MODEL_DIR=$IT_DIR/worker/nomodel launch 2>&1); rc=$?
check "model missing on one node: refused" [ $rc -eq 1 ]
check "model missing: names node and file" contains "$out" "worker: missing $IT_DIR/worker/nomodel/config.json"
check "model missing: the fix" contains "$out" "fix: dsv41-top copy-to-peer"
check "model missing: nothing started" eval '[ -z "$(on_host worker podman ps -aq)" ]'
out=$(top_head "$FAST" IMG=localhost/dsv41-no-such-image:1 launch 2>&1); rc=$?
check "image missing, pull fails: refused" [ $rc -eq 1 ]
check "image missing: pulling said" contains "$out" "image localhost/dsv41-no-such-image:1 missing: pulling"
check "image missing: the pull's own lines shown" contains "$out" "head: pull: "
check "image missing: pull failure named" contains "$out" "cannot pull localhost/dsv41-no-such-image:1"
# without an engine socket the CLI asks, in preflight's round trip
out=$(top_head "$FAST" RUNTIME_SOCKET=none WORKER_RUNTIME_SOCKET=none IMG=localhost/dsv41-no-such-image:1 launch 2>&1); rc=$?
check "image missing, no engine socket: the CLI finds it missing" eval '[ $rc -eq 1 ] && contains "$out" "image localhost/dsv41-no-such-image:1 missing: pulling"'

on_host head nc -lk 0.0.0.0 8000 </dev/null >/dev/null 2>&1 &
ncp=$!; sleep 0.3
out=$(top_head "$FAST" launch 2>&1); rc=$?
kill_in_ns head nc; wait $ncp 2>/dev/null
check "port in use: refused" [ $rc -eq 1 ]
check "port in use: named" contains "$out" "head: port 8000 is in use by another program"
# one rank's start fails while the others start beside it (launch.c: start_one):
# the head's `podman run` refused by a wrapper first on its PATH (every other
# podman call goes through), and the worker's rank, started at the same
# time, is stopped again
W=$(mktemp -d /tmp/dsv41-it-podman.XXXXXX)
printf '#!/bin/sh\n[ "$1" = run ] && { echo "Error: refused by the test" >&2; exit 125; }\nexec %s "$@"\n' \
    "$(command -v podman)" > "$W/podman"
chmod +x "$W/podman"
out=$(top_head "$FAST" "PATH=$W:$PATH" launch 2>&1); rc=$?
rm -rf "$W"
check "a rank's start fails: refused" [ $rc -eq 1 ]
check "a rank's start fails: named" contains "$out" "head: starting dsv41-r0 failed: Error: refused by the test"
check "a rank's start fails: the worker's, started beside it, stopped (its log kept)" \
    eval '[ -z "$(on_host worker podman ps -q --filter name=dsv41-r1)" ]'
out=$(top_head "$FAST" PLAN_NAME=missing.json launch 2>&1); rc=$?
check "plan missing: refused and named" eval '[ $rc -eq 1 ] && printf "%s" "$out" | grep -q "worker: missing $M/exl3/plan/missing.json"'
echo '{"qdir": ' > "$M/exl3/plan/$PLAN"
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "plan malformed: refused" [ $rc -eq 1 ]
check "plan malformed: named" contains "$out" "plan $M/exl3/plan/$PLAN is not a JSON object"
reset_model
chmod 644 "$key"
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "key world-readable: refused" [ $rc -eq 1 ]
check "key world-readable: the fix" contains "$out" "readable by others (mode 644): run chmod 600 $key"
check "key world-readable: left as it was" [ "$(stat -c %a "$key")" = 644 ]
chmod 600 "$key"
clean_ranks
summary
