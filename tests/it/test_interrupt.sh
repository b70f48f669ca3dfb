#!/bin/bash
# launch interrupted by SIGINT and SIGTERM at its steps: before the old
# ranks stop nothing changes (the running deployment keeps answering, the
# same containers); during the image pull the pull is stopped on the node;
# once the new ranks start, the ranks it started are stopped and none is
# left half-started. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

FAST="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500"
LOG=$IT_DIR/interrupt.log
clean_ranks() {
    on_host head podman rm -f -a -t 0 >/dev/null 2>&1
    on_host worker podman rm -f -a -t 0 >/dev/null 2>&1
}
# Sends a signal to the launch running on the head (the test's wrapper
# processes would not pass it on).
signal_cmd() { # SIG COMMAND: the dsv41-top running COMMAND on the head
    local p
    for p in $(ip netns pids "$NS_HEAD" 2>/dev/null); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dsv41-top ] &&
            tr '\0' ' ' < "/proc/$p/cmdline" | grep -q " $2" && kill "-$1" "$p"
    done
}
signal_launch() { signal_cmd "$1" launch; }
# Waits up to $2 s for a line matching the pattern in the launch's log.
wait_log() { # pattern seconds
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        grep -q -- "$1" "$LOG" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "    no '$1' in the launch's output after $2 s:" >&2
    sed 's/^/    | /' "$LOG" >&2
    return 1
}
ids() { # the running ranks' container ids, both hosts
    on_host head podman ps -q --filter name=dsv41-r --no-trunc
    on_host worker podman ps -q --filter name=dsv41-r --no-trunc
}
api_code() {
    on_host head curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$IT_DIR/head/state/api_key")" http://127.0.0.1:8000/v1/models
}
none_running() { [ -z "$(ids)" ]; }

model_skeleton
clean_ranks
out=$(top_head "$FAST" launch 2>&1); rc=$?
check "a deployment runs to interrupt the next launch of" [ $rc -eq 0 ]
before=$(ids)

# --- during the pull: stopped on the node, nothing else changes ------------------
# An image the head has and the worker must pull from a registry whose
# packets vanish: the pull hangs as one on a slow link does.
NEWIMG=$HEAD_IP:5999/dsv41/hang:1
on_host head podman tag "$SIM_IMAGE" "$NEWIMG"
on_host worker iptables -I OUTPUT -p tcp --dport 5999 -j DROP
for sig in INT TERM; do
    : > "$LOG"
    top_head "$FAST" IMG="$NEWIMG" launch --force > "$LOG" 2>&1 &
    lp=$!
    check "SIG$sig in the pull: the pull is under way and shown" wait_log "worker: pull: " 60
    signal_launch "$sig"
    wait $lp; rc=$?
    out=$(cat "$LOG")
    check "SIG$sig in the pull: launch fails" [ $rc -ne 0 ]
    check "SIG$sig in the pull: the pull stopped, said" contains "$out" "worker: pull stopped by SIG$sig"
    check "SIG$sig in the pull: nothing changed, said" contains "$out" "nothing was changed"
    check "SIG$sig in the pull: the same ranks still run" [ "$(ids)" = "$before" ]
    check "SIG$sig in the pull: the deployment still answers" [ "$(api_code)" = 200 ]
    sleep 1
    check "SIG$sig in the pull: no pull left on the worker" eval '! ip netns pids "$NS_WORKER" | xargs -r -I{} cat /proc/{}/cmdline 2>/dev/null | tr "\0" " " | grep -q "podman pull"'
done
on_host worker iptables -D OUTPUT -p tcp --dport 5999 -j DROP
on_host head podman rmi "$NEWIMG" >/dev/null 2>&1

# --- bench: interrupted, and with a rank killed under it ---------------------------
BJ=$IT_DIR/bench.json
rm -f "$BJ"
: > "$LOG"
top_head bench --prefill 2048 4096 --reps 3 --conc 1 --kinds code --out "$BJ" > "$LOG" 2>&1 &
bp=$!
check "bench: a first result" wait_log "^prefill " 60
signal_cmd INT bench
wait $bp; rc=$?
out=$(cat "$LOG")
check "bench SIGINT: exit 1, said" eval '[ $rc -eq 1 ] && printf "%s" "$out" | grep -q "interrupted by SIGINT"'
check "bench SIGINT: the file says so and keeps the first result" \
    eval 'jq -e ".interrupted == \"SIGINT (Ctrl-C)\" and (.prefill[\"2048\"].median > 0)" "$BJ" >/dev/null'
rm -f "$BJ"
: > "$LOG"
top_head bench --prefill 2048 --reps 3 --conc 1 --kinds code --timeout 8 --out "$BJ" > "$LOG" 2>&1 &
bp=$!
check "bench, rank to be killed: a first result" wait_log "^prefill \|FAILED" 60
on_host worker podman kill dsv41-r1 >/dev/null 2>&1
wait $bp; rc=$?
out=$(cat "$LOG")
check "bench, a rank killed: exit 1, the failures said" eval '[ $rc -eq 1 ] && printf "%s" "$out" | grep -q "FAILED"'
check "bench, a rank killed: what finished kept, each failure named in the file" \
    eval 'jq -e "([.. | objects | .errors? // empty | .[]] | length) >= 1 and (.prefill[\"2048\"].runs | length) >= 0" "$BJ" >/dev/null'
jq -c '{prefill, decode: [.decode[] | {errors, reqs}]}' "$BJ" 2>/dev/null | head -c 600 | sed 's/^/    /'
echo

# --- once the new ranks start: those it started are stopped ----------------------
# The new ranks boot slowly, so the signal lands while they start or boot;
# either way no rank of the interrupted launch may be left.
SLOW="EXTRA_ENV=DSV41_SIM_BOOT_MS=20000"
for step in "started dsv41-r1 on worker:TERM" "r0 head:INT"; do
    pat=${step%:*} sig=${step##*:}
    : > "$LOG"
    top_head "$SLOW" launch --force > "$LOG" 2>&1 &
    lp=$!
    check "SIG$sig at '$pat': reached" wait_log "$pat" 60
    signal_launch "$sig"
    wait $lp; rc=$?
    out=$(cat "$LOG")
    check "SIG$sig at '$pat': launch fails" [ $rc -ne 0 ]
    check "SIG$sig at '$pat': the interrupt named" contains "$out" "interrupted by SIG$sig"
    check "SIG$sig at '$pat': its ranks stopped, said" contains "$out" "no rank of this launch runs"
    check "SIG$sig at '$pat': no rank left on any node" none_running
    check "SIG$sig at '$pat': no rank half-started (created, never run)" eval '[ -z "$(on_host head podman ps -aq --filter status=created; on_host worker podman ps -aq --filter status=created)" ]'
done

out=$(top_head "$FAST" launch 2>&1); rc=$?
check "after the interrupted launches, a launch starts cleanly (nothing left holding a name)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -5 | sed 's/^/    | /'

# --- not caught: a status stopped with Ctrl-C ends as by default ----------------
top_head status > /dev/null 2>&1 &
sp=$!
sleep 0.3
for p in $(ip netns pids "$NS_HEAD"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dsv41-top ] && kill -INT "$p"
done
wait $sp; rc=$?
check "status with SIGINT: ended by the signal (or done first)" eval '[ $rc -eq 130 ] || [ $rc -eq 0 ]'
clean_ranks
summary
