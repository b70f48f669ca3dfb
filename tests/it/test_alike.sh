#!/bin/bash
# The nodes alike and the fabric under running ranks, on the test hosts:
# each rank maps a file named libnccl.so.2 (DSV41_SIM_NCCL_DIR), as vLLM
# loads its NCCL; different bytes on the two nodes are a warning naming both
# sha256s, the same bytes none; another image under the same name on the
# worker is a warning with both image ids; the worker's RoCE v2 IPv4 GID
# renumbered in its sysfs tree mid-run is an alarm in watch and a problem in
# status. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
model_skeleton
M=$MODEL_SKELETON
for h in $HOSTS; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
SYS=$IT_DIR/sysfs-worker
rm -rf "$SYS"
cp -a "$IT_ROOT/tests/fixtures/sysfs/spark-worker" "$SYS"
mkdir -p "$M/nccl/r0" "$M/nccl/r1"
head -c 65536 /dev/urandom > "$M/nccl/r0/libnccl.so.2"
head -c 65536 /dev/urandom > "$M/nccl/r1/libnccl.so.2"
E=(WORKER_SYS_ROOT="$SYS")
out=$(top_head "${E[@]}" "EXTRA_ENV=DSV41_SIM_BOOT_MS=500 DSV41_SIM_NCCL_DIR=/model/nccl" launch 2>&1); rc=$?
check "launch with the worker's own sysfs tree" [ $rc -eq 0 ]

# --- NCCL: the library each rank has mapped ---------------------------------------------
json=$(top_head "${E[@]}" status --json 2>/dev/null)
check "alike: the worker's rank's NCCL found in its memory map" jq_is "$json" '.nodes[1].alike.nccl_path' "/model/nccl/r1/libnccl.so.2"
check "alike: its sha256, read through /proc/PID/root" jq_is "$json" '.nodes[1].alike.nccl_sha256' "$(sha256sum < "$M/nccl/r1/libnccl.so.2" | cut -d' ' -f1)"
check "alike: the kernel of each node" jq_is "$json" '.nodes[0].alike.kernel' "$(uname -r)"
check "alike: no NVIDIA driver on the head: null, not a made-up value" jq_is "$json" '.nodes[0].alike.driver' null
out=$(top_head "${E[@]}" status 2>&1)
h0=$(sha256sum < "$M/nccl/r0/libnccl.so.2" | cut -c1-19)
h1=$(sha256sum < "$M/nccl/r1/libnccl.so.2" | cut -c1-19)
check "alike: different NCCL builds, a warning with both" contains "$out" "warning: the nodes differ in the NCCL library (sha256): head $h0, worker $h1"
out=$(top_head "${E[@]}" doctor 2>&1)
check "alike: doctor warns too" contains "$out" "warn all    the nodes differ in the NCCL library"
cp "$M/nccl/r0/libnccl.so.2" "$M/nccl/r1/libnccl.so.2" # the same bytes (the mapped file changes in place)
out=$(top_head "${E[@]}" status 2>&1)
check "alike: the same NCCL bytes, no warning" eval '! printf "%s" "$out" | grep -q "differ in the NCCL"'

# a warm status (one process, its cluster held) keeps a rank's facts while
# that rank runs, and asks again for the rank a relaunch started
coproc SESSION { top_session "${E[@]}"; }
ask() { echo status >&"${SESSION[1]}"; local l; IFS= read -r -t 60 l <&"${SESSION[0]}"; printf '%s' "$l"; }
s1=$(ask)
s2=$(ask)
h1=$(sha256sum < "$M/nccl/r1/libnccl.so.2" | cut -d' ' -f1)
check "warm status: the worker's NCCL, asked" jq_is "$s1" '.nodes[1].alike.nccl_sha256' "$h1"
check "warm status: ... and the same kept for the same rank" jq_is "$s2" '.nodes[1].alike.nccl_sha256' "$h1"
head -c 65536 /dev/urandom > "$M/nccl/r1/libnccl.so.2.new"
mv "$M/nccl/r1/libnccl.so.2.new" "$M/nccl/r1/libnccl.so.2"
top_head "${E[@]}" "EXTRA_ENV=DSV41_SIM_BOOT_MS=500 DSV41_SIM_NCCL_DIR=/model/nccl" restart >/dev/null 2>&1
s3=$(ask)
check "warm status: the relaunched rank's NCCL asked again (new bytes)" jq_is "$s3" \
    '.nodes[1].alike.nccl_sha256' "$(sha256sum < "$M/nccl/r1/libnccl.so.2" | cut -d' ' -f1)"
