#!/bin/bash
# The memory guard with its STATE_DIR on a file system whose writes stop
# (tests/fuse/faultfs: an NFS server gone quiet, a writeback stall under
# memory pressure): with every write blocked, a floor crossing still kills
# the rank within the usual time, and once writes go through again the log
# has the firing and the heartbeat moves. Needs root and /dev/fuse.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
GUARD=${DSV41_GUARD:-$root/build/dsv41-guard}
FAULTFS=$root/build/tests/faultfs # a tool of the test: the plain build's, whichever guard
if [ "$(id -u)" != 0 ] || [ ! -e /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
    not_ok "needs root, /dev/fuse and fusermount3 (make test-deps)"
    summary
    exit 1
fi
make -s -C "$root" build/tests/faultfs >/dev/null || { not_ok "make faultfs"; summary; exit 1; }
T=$(mktemp -d /tmp/dsv41-guard-stall.XXXXXX)
mkdir -p "$T/back" "$T/mnt" "$T/proc"
FS=
cleanup() {
    [ -n "$FS" ] && kill -USR2 "$FS" 2>/dev/null
    "$GUARD" --state-dir "$T/mnt/state" --stop >/dev/null 2>&1
    [ -n "${RANK:-}" ] && kill -9 "$RANK" 2>/dev/null
    fusermount3 -u "$T/mnt" 2>/dev/null || umount -l "$T/mnt" 2>/dev/null
    [ -n "$FS" ] && kill "$FS" 2>/dev/null && wait "$FS" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
# the guard keeps meminfo open and rereads it: rewritten in place, one write of
# the same length (fixed-width numbers), never replaced by another file
avail() { # MiB
    printf 'MemTotal:       127601496 kB\nMemFree:        %12d kB\nMemAvailable:   %12d kB\n' \
        $(($1 * 512)) $(($1 * 1024)) | dd of="$T/proc/meminfo" conv=notrunc status=none
}
"$FAULTFS" "$T/back" "$T/mnt" > "$T/fs.log" 2>&1 &
FS=$!
for _ in $(seq 100); do mountpoint -q "$T/mnt" && break; sleep 0.05; done
check "faultfs: mounted" mountpoint -q "$T/mnt"

avail 8192
sleep 600 &
RANK=$!
out=$("$GUARD" --state-dir "$T/mnt/state" --proc-root "$T/proc" --pid "$RANK" --floor 1 \
    --kmsg "$T/no-kmsg" --daemon 2>&1); rc=$?
check "the guard starts on the FUSE STATE_DIR" [ $rc -eq 0 ] || printf '%s\n' "$out"
LOG=$T/back/state/memguard.log

kill -USR1 "$FS"
sleep 0.2
timeout -s KILL 2 sh -c "echo probe >> '$T/mnt/probe'"; prc=$?
check "writes to STATE_DIR now wait (a write there timed out)" [ $prc -eq 137 ]
hb0=$(stat -c %Y.%y "$T"/back/state/guard.*.heartbeat 2>/dev/null)

# below the floor while no write gets through
t0=$(date +%s%N)
avail 512
dead=
for _ in $(seq 100); do
    kill -0 "$RANK" 2>/dev/null || { dead=1; break; }
    sleep 0.05
done
t1=$(date +%s%N)
[ -n "$dead" ] && wait "$RANK" 2>/dev/null
echo "    (the rank died $(( (t1 - t0) / 1000000 )) ms after MemAvailable fell, writes blocked)"
check "writes blocked: the floor crossing still kills the rank" [ -n "$dead" ]
check "writes blocked: within the guard's slowest sample (1 s) and slack" [ $(( (t1 - t0) / 1000000 )) -le 3000 ]
check "writes blocked: nothing of it in the log yet" eval '! grep -q FIRED "$LOG"'
RANK=

# writes go through again: the guard catches up
kill -USR2 "$FS"
caught() { for _ in $(seq 100); do grep -q "FIRED: MemAvailable" "$LOG" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
check "writes back: the firing is in the log" caught
moved() {
    for _ in $(seq 100); do
        [ "$(stat -c %Y.%y "$T"/back/state/guard.*.heartbeat 2>/dev/null)" != "$hb0" ] && return 0
        sleep 0.1
    done
    return 1
}
check "writes back: the heartbeat moves again" moved
out=$("$GUARD" --state-dir "$T/mnt/state" --stop 2>&1)
check "the guard stops" contains "$out" "stopped"
summary
