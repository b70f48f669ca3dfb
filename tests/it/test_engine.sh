#!/bin/bash
# The head's ranks through podman's API socket (RUNTIME_SOCKET: hosts.sh
# starts podman's API service on the head) instead of its CLI: status and
# the guard ask the socket and no `podman container inspect` runs for them
# on the head; a missing socket and one that never answers leave the CLI,
# as before. Needs the hosts of hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
T=$(mktemp -d /tmp/dsv41-engine-it.XXXXXX)
hang=
trap 'top_head stop --now >/dev/null 2>&1; [ -n "$hang" ] && kill $hang 2>/dev/null; rm -rf "$T"' EXIT
# a podman on the head's PATH that notes each run, then is podman
mkdir -p "$T/bin"
cat > "$T/bin/podman" <<EOS
#!/bin/sh
printf '%s\n' "\$*" >> "$T/ran"
exec /usr/bin/podman "\$@"
EOS
chmod 0755 "$T/bin/podman"
P="PATH=$T/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# the snapshot's inspect and the guard's, as runtime.c and guard.c word them
snap_inspects() { grep -c -- 'container inspect -f {{.Name}}' "$T/ran" 2>/dev/null; }
guard_inspects() { grep -c -- '{{.State.Running}} {{.State.Pid}}' "$T/ran" 2>/dev/null; }

model_skeleton
stop_test_guards
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state"
out=$(top_head "$P" "EXTRA_ENV=DSV41_SIM_BOOT_MS=300 DSV41_SIM_LOG_RATE=20" launch 2>&1); rc=$?
check "launch: ranks up" eval '[ $rc = 0 ]' || printf '%s\n' "$out" | tail -5 >&2
check "launch followed the head's log through the socket" eval '! grep -q "^logs" "$T/ran"'

# --- logs through the socket ----------------------------------------------------------------
: > "$T/ran"
top_head "$P" logs r0 > "$T/api.log" 2>&1
on_host head podman logs dsv41-r0 > "$T/cli.log" 2>&1
# the CLI's copy was taken after ours: ours is a prefix of it, line for line
# (stdout and stderr may interleave otherwise; compared as sets of lines)
n=$(wc -l < "$T/api.log")
check "logs r0: the log's lines, as the CLI's" eval \
    '[ "$n" -gt 3 ] && [ -z "$(comm -23 <(sort "$T/api.log") <(sort "$T/cli.log"))" ]'
check "logs r0: no podman logs started" eval '! grep -q "^logs" "$T/ran"'
top_head "$P" logs -f r0 > "$T/follow.log" 2>&1 &
fp=$!
sleep 3
a=$(wc -l < "$T/follow.log")
sleep 2
b=$(wc -l < "$T/follow.log")
kill_in_ns head dsv41-top
wait $fp; rc=$?
check "logs -f r0: lines written after it started arrive" eval '[ "$b" -gt "$a" ] && [ "$a" -gt 0 ]'
check "logs -f r0: SIGTERM ends it cleanly" eval '[ $rc = 0 ]'
check "logs -f r0: still no podman logs" eval '! grep -q "^logs" "$T/ran"'

# --- status through the socket ----------------------------------------------------------
: > "$T/ran"
js=$(top_head "$P" status --json 2>/dev/null)
check "status: the head's rank through the socket" eval \
    'jq_is "$js" ".nodes[0].containers[0].name" dsv41-r0 && jq_is "$js" ".nodes[0].containers[0].running" true'
check "status: its pid is the container's" eval \
    '[ "$(jq -r ".nodes[0].containers[0].pid" <<<"$js")" = "$(on_host head podman container inspect -f "{{.State.Pid}}" dsv41-r0)" ]'
check "status: no podman inspect started for the head's sample" [ "$(snap_inspects)" = 0 ]
check "status: the worker's rank as before (its CLI over ssh)" jq_is "$js" ".nodes[1].containers[0].name" dsv41-r1

# --- the guard --------------------------------------------------------------------------
log=$IT_DIR/head/state/memguard.log
check "the head's guard resolved its rank" eval 'grep -q "ranks resolved: .*[0-9]" "$log"'
check "the guard asked the socket, not the CLI" [ "$(guard_inspects)" = 0 ]

# --- no socket: the CLI -------------------------------------------------------------------
: > "$T/ran"
js=$(top_head "$P" RUNTIME_SOCKET="$T/none.sock" status --json 2>/dev/null)
check "no socket: the rank through the CLI" eval \
    'jq_is "$js" ".nodes[0].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'
: > "$T/ran"
js=$(top_head "$P" RUNTIME_SOCKET=none status --json 2>/dev/null)
check "RUNTIME_SOCKET=none: the CLI" eval \
    'jq_is "$js" ".nodes[0].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'

# --- a socket that takes the connection and never answers: the deadline holds ---------------
sleep 600 | nc -lkU "$T/hang.sock" >/dev/null 2>&1 &
hang=$!
for _ in $(seq 50); do [ -S "$T/hang.sock" ] && break; sleep 0.1; done
: > "$T/ran"
t0=$(date +%s)
top_head "$P" RUNTIME_SOCKET="$T/hang.sock" status --json > "$T/js" 2>/dev/null &
sp=$!
( sleep 120; kill $sp 2>/dev/null ) &
watchdog=$!
wait $sp; rc=$?
kill $watchdog 2>/dev/null
js=$(cat "$T/js")
check "a socket that hangs: status ends, the rank through the CLI" eval \
    '[ $rc != 143 ] && jq_is "$js" ".nodes[0].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'
echo "    (status with a silent socket took $(( $(date +%s) - t0 )) s)"

# --- stop through the socket: stop, inspect and remove of the head's rank start no podman ---
: > "$T/ran"
out=$(top_head "$P" stop 2>&1); rc=$?
check "stop: both ranks stopped" eval '[ $rc = 0 ] && grep -q "stopped dsv41-r0 on head after" <<<"$out" && grep -q "stopped dsv41-r1 on worker" <<<"$out"' ||
    printf '%s\n' "$out" >&2
check "stop: the head's rank drained (no kill after the timeout)" eval '! grep -q "killed dsv41-r0" <<<"$out"'
check "stop: the head's rank is gone" eval '! on_host head podman container exists dsv41-r0'
# stop's own calls only: the head's guard, which looks for the ranks again
# when one exits, falls back to its CLI inspect (its own format) when the
# socket does not answer within its 3 s deadline - podman's service can be
# that slow while it stops a container on a loaded machine (a CI run saw it)
echo "    (the guard's CLI inspects while stop ran: $(guard_inspects))"
check "stop: no podman stop, inspect, rm or kill started on the head by stop" eval \
    '! grep -v -- "{{.State.Running}} {{.State.Pid}}" "$T/ran" | grep -Eq "^(stop|rm|kill|container inspect|inspect)( |$)"' ||
    cat "$T/ran" >&2
summary