exec {SESSION[1]}>&-
wait "$SESSION_PID" 2>/dev/null
cp "$M/nccl/r0/libnccl.so.2" "$M/nccl/r1/libnccl.so.2"
top_head "${E[@]}" "EXTRA_ENV=DSV41_SIM_BOOT_MS=500 DSV41_SIM_NCCL_DIR=/model/nccl" restart >/dev/null 2>&1

# --- another image under the same name on the worker --------------------------------------
orig=$(on_host worker podman image inspect -f '{{.Id}}' "$SIM_IMAGE")
printf 'FROM %s\nENV CUDA_VERSION=12.9.1\n' "$orig" > "$IT_DIR/Containerfile.alike"
on_host worker podman build --pull=never -q -t "$SIM_IMAGE" -f "$IT_DIR/Containerfile.alike" "$IT_DIR" >/dev/null 2>&1
new=$(on_host worker podman image inspect -f '{{.Id}}' "$SIM_IMAGE")
check "alike: a second build of the image on the worker" eval '[ -n "$new" ] && [ "$new" != "$orig" ]'
out=$(top_head "${E[@]}" status 2>&1)
check "alike: the image ids differ, both named" contains "$out" "warning: the nodes differ in the image id: head ${orig:0:12}"; check "alike: ... and the worker's" contains "$out" ", worker ${new:0:12}"
json=$(top_head "${E[@]}" status --json 2>/dev/null)
check "alike: CUDA from the worker's image" jq_is "$json" '.nodes[1].alike.cuda' "12.9.1"
on_host worker podman tag "$orig" "$SIM_IMAGE"
on_host worker podman rmi -f "$new" >/dev/null 2>&1
out=$(top_head "${E[@]}" status 2>&1)
check "alike: the same image again, no warning" eval '! printf "%s" "$out" | grep -q "differ in the image"'

# --- the GID index renumbered under the running ranks ------------------------------------
log=$IT_DIR/watch-alike.jsonl
top_head "${E[@]}" watch --json > "$log" 2>/dev/null &
wpid=$!
seen() { for _ in $(seq 300); do grep -q "$1" "$log" && return 0; sleep 0.1; done; return 1; }
check "drift: watch shows the worker's fabric as the rank started" seen '"key":"fabric.worker","value":"enp1s0f0np0 10.10.10.11 GID 5"'
P=$SYS/class/infiniband/rocep1s0f0/ports/1
echo "IB/RoCE v1" > "$P/gid_attrs/types/5" # a network re-apply: the IPv4 v2 GID is now at 7
cp "$P/gids/5" "$P/gids/7"
echo "RoCE v2" > "$P/gid_attrs/types/7"
echo enp1s0f0np0 > "$P/gid_attrs/ndevs/7"
check "drift: an alarm in watch" seen '"key":"fabric.worker","value":"CHANGED since the rank started: RoCE v2 IPv4 GID index 5 -> 7","alarm":8'
check "drift: said in the engine's messages" seen 'ALARM: worker: the fabric changed since rank r1 started'
out=$(top_head "${E[@]}" status 2>&1); rc=$?
check "drift: status calls it a problem" eval '[ $rc -eq 1 ] && printf "%s" "$out" | grep -q "problem: worker: the fabric changed since rank r1 started: RoCE v2 IPv4 GID index 5 -> 7"'
top_head "${E[@]}" watch --once >/dev/null 2>&1; rc=$?
check "drift: watch --once exits 8" [ $rc -eq 8 ]
pkill_in_ns head "dsv41-top watch --json"
wait "$wpid" 2>/dev/null
top_head "${E[@]}" stop >/dev/null 2>&1
rm -rf "$SYS" "$M/nccl"
summary
