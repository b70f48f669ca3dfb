#!/bin/bash
# Peers that hang, for `watch` (the console's monitor without the screen):
# the worker's sshd SIGSTOPped, the link cut with iptables, sshd killed and
# restarted over and over. A hung or cut worker is said within seconds and
# called down once its session has been silent for ServerAliveCountMax x
# ServerAliveInterval (3 x 5 s); the head's facts keep coming meanwhile; the
# worker is back soon after it answers again; file descriptors and memory
# stay flat. HANG_S (30) and RESTARTS (3; make soak: 20) set the lengths.
# Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

HANG_S=${HANG_S:-30}
RESTARTS=${RESTARTS:-3}
OUT=$IT_DIR/hang.watch
now() { date +%s.%N; }
# Seconds from $1 to the first line after it whose text matches $2 (999: none).
seconds_to() { # since pattern
    awk -v t0="$1" -v pat="$2" '$1 >= t0 && index($0, pat) { printf "%.1f\n", $1 - t0; found = 1; exit }
        END { if (!found) print 999 }' "$OUT"
}
within() { # seconds limit
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'
}
sshd_signal() { # SIG: the worker's listener and every session it forked
    local p
    for p in $(ip netns pids "$NS_WORKER"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] && kill "-$1" "$p"
    done
    return 0
}
watch_pid() {
    local p
    for p in $(ip netns pids "$NS_HEAD"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dsv41-top ] &&
            tr '\0' ' ' < "/proc/$p/cmdline" | grep -q ' watch' && echo "$p"
    done
}

# Each line stamped with when it arrived (watch's own stamp has seconds only).
: > "$OUT"
top_head watch 2>&1 | while IFS= read -r l; do printf '%s %s\n' "$(now)" "$l"; done >> "$OUT" &
for _ in $(seq 100); do grep -q "node.worker *reachable" "$OUT" && break; sleep 0.2; done
check "watch: the worker reachable to begin with" grep -q "node.worker *reachable" "$OUT"
WP=$(watch_pid)

# --- sshd SIGSTOPped ------------------------------------------------------------
t0=$(now)
sshd_signal STOP
sleep 5
# the head's facts must keep coming while the worker hangs: a listener on
# the API's port that answers 503 once changes what the API check sees
t1=$(now)
printf 'HTTP/1.0 503 Busy\r\nContent-Length: 0\r\n\r\n' | on_host head nc -l 0.0.0.0 8000 >/dev/null 2>&1 &
ncp=$!
sleep $((HANG_S - 5))
sshd_signal CONT
t2=$(now)
sleep 3
kill_in_ns head nc; wait $ncp 2>/dev/null
for _ in $(seq 100); do [ "$(seconds_to "$t2" "node.worker    reachable")" != 999 ] && break; sleep 0.2; done
late=$(seconds_to "$t0" "node.worker    NO ANSWER")
down=$(seconds_to "$t0" "no answer from the node's sshd")
api=$(seconds_to "$t1" " api ")
back=$(seconds_to "$t2" "node.worker    reachable")
echo "    sshd stopped: no answer said after $late s, down after $down s, head's API change seen after $api s, back $back s after SIGCONT"
check "sshd stopped: the missing answer said within 8 s" within "$late" 8
# 15 s of silence, measured from the last byte (up to a sample before the
# stop), plus one sample of watch's
check "sshd stopped: the worker down within 17 s" within "$down" 17
check "sshd stopped: the head's facts kept coming (API change within 5 s)" within "$api" 5
check "sshd stopped: the worker back within 20 s of answering again" within "$back" 20

# --- the link cut ---------------------------------------------------------------
FW=(nsenter --net="/run/netns/$NS_WORKER" iptables)
t0=$(now)
"${FW[@]}" -I INPUT -p tcp --dport 22 -j DROP
"${FW[@]}" -I OUTPUT -p tcp --sport 22 -j DROP
sleep "$HANG_S"
"${FW[@]}" -D INPUT -p tcp --dport 22 -j DROP
"${FW[@]}" -D OUTPUT -p tcp --sport 22 -j DROP
t2=$(now)
for _ in $(seq 150); do [ "$(seconds_to "$t2" "node.worker    reachable")" != 999 ] && break; sleep 0.2; done
down=$(seconds_to "$t0" "no answer from the node's sshd")
back=$(seconds_to "$t2" "node.worker    reachable")
echo "    link cut: down after $down s, back $back s after it was mended"
check "link cut: the worker down within 17 s" within "$down" 17
check "link cut: the worker back within 30 s of the link's return" within "$back" 30

# --- sshd killed and restarted ----------------------------------------------------
# The fewest descriptors watch holds over 3 s: a connection the API probe or a
# sample has open for a moment is not a leak (a loaded machine caught one in
# flight), one that stays is.
fd_min() {
    local n min=99999
    for _ in $(seq 10); do
        n=$(ls "/proc/$WP/fd" | wc -l)
        [ "$n" -lt "$min" ] && min=$n
        sleep 0.3
    done
    echo "$min"
}
fds0=$(fd_min)
rss0=$(awk '/^VmRSS/ {print $2}' "/proc/$WP/status")
worst=0
for i in $(seq "$RESTARTS"); do
    "$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
    sleep 2
    "$IT_ROOT/tests/it/hosts.sh" start-sshd worker
    t2=$(now)
    for _ in $(seq 100); do [ "$(seconds_to "$t2" "node.worker    reachable")" != 999 ] && break; sleep 0.1; done
    b=$(seconds_to "$t2" "node.worker    reachable")
    awk -v a="$b" -v w="$worst" 'BEGIN { exit !(a > w) }' && worst=$b
done
sleep 3
fds1=$(fd_min)
[ "$fds1" -le "$fds0" ] || ls -l "/proc/$WP/fd" | sed 's/^/    | /' >&2
rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$WP/status")
echo "    sshd restarted $RESTARTS times: slowest reconnect $worst s; fds $fds0 -> $fds1; RSS $rss0 -> $rss1 KiB"
check "sshd restarted: every reconnect within 5 s" within "$worst" 5
check "sshd restarted: file descriptors flat" [ "$fds1" -le "$fds0" ]
check "sshd restarted: RSS flat (within 8 MiB)" [ "$rss1" -le $((rss0 + 8192)) ]

kill "$WP" 2>/dev/null
wait 2>/dev/null
summary
