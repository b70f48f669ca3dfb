#!/bin/bash
# The worker's ranks through podman's API socket on the worker (hosts.sh
# starts its API service; lib.sh names it in WORKER_RUNTIME_SOCKET), reached
# through the worker's sshd on a direct-streamlocal channel of the session
# the sampler already holds: status and watch start no podman on the worker
# for their samples, the fields are the CLI's; none, a missing socket, an
# sshd that refuses the forwarding (status warns, naming the setting), a
# socket that never answers and one that closes unanswered leave the CLI; a hostile
# engine is quoted clean; stop goes through the socket (the worker guard's lookups too), and
# Ctrl-C cuts a stop the socket holds. Needs the hosts of hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
T=$(mktemp -d /tmp/dsv41-engine-remote-it.XXXXXX)
SSHD_CONF=$IT_DIR/sshd_config.worker
PY_COMM=$(basename "$(readlink -f /usr/bin/python3)") # its comm: python3.N
hang=
restore() {
    top_head stop --now >/dev/null 2>&1
    [ -n "$hang" ] && kill "$hang" 2>/dev/null
    kill_in_ns worker nc
    kill_in_ns worker "$PY_COMM"
    rm -f "$IT_DIR/bin/podman"
    if grep -q '^AllowStreamLocalForwarding no\|CONTAINER_HOST=' "$SSHD_CONF"; then
        sed -i '/^AllowStreamLocalForwarding no/d; s| CONTAINER_HOST=[^ ]*||' "$SSHD_CONF"
        "$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
        "$IT_ROOT/tests/it/hosts.sh" start-sshd worker
    fi
    rm -rf "$T"
}
trap restore EXIT
# a podman first on the worker's PATH (its sshd's SetEnv puts $IT_DIR/bin
# first; the head's PATH has no $IT_DIR/bin) that notes each run, then is podman
cat > "$IT_DIR/bin/podman" <<EOS
#!/bin/sh
printf '%s\n' "\$*" >> "$T/ran"
exec /usr/bin/podman "\$@"
EOS
chmod 0755 "$IT_DIR/bin/podman"
# the snapshot's inspect, as runtime.c words it
snap_inspects() { grep -c -- 'container inspect -f {{.Name}}' "$T/ran" 2>/dev/null; }
ESC=$'\e'
cli() { on_host worker podman container inspect -f "$1" dsv41-r1; }

# status with WORKER_RUNTIME_SOCKET=$1 (a socket that misbehaves): it ends, the
# rank through the CLI, within its usual time ($base_s) and the exchange's
# deadline (3 s), with room for a loaded machine. $2 names the case in the
# checks, $3 in the line that says how long it took.
status_with_socket() { # socket case said
    local t0 sp watchdog rc took js
    : > "$T/ran"
    t0=$(date +%s.%N)
    top_head WORKER_RUNTIME_SOCKET="$1" status --json > "$T/js" 2>/dev/null &
    sp=$!
    ( sleep 120; kill $sp 2>/dev/null ) &
    watchdog=$!
    wait $sp; rc=$?
    kill $watchdog 2>/dev/null
    took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    js=$(cat "$T/js")
    check "$2: status ends, the rank through the CLI" eval \
        '[ $rc != 143 ] && jq_is "$js" ".nodes[1].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'
    check "$2: status within its usual time ($base_s s) + 15 s" \
        awk -v a="$took" -v b="$base_s" 'BEGIN { exit !(a <= b + 15) }'
    echo "    (status with $3 took $took s)"
}

model_skeleton
stop_test_guards
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state"
for h in head worker; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
out=$(top_head "EXTRA_ENV=DSV41_SIM_BOOT_MS=300" launch 2>&1); rc=$?
check "launch: ranks up" eval '[ $rc = 0 ]' || printf '%s\n' "$out" | tail -5 >&2

# --- status through the worker's socket -------------------------------------------------
: > "$T/ran"
t0=$(date +%s.%N)
js=$(top_head status --json 2>/dev/null); base_rc=$?
base_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
check "status: the worker's rank, running" eval \
    'jq_is "$js" ".nodes[1].containers[0].name" dsv41-r1 && jq_is "$js" ".nodes[1].containers[0].running" true'
