#!/bin/bash
# The memory guard with real memory pressure: launch starts a guard on every
# node; a real process takes memory past a floor set just below the current
# MemAvailable; the ranks die, another container and an unrelated process
# live, the logs say what happened - also with the worker's sshd gone. The
# machine stays safe: nothing pushes MemAvailable below 4 GiB.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
EAT=$IT_ROOT/build/tests/eatmem
model_skeleton
for h in $HOSTS; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
top_head stop >/dev/null 2>&1
WLOG=$IT_DIR/worker/state/memguard.log
HLOG=$IT_DIR/head/state/memguard.log
avail_mib() { awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo; }
running() { [ "$(ct_state "$1" "$2")" = true ]; }
stopped() { [ "$(ct_state "$1" "$2")" = false ]; } # (an API that does not answer is neither)
wait_resolved() { # log
    for _ in $(seq 50); do grep -q "ranks resolved: [0-9]" "$1" 2>/dev/null && return 0; sleep 0.2; done
    return 1
}

a=$(avail_mib)
if [ "$a" -lt 9000 ]; then
    not_ok "the machine has ${a} MiB available; the pressure test needs 9 GiB to stay safe"
    summary; exit 1
fi
# the floor 2 GiB below what is available now; eatmem takes memory to under it
floor_gib=$(awk -v a="$a" 'BEGIN {printf "%.2f", (a - 2048) / 1024}')
rm -f "$WLOG" "$HLOG"
# --force: with the floor this close to MemAvailable the memory budget rightly
# says the ranks do not fit (that is the point here)
out=$(top_head MEMGUARD_GIB="$floor_gib" EXTRA_ENV=DSV41_SIM_BOOT_MS=500 launch --force 2>&1); rc=$?
check "launch starts a guard on every node" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "head: memory guard up" && printf "%s" "$out" | grep -q "worker: memory guard up"'
check "the worker's guard resolves its rank" wait_resolved "$WLOG"
check "the head's guard resolves its rank" wait_resolved "$HLOG"
out=$(top_head guard --status 2>&1)
check "guard --status: armed, fresh heartbeat" contains "$out" "armed, heartbeat"
out=$(top_head guard --status --all 2>&1); rc=$?
check "guard --status --all: every node's guard" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "^worker: guard pid [0-9]* armed"'

# things the guard must not touch: another container and a plain process
on_host worker podman run -d --name other-app --network host "$SIM_IMAGE" vllm serve /model --port 9007 >/dev/null
on_host worker sleep 600 &
sleeper=$!
sleep 0.5

# the head's ssh session to the worker cut: the worker's guard does not need it
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
gpid=$(head -1 "$IT_DIR/worker/state/guard.spark-worker.lock" | cut -d" " -f1)
check "the worker's guard outlives its ssh session" kill -0 "$gpid"

check "both ranks run before the eating" eval 'running worker dsv41-r1 && running head dsv41-r0'
t0=$(date +%s%N)
# to 512 MiB under the floor, however much other processes freed since it was
# set (a TSan launch exiting frees ~1 GiB: a fixed 3 GiB ended above the floor)
on_host worker "$EAT" 8192 4 4096 $(( a - 2048 - 512 )) > "$IT_DIR/eat.log" 2>&1 &
eater=$!
dead=no
end=$((SECONDS + 120)) # the eater's time to the floor: ~10 s quiet, 30 on a loaded CI
while [ $SECONDS -lt $end ]; do
    if stopped worker dsv41-r1 && stopped head dsv41-r0; then dead=yes; break; fi
    sleep 0.1
done
t1=$(date +%s%N)
wait $eater
check "below the floor both ranks die" [ $dead = yes ]
echo "    (ranks dead $(( (t1 - t0) / 1000000 )) ms after the allocation started)"
check "another container lives" running worker other-app
check "an unrelated process lives" kill -0 $sleeper
check "the allocating process itself was not the guard's" contains "$(cat "$IT_DIR/eat.log")" "eatmem: holding"
check "the worker's log says it fired" contains "$(cat "$WLOG")" "FIRED: MemAvailable"
check "the log names the floor" eval 'grep -qE "< floor [0-9]+ MiB: SIGKILL to [0-9] of [0-9] rank" "$WLOG"'
# (or the rank had exited before the guard got to it: nothing was put off; a
# TSan guard is slow enough for that on a loaded machine. What fails is a
# living thread the guard could not renice.)
check "the killed rank's threads were put at nice -20 (their exit not put off)" \
    eval 'grep -qE "nice -20 for [1-9][0-9]* thread|nice -20 for 0 thread\(s\) \([0-9] rank\(s\) exited before that\)" "$WLOG"' ||
    grep "FIRED" "$WLOG" | sed 's/^/    /'
