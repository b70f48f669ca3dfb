#!/bin/bash
# copy-to-peer over real ssh between the test hosts. The default path: TCP
# streams to dsv41-xfer on the worker, each file verified as it lands - what
# goes and what stays (the Engram .partNN pieces, .cache/), a second run that
# sends nothing, a byte flipped on the way, either end killed with -9 on a
# slowed link (tbf) and the copy resumed sending little twice, a power cut on
# the worker (only what its state said was synced counts), a stranger's
# stream refused, a link cut for 20 s, a disk too small, the helper gone when
# the ssh session dies. Then --rsync, the ssh path, with its check after.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

H=$IT_DIR/copy-head W=$IT_DIR/copy-worker
rm -rf "$H" "$W" "$W.rsync"
mkdir -p "$H/exl3/qn" "$H/exl3/plan" "$H/.cache/huggingface"
head -c 16777216 /dev/urandom > "$H/model-00001-of-00006.safetensors"
printf '{}\n' > "$H/config.json"
head -c 3000000 /dev/urandom > "$H/exl3/qn/L00.part.safetensors"
printf '{}\n' > "$H/exl3/plan/J268-ho-v31-K5n.json"
printf 'piece\n' > "$H/model-00005-of-00006.safetensors.part01"
printf 'lock\n' > "$H/.cache/huggingface/x.lock"
(cd "$H" && sha256sum model-00001-of-00006.safetensors config.json > sha256-manifest.txt)
V="MODEL_DIR=$H WORKER_MODEL_DIR=$W"

# the files of the head that must be on the worker, byte for byte
same_tree() { # worker dir
    local f bad=0
    for f in model-00001-of-00006.safetensors config.json exl3/qn/L00.part.safetensors \
             exl3/plan/J268-ho-v31-K5n.json sha256-manifest.txt "${@:2}"; do
        cmp -s "$H/$f" "$1/$f" || { echo "    differs: $f" >&2; bad=1; }
    done
    [ -z "$(find "$1" -name '*.incomplete')" ] || { echo "    left: $(find "$1" -name '*.incomplete')" >&2; bad=1; }
    return $bad
}
# the bytes of FILE the worker's state says landed: its live state (each
# second, what reached the page cache) when there is one, else its durable one
landed() { # worker dir, file
    local s=$1/.dsv41-copy.live
    [ -s "$s" ] || s=$1/.dsv41-copy.state
    ranges_in "$s" "$2"
}
# ... that the durable state says are on the disk
synced() { ranges_in "$1/.dsv41-copy.state" "$2"; }
ranges_in() { # state file, file
    awk -v f="$2" '$1 == "file" { cur = ($NF == f) } cur && $1 == "range" { s += $3 - $2 } END { print s + 0 }' \
        "$1" 2>/dev/null || echo 0
}
sent_of() { printf '%s\n' "$1" | sed -n 's/.*copied: .* file(s) sent ([^,]*, \([0-9]*\) bytes.*/\1/p'; }
helper_running() { pgrep -f "$IT_DIR/worker/state/bin/dsv41-xfer" > /dev/null; }
# waits (up to 60 s) until the worker's state has more than N bytes of the
# big shard: the copy is under way, whatever the machine's speed
grows_past() { # N
    for _ in $(seq 300); do
        [ "$(landed "$W" model-00002-of-00006.safetensors)" -gt "$1" ] && return 0
        sleep 0.2
    done
    return 1
}

out=$(top_head copy-to-peer --help); rc=$?
check "--help: usage, exit 0" eval '[ $rc = 0 ] && contains "$out" "usage: dsv41-top copy-to-peer" && contains "$out" "--rsync"'
out=$(top_head $V copy-to-peer --streams 0 2>&1); rc=$?
check "--streams 0: refused, exit 2" eval '[ $rc = 2 ] && contains "$out" "--streams: a number from 1"'
# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --dry-run 2>&1); rc=$?
check "dry run: exit 0, the files it would send" eval '[ $rc = 0 ] && contains "$out" "worker: + model-00001-of-00006.safetensors (16.8 MB)" && contains "$out" "worker: 5 file(s) to send"'
check "dry run: nothing sent" [ ! -e "$W/model-00001-of-00006.safetensors" ]

# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --progress 0 2>&1); rc=$?
check "copy: exit 0" [ $rc = 0 ]
[ $rc = 0 ] || printf '%s\n' "$out" | tail -15
check "copy: every file intact, nothing left incomplete" same_tree "$W"
check "copy: the Engram pieces stay home" [ ! -e "$W/model-00005-of-00006.safetensors.part01" ]
check "copy: .cache stays home" [ ! -e "$W/.cache" ]
check "copy: said per file" contains "$out" "worker: + config.json"
check "copy: verified as it landed, said" contains "$out" "every file in place and verified as it landed"
check "copy: the EXL3 bank count compared" contains "$out" "worker: EXL3 bank files: 2, as on the head"
check "copy: the head's times kept" [ "$(stat -c %Y "$W/model-00001-of-00006.safetensors")" = "$(stat -c %Y "$H/model-00001-of-00006.safetensors")" ]
check "copy: the one-time token removed from the worker" [ ! -e "$IT_DIR/worker/state/copy-token" ]
check "copy: the token never on a command line" eval '! grep -q -- "--token " <<< "$out"'
sleep 1
check "copy: the helper gone after the copy" eval '! helper_running'

# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer 2>&1); rc=$?
check "again: exit 0, nothing sent (the worker's state vouches)" eval '[ $rc = 0 ] && [ "$(sent_of "$out")" = 0 ] && ! contains "$out" "worker: + " 2>/dev/null'

# shellcheck disable=SC2086
json=$(top_head $V copy-to-peer --json 2>/dev/null); rc=$?
check "--json: exit 0, JSON lines only, the end says ok" eval '[ $rc = 0 ] && printf "%s\n" "$json" | jq -e . > /dev/null && jq_is "$(printf "%s\n" "$json" | tail -1)" ".event + \" \" + (.ok | tostring)" "end true"'
out=$(top_head $V copy-to-peer --json --rsync 2>&1); rc=$?
check "--json with --rsync: refused, exit 2" eval '[ $rc = 2 ] && contains "$out" "--json goes with the streams"'

# a byte flipped on its way (a test hook in the head's sender): the worker's
# hash catches it, the file goes again
rm -rf "$W"
# shellcheck disable=SC2086
out=$(top_head $V DSV41_XFER_TEST_FLIP=model-00001-of-00006.safetensors@5000000 copy-to-peer 2>&1); rc=$?
check "a flipped byte: caught on the worker, sent again, exit 0" eval '[ $rc = 0 ] && contains "$out" "model-00001-of-00006.safetensors: its hash differed on the worker: sending it again" && same_tree "$W"'

# a larger shard on a slowed link: 64 MiB at 40 Mbit/s takes ~13 s
head -c 67108864 /dev/urandom > "$H/model-00002-of-00006.safetensors"
(cd "$H" && sha256sum model-00001-of-00006.safetensors model-00002-of-00006.safetensors config.json > sha256-manifest.txt)
S2=67108864
on_host head tc qdisc add dev "$FABRIC_IF" root tbf rate 40mbit burst 32kbit latency 400ms

# the head killed with -9 mid-way: the ssh session dies, and the helper with it
# shellcheck disable=SC2086
top_head $V copy-to-peer --progress 0.5 > "$IT_DIR/copy.out" 2>&1 &
pid=$!
grows_past 0 && sleep 1
kill_in_ns head dsv41-top KILL
wait $pid
for _ in $(seq 50); do helper_running || break; sleep 0.2; done
check "head killed: the helper gone with the ssh session" eval '! helper_running'
out=$(cat "$IT_DIR/copy.out")
check "head killed: progress lines came first, with the streams" eval 'printf "%s\n" "$out" | grep -q "^copy worker: .* %.* streams, .*/s each$"'
got=$(landed "$W" model-00002-of-00006.safetensors)
check "head killed: the landed ranges kept" eval '[ "$got" -gt 0 ] && [ "$got" -lt $S2 ] && [ -f "$W/model-00002-of-00006.safetensors.incomplete" ]'

# the helper killed with -9 mid-way: said, the copy ends
# shellcheck disable=SC2086
top_head $V copy-to-peer --progress 0 > "$IT_DIR/copy.out" 2>&1 &
pid=$!
grows_past "$got"
pkill -9 -f "$IT_DIR/worker/state/bin/dsv41-xfer"
wait $pid; rc=$?
out=$(cat "$IT_DIR/copy.out")
check "helper killed: exit 1, said, resumable" eval '[ $rc = 1 ] && contains "$out" "the helper ended before the copy did" && contains "$out" "run copy-to-peer again to resume"'
got2=$(landed "$W" model-00002-of-00006.safetensors)
check "helper killed: more landed, kept" eval '[ "$got2" -gt "$got" ] && [ "$got2" -lt $S2 ]'