check "status: no podman inspect started on the worker for its sample" [ "$(snap_inspects)" = 0 ]
check "status: the worker's PID is the CLI's" \
    jq_is "$js" ".nodes[1].containers[0].pid" "$(cli '{{.State.Pid}}')"
check "status: the image id is the CLI's" \
    jq_is "$js" ".nodes[1].containers[0].image" "$(cli '{{.Image}}')"
started=$(jq -r '.nodes[1].containers[0].started' <<<"$js")
check "status: StartedAt is the CLI's (to the second)" eval \
    '[ "$(date -d "$started" +%s 2>/dev/null)" = "$(cli "{{.State.StartedAt.Unix}}")" ]'
check "status: no warning about the socket" eval \
    '! jq -r ".warnings[]" <<<"$js" | grep -q AllowStreamLocalForwarding'
echo "    (status through the socket took $base_s s, exit $base_rc)"

# --- logs through the worker's socket (the engine's frames over the session): the CLI's
# lines, in order; followed too; no podman logs on the worker --------------------------------
: > "$T/ran"
got=$(top_head logs --tail 5 r1 2>&1); rc=$?
want=$(on_host worker podman logs --tail 5 dsv41-r1 2>&1) # an idle rank writes nothing more
check "logs: the worker's last 5 lines through the socket, as the CLI gives them" eval \
    '[ $rc = 0 ] && [ -n "$got" ] && [ "$got" = "$want" ]' ||
    printf 'got:\n%s\nwant:\n%s\n' "$got" "$want" >&2
top_head logs -f --tail 3 r1 > "$T/follow.out" 2>&1 &
fp=$!
for _ in $(seq 100); do [ "$(wc -l < "$T/follow.out")" -ge 3 ] && break; sleep 0.1; done
kill_in_ns head dsv41-top
wait "$fp" 2>/dev/null
check "logs -f: the tail came through the socket" eval '[ "$(wc -l < "$T/follow.out")" -ge 3 ]' ||
    cat "$T/follow.out" >&2
check "logs, logs -f: no podman logs started on the worker" eval '! grep -q "^logs" "$T/ran"' ||
    cat "$T/ran" >&2

# --- watch: its full samples too --------------------------------------------------------
: > "$T/ran"
top_head watch > "$T/watch.out" 2>&1 &
wp=$!
for _ in $(seq 100); do grep -q "dsv41-r1 running" "$T/watch.out" && break; sleep 0.2; done
sleep 12 # watch asks the containers every few seconds: more than one full sample
kill_in_ns head dsv41-top
wait $wp 2>/dev/null
check "watch: the worker's rank seen running" grep -q "dsv41-r1 running" "$T/watch.out"
check "watch: no podman inspect started on the worker" [ "$(snap_inspects)" = 0 ]
check "watch: the worker's log followed without podman logs there" eval '! grep -q "^logs" "$T/ran"' ||
    cat "$T/ran" >&2

# --- none: the CLI ---------------------------------------------------------------------------
: > "$T/ran"
js=$(top_head WORKER_RUNTIME_SOCKET=none status --json 2>/dev/null)
check "WORKER_RUNTIME_SOCKET=none: the rank through the CLI" eval \
    'jq_is "$js" ".nodes[1].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'

# --- empty: found on the worker (its sshd sets no CONTAINER_HOST: podman's root socket,
# which the test hosts lack unless this machine runs one: then the check is skipped) -------
if [ ! -e /run/podman/podman.sock ]; then
    : > "$T/ran"
    js=$(top_head WORKER_RUNTIME_SOCKET= status --json 2>/dev/null)
    check "WORKER_RUNTIME_SOCKET empty, no socket found on the worker: the CLI" eval \
        'jq_is "$js" ".nodes[1].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'
fi

# --- a missing socket: the CLI, and status as before ----------------------------------------
: > "$T/ran"
js=$(top_head WORKER_RUNTIME_SOCKET="$T/none.sock" status --json 2>/dev/null); rc=$?
check "a missing socket: the rank through the CLI" eval \
    'jq_is "$js" ".nodes[1].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'