# process_mrelease after the kill (Linux >= 5.15 here): every killed rank's memory
# unmapped by the guard, or already back because the rank had exited
check "the killed rank's memory unmapped by the guard (process_mrelease)" \
    eval 'grep -qE "memory of [0-9]+ killed rank\(s\) unmapped by the guard in [0-9.]+ ms( \([0-9]+ had exited\))?$" "$WLOG"' ||
    grep "unmapped" "$WLOG" | sed 's/^/    /'

check "the head's guard fired too (one machine's memory)" contains "$(cat "$HLOG")" "FIRED"
check "the runtime cleaned up after the kill" contains "$(cat "$WLOG")" "runtime kill of the ranks"
rearmed() { for _ in $(seq 30); do grep -q "re-armed" "$WLOG" && return 0; sleep 0.2; done; return 1; }
check "the guard re-arms when memory is back" rearmed
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker
kill $sleeper 2>/dev/null; kill_in_ns worker sleep
on_host worker podman rm -f -t 0 other-app >/dev/null 2>&1

# no kill above the floor: a soak with memory coming and going
soak=${GUARD_SOAK_S:-60}
top_head stop >/dev/null 2>&1
out=$(top_head EXTRA_ENV=DSV41_SIM_BOOT_MS=300 launch 2>&1)
check "soak: a fresh guard with the default floor" contains "$out" "worker: memory guard up: guard pid"
before=$(grep -c FIRED "$WLOG")
end=$(( $(date +%s) + soak ))
while [ "$(date +%s)" -lt "$end" ]; do on_host worker "$EAT" 1024 1 8192 >/dev/null 2>&1; done
check "soak ${soak}s above the floor: no kill" eval '[ -s "$WLOG" ] && [ "$(grep -c FIRED "$WLOG")" = "$before" ]'
check "soak: the ranks still run" eval 'running worker dsv41-r1 && running head dsv41-r0'

# a guard that fires while launch waits: launch says so
top_head stop >/dev/null 2>&1
a=$(avail_mib)
floor_mib=$((a - 2048))
floor_gib=$(awk -v f="$floor_mib" 'BEGIN {printf "%.2f", f / 1024}')
wres=$(grep -c "ranks resolved: [0-9]" "$WLOG") hres=$(grep -c "ranks resolved: [0-9]" "$HLOG")
# a boot of 60 s: launch is still waiting when the memory goes, however slowly
# a loaded machine starts the ranks and resolves them (the firing ends it early)
top_head MEMGUARD_GIB="$floor_gib" EXTRA_ENV=DSV41_SIM_BOOT_MS=60000 launch --force > "$IT_DIR/launch-fired.log" 2>&1 &
lp=$!
# memory is taken once both ranks run and this launch's guards know them
# (the logs hold earlier runs' lines: count the new ones)
for _ in $(seq 300); do grep -q "^started dsv41-r0 on head" "$IT_DIR/launch-fired.log" && break; sleep 0.1; done
for _ in $(seq 300); do
    [ "$(grep -c "ranks resolved: [0-9]" "$WLOG")" -gt "$wres" ] &&
        [ "$(grep -c "ranks resolved: [0-9]" "$HLOG")" -gt "$hres" ] && break
    sleep 0.1
done
sleep 0.5
# below the floor by 1 GiB whatever the machine's memory does meanwhile (a
# shared machine's page cache comes and goes, the booting ranks free some):
# eatmem takes memory until MemAvailable is there
echo "    (MemAvailable $(avail_mib) MiB, floor $floor_mib MiB: taking memory to $((floor_mib - 1024)) MiB)"
on_host worker "$EAT" 12288 3 $((floor_mib - 2048)) $((floor_mib - 1024)) > "$IT_DIR/eat-launch.log" 2>&1
wait $lp; rc=$?
out=$(cat "$IT_DIR/launch-fired.log")
echo "    (launch exit $rc; $(grep -c FIRED "$WLOG") firing(s) in the worker's log)"
if [ $rc -ne 1 ]; then # what the eater and the guards saw
    sed 's/^/    eat: /' "$IT_DIR/eat-launch.log"
    tail -5 "$WLOG" | sed 's/^/    worker guard: /'
    tail -3 "$HLOG" | sed 's/^/    head guard: /'
fi
check "guard fires during launch: launch fails" [ $rc -eq 1 ]
check "guard fires during launch: says the guard fired" contains "$out" "the memory guard fired on"
check "guard fires during launch: the other ranks stopped" contains "$out" "stopping the other ranks"

out=$(top_head stop 2>&1)
check "stop stops the guards" eval 'printf "%s" "$out" | grep -q "worker: guard [0-9]* stopped" && printf "%s" "$out" | grep -q "head: guard [0-9]* stopped"'
out=$(top_head guard --status 2>&1); rc=$?
check "after stop: not guarded" [ $rc -eq 1 ]
summary