# resumed, with a stranger knocking and the link cut for 10 s on the way: the
# streams wait it out. (A cut longer than ServerAliveInterval x CountMax,
# 15 s, drops the ssh session the helper runs on, by design: the node is
# then down, and the copy ends resumable.)
# shellcheck disable=SC2086
top_head $V copy-to-peer --progress 1 > "$IT_DIR/copy.out" 2>&1 &
pid=$!
port=
for _ in $(seq 300); do
    port=$(on_host worker ss -ltnp 2>/dev/null | awk '/dsv41-xfer/ { n = split($4, a, ":"); print a[n]; exit }')
    [ -n "$port" ] && break
    sleep 0.1
done
on_host head sh -c "printf 'DSV41XFER1 %064d\n' 0 | timeout 5 nc -q 1 $WORKER_IP $port" > /dev/null 2>&1
on_host head sh -c "printf 'hello\n' | timeout 5 nc -q 1 $WORKER_IP $port" > /dev/null 2>&1
sleep 1
FW=(nsenter --net="/run/netns/$NS_WORKER" iptables)
"${FW[@]}" -I INPUT -s "$HEAD_IP" -j DROP
sleep 10
"${FW[@]}" -D INPUT -s "$HEAD_IP" -j DROP
wait $pid; rc=$?
out=$(cat "$IT_DIR/copy.out")
check "resumed across a 10 s cut: exit 0, every file intact" eval '[ $rc = 0 ] && same_tree "$W" model-00002-of-00006.safetensors'
[ $rc = 0 ] || printf '%s\n' "$out" | grep -v '^copy worker' | tail -10
sent=$(sent_of "$out")
check "resumed: sent what had not landed, not the whole shard again" eval '[ -n "$sent" ] && [ "$sent" -lt $S2 ] && [ "$sent" -le $((S2 - got2 + S2 / 20)) ]'
echo "    the shard: $S2 bytes; landed before the resume: $got2; the resume sent: ${sent:-?}"
check "a stranger's streams refused, said" eval 'contains "$out" "worker: refused a stream from $HEAD_IP: no token or a wrong one"'

# a power cut on the worker mid-way: its directory on a file system of the
# test's own that, on SIGPWR, keeps only what was synced (tests/fuse/faultfs
# --cut). The helper killed, the power cut, then the copy again: it sends
# what had not reached the disk and no more, and no byte the state claimed
# was lost (a claimed range the cut undid would fail the shard's sha256).
make -s -C "$IT_ROOT" build/tests/faultfs > /dev/null
P=$IT_DIR/copy-cut-head C=$IT_DIR/copy-cut
mkdir -p "$P" "$C" "$C.back"
head -c 50331648 /dev/urandom > "$P/model-00001-of-00006.safetensors" # ~10 s at 40 Mbit/s
(cd "$P" && sha256sum model-00001-of-00006.safetensors > sha256-manifest.txt)
S3=50331648
"$IT_ROOT/build/tests/faultfs" --cut "$C.back" "$C" -o allow_other > "$IT_DIR/faultfs.log" 2>&1 &
fs=$!
trap 'fusermount3 -u "$C" 2>/dev/null' EXIT # a test that ends early leaves no mount
for _ in $(seq 100); do mountpoint -q "$C" && break; sleep 0.05; done
check "power cut: the worker's directory on faultfs" mountpoint -q "$C"
top_head MODEL_DIR="$P" WORKER_MODEL_DIR="$C" copy-to-peer --progress 0 > "$IT_DIR/copy.out" 2>&1 &
pid=$!
for _ in $(seq 300); do
    [ "$(synced "$C" model-00001-of-00006.safetensors)" -gt 0 ] && break
    sleep 0.2
done
pkill -9 -f "$IT_DIR/worker/state/bin/dsv41-xfer"
wait $pid
for _ in $(seq 50); do helper_running || break; sleep 0.1; done
kept=$(synced "$C" model-00001-of-00006.safetensors)
kill -PWR "$fs"
for _ in $(seq 50); do grep -q "power cut" "$IT_DIR/faultfs.log" && break; sleep 0.1; done
check "power cut: what was not synced undone (the live state with it)" \
    grep -q "power cut: .* [1-9][0-9]* byte(s) undone" "$IT_DIR/faultfs.log"