check "a missing socket: status exits as with the socket ($base_rc)" [ "$rc" = "$base_rc" ]
check "a missing socket: no refusal warned of" eval \
    '! jq -r ".warnings[]" <<<"$js" | grep -q AllowStreamLocalForwarding' ||
    { jq -r ".warnings[]" <<<"$js"; ls -la "$T"; } >&2

# --- sshd refuses the forwarding ---------------------------------------------------------
echo 'AllowStreamLocalForwarding no' >> "$SSHD_CONF"
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker
: > "$T/ran"
js=$(top_head status --json 2>/dev/null); rc=$?
check "forwarding refused: the rank through the CLI" eval \
    'jq_is "$js" ".nodes[1].containers[0].running" true && [ "$(snap_inspects)" -ge 1 ]'
check "forwarding refused: status warns, naming AllowStreamLocalForwarding" eval \
    'jq -r ".warnings[]" <<<"$js" | grep -q "worker: .*AllowStreamLocalForwarding.*CLI"'
out=$(top_head status 2>&1)
check "forwarding refused: the text report warns too" eval \
    'printf "%s\n" "$out" | grep -q "^warning: worker: .*AllowStreamLocalForwarding"'
sed -i '/^AllowStreamLocalForwarding no/d' "$SSHD_CONF"
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker
: > "$T/ran"
js=$(top_head status --json 2>/dev/null)
check "forwarding allowed again: through the socket" eval \
    'jq_is "$js" ".nodes[1].containers[0].running" true && [ "$(snap_inspects)" = 0 ]'

# --- a socket on the worker that takes the connection and never answers (holds it, reads
# nothing, closes nothing): the exchange's deadline, then the CLI -----------------------------
on_host worker /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(16)
held = []
while True:
    held.append(s.accept()[0])' "$T/mute.sock" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -S "$T/mute.sock" ] && break; sleep 0.1; done
status_with_socket "$T/mute.sock" "a socket that never answers" "a mute socket on the worker"
kill_in_ns worker "$PY_COMM"

# --- a socket on the worker that takes the connection and closes it unanswered -------------
sleep 600 | on_host worker nc -lkU "$T/hang.sock" >/dev/null 2>&1 &
hang=$!
for _ in $(seq 50); do [ -S "$T/hang.sock" ] && break; sleep 0.1; done
status_with_socket "$T/hang.sock" "a socket that closes unanswered" "a socket that closes unanswered"

# --- a hostile engine on the worker: its error message (a title, a clear screen, colours)
# quoted by stop, without one escape byte; the worker's rank not removed -------------------------
kill "$hang" 2>/dev/null; hang=
on_host worker /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(16)
body = b"{\"message\":\"\\u001b]0;owned\\u0007\\u001b[2J\\u001b[31mEVIL-ENGINE\\u001b[0m\"}"
while True:
    c = s.accept()[0]
    got = b""
    while b"\r\n\r\n" not in got:
        part = c.recv(4096)
        if not part:
            break
        got += part
    c.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    c.close()' "$T/evil.sock" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -S "$T/evil.sock" ] && break; sleep 0.1; done
out=$(top_head WORKER_RUNTIME_SOCKET="$T/evil.sock" stop 2>&1); rc=$?
check "hostile engine: stop fails, quoting the engine's message" eval \
    '[ $rc != 0 ] && contains "$out" "worker: " && contains "$out" "EVIL-ENGINE"'
check "hostile engine: ... without one escape byte" eval '! printf "%s" "$out" | grep -q "$ESC"'
# (the head's rank is stopped: the worker's then ends, as a rank does without its peer)
check "hostile engine: the worker's rank not removed" on_host worker podman container exists dsv41-r1
kill_in_ns worker "$PY_COMM"

# --- a socket found on the worker (WORKER_RUNTIME_SOCKET empty; the worker's sshd names it
# in CONTAINER_HOST): logs, stop and the worker's guard
# through it (the guard is given the one found), no podman stop, inspect, rm, kill or logs
# started there ---
sed -i "s|^SetEnv .*PATH=.*|& CONTAINER_HOST=unix://$IT_DIR/worker/podman.sock|" "$SSHD_CONF"
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker
out=$(top_head WORKER_RUNTIME_SOCKET= "EXTRA_ENV=DSV41_SIM_BOOT_MS=300" launch 2>&1); rc=$?
check "launch again: ranks up" eval '[ $rc = 0 ]' || printf '%s\n' "$out" | tail -5 >&2
: > "$T/ran"
check "found socket: the worker's guard is given it" eval \
    'ps -eo args | grep "^$IT_DIR/worker/state/bin/dsv41-guard " | grep -q -- "--socket $IT_DIR/worker/podman.sock"' ||
    ps -eo args | grep dsv41-guard >&2
got=$(top_head WORKER_RUNTIME_SOCKET= logs --tail 2 r1 2>&1)
check "found socket: logs through it" eval \
    '[ -n "$got" ] && [ "$got" = "$(on_host worker podman logs --tail 2 dsv41-r1 2>&1)" ]'
out=$(top_head WORKER_RUNTIME_SOCKET= stop 2>&1); rc=$?
check "stop: the worker's rank stopped" eval '[ $rc = 0 ] && grep -Eq "^stopped dsv41-r1 on worker after [0-9]+ s( \(exit code [0-9]+\))?$" <<<"$out"' ||
    printf '%s\n' "$out" >&2
check "stop: the worker's rank is gone" eval '! on_host worker podman container exists dsv41-r1'
check "stop: no podman stop, inspect, rm, kill or logs started on the worker" eval \
    '! grep -Eq "^(stop|rm|kill|container inspect|inspect|logs)( |$)" "$T/ran"' || cat "$T/ran" >&2
sed -i "s| CONTAINER_HOST=unix://$IT_DIR/worker/podman.sock||" "$SSHD_CONF"
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker

# --- Ctrl-C during the worker's stop through its socket: a proxy before podman's socket
# passes every request but holds the stop unanswered (without a cancel the stop would wait
# its 10 s + 15 s); the interrupt ends it and the rank is removed at once ----------------
on_host worker /usr/bin/python3 -c 'import socket, sys, threading
up, held = sys.argv[2], []
def serve(c):
    got = b""
    while b"\r\n\r\n" not in got:
        part = c.recv(65536)
        if not part:
            return
        got += part
    if b"/stop" in got.split(b"\r\n", 1)[0]:
        held.append(c)
        return
    u = socket.socket(socket.AF_UNIX)
    u.connect(up)
    u.sendall(got)
    while True:
        part = u.recv(65536)
        if not part:
            break
        c.sendall(part)
    u.close()
    c.close()
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(16)
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()' \
    "$T/hold.sock" "$IT_DIR/worker/podman.sock" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -S "$T/hold.sock" ] && break; sleep 0.1; done
out=$(top_head "EXTRA_ENV=DSV41_SIM_BOOT_MS=300" launch 2>&1); rc=$?
check "ctrl-c: ranks up" eval '[ $rc = 0 ]' || printf '%s\n' "$out" | tail -5 >&2
top_head WORKER_RUNTIME_SOCKET="$T/hold.sock" stop > "$T/stop-int.log" 2>&1 &
spid=$!
for _ in $(seq 300); do grep -q "stopping dsv41-r1" "$T/stop-int.log" && break; sleep 0.05; done
sleep 0.5
t0=$(date +%s.%N)
for p in $(ip netns pids "$NS_HEAD"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dsv41-top ] && kill -INT "$p"
done
wait "$spid"; rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
out=$(cat "$T/stop-int.log")
check "ctrl-c: the worker's held stop was being waited for" contains "$out" "r1 worker: stopping dsv41-r1"
check "ctrl-c: says it switched to --now" contains "$out" "interrupted by SIGINT (Ctrl-C): removing the remaining ranks at once"
check "ctrl-c: the worker's rank removed at once" eval \
    '[ $rc = 0 ] && contains "$out" "stopped dsv41-r1 on worker (removed at once after" && ! on_host worker podman container exists dsv41-r1'
# the proxy never answers the stop: only the cancel can end it before 25 s
check "ctrl-c: the stop ended well before its own bound (10 s + 15 s)" \
    awk -v a="$took" 'BEGIN { exit !(a < 15) }'
echo "    (the stop ended $took s after the Ctrl-C)"
kill_in_ns worker "$PY_COMM"
summary