check "power cut: the durable state held part of the shard" eval '[ "$kept" -gt 0 ] && [ "$kept" -lt $S3 ]'
out=$(top_head MODEL_DIR="$P" WORKER_MODEL_DIR="$C" copy-to-peer --progress 0 2>&1); rc=$?
check "after the power cut: exit 0, the shard intact" eval '[ $rc = 0 ] && cmp -s "$P/model-00001-of-00006.safetensors" "$C/model-00001-of-00006.safetensors"'
check "after the power cut: no range the state claimed was lost" eval '! grep -q differed <<< "$out"'
sent=$(sent_of "$out")
check "after the power cut: sent what had not reached the disk, not the whole shard" \
    eval '[ -n "$sent" ] && [ "$sent" -lt $S3 ] && [ "$sent" -le $((S3 - kept + S3 / 20)) ]'
echo "    the shard: $S3 bytes; on the disk at the cut: $kept; sent after: ${sent:-?}"
fusermount3 -u "$C" 2>/dev/null || umount -l "$C"
trap - EXIT
kill "$fs" 2>/dev/null
wait "$fs" 2>/dev/null
rm -rf "$P" "$C" "$C.back"
on_host head tc qdisc del dev "$FABRIC_IF" root

# a disk too small on the worker: said before any byte, nothing renamed
SMALL=$IT_DIR/copy-small
mkdir -p "$SMALL" && mount -t tmpfs -o size=8m tmpfs "$SMALL"
out=$(top_head MODEL_DIR="$H" WORKER_MODEL_DIR="$SMALL" copy-to-peer 2>&1); rc=$?
check "a disk too small: exit 1, both numbers said" eval '[ $rc = 1 ] && contains "$out" "not enough space in $SMALL on this node" && contains "$out" "are free"'
check "a disk too small: nothing put in place" [ -z "$(find "$SMALL" -name '*.safetensors')" ]
umount "$SMALL"
# room at the start, none by the second file: the disk fills up mid-way (another
# writer), the second file cannot be preallocated - said, nothing half-renamed
mount -t tmpfs -o size=40m tmpfs "$SMALL"
E=$IT_DIR/copy-enospc
mkdir -p "$E"
head -c 20000000 /dev/urandom > "$E/model-00001-of-00006.safetensors"
head -c 15000000 /dev/urandom > "$E/model-00002-of-00006.safetensors"
(cd "$E" && sha256sum model-0000[12]-of-00006.safetensors > sha256-manifest.txt)
on_host head tc qdisc add dev "$FABRIC_IF" root tbf rate 40mbit burst 32kbit latency 400ms
top_head MODEL_DIR="$E" WORKER_MODEL_DIR="$SMALL" copy-to-peer --streams 1 --progress 0 > "$IT_DIR/copy.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -f "$SMALL/model-00001-of-00006.safetensors.incomplete" ] && break; sleep 0.1; done
head -c 30000000 /dev/zero > "$SMALL/filler" 2>/dev/null
wait $pid; rc=$?
on_host head tc qdisc del dev "$FABRIC_IF" root
out=$(cat "$IT_DIR/copy.out")
check "the disk full mid-way: exit 1, ENOSPC said with the directory" eval '[ $rc = 1 ] && contains "$out" "model-00002-of-00006.safetensors: No space left on device (in $SMALL on this node)"'
check "the disk full mid-way: the second file not put in place, the first one whole" eval '[ ! -e "$SMALL/model-00002-of-00006.safetensors" ] && cmp -s "$E/model-00001-of-00006.safetensors" "$SMALL/model-00001-of-00006.safetensors"'
umount "$SMALL"
rm -rf "$E"

# --rsync: through ssh, then checked on the worker
V="MODEL_DIR=$H WORKER_MODEL_DIR=$W.rsync"
# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --rsync --progress 0 2>&1); rc=$?
check "--rsync: exit 0, verified on the worker after" eval '[ $rc = 0 ] && contains "$out" "with rsync over ssh" && contains "$out" "verify worker: 3 of 3 file(s) OK" && same_tree "$W.rsync"'
check "--rsync: the Engram pieces stay home" [ ! -e "$W.rsync/model-00005-of-00006.safetensors.part01" ]
flip_byte "$W.rsync/model-00001-of-00006.safetensors" 100
touch -r "$H/model-00001-of-00006.safetensors" "$W.rsync/model-00001-of-00006.safetensors"
# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --rsync 2>&1); rc=$?
check "--rsync: a damaged copy rsync skips: the check fails, exit 1" eval \
    '[ $rc = 1 ] && contains "$out" "worker: FAILED      model-00001-of-00006.safetensors"'
# shellcheck disable=SC2086
out=$(top_head $V PATH=/nonexistent copy-to-peer --rsync 2>&1); rc=$?
check "--rsync, no rsync on the head: said, exit 2" eval '[ $rc = 2 ] && contains "$out" "cannot run rsync on the head"'
rm -rf "$H" "$W" "$W.rsync"
summary
