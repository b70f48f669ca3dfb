#!/bin/bash
# copy-to-peer over real ssh with real rsync on both test hosts: what goes
# (and what stays: the Engram .partNN pieces, .cache/), the check on the
# worker, a second run that sends nothing, a copy killed on a slowed link
# (tbf) that resumes, and rsync missing on the head.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

H=$IT_DIR/copy-head W=$IT_DIR/copy-worker
rm -rf "$H" "$W"
mkdir -p "$H/exl3/qn" "$H/exl3/plan" "$H/.cache/huggingface"
head -c 16777216 /dev/urandom > "$H/model-00001-of-00006.safetensors"
printf '{}\n' > "$H/config.json"
printf 'bank\n' > "$H/exl3/qn/L00.part.safetensors"
printf '{}\n' > "$H/exl3/plan/J268-ho-v31-K5n.json"
printf 'piece\n' > "$H/model-00005-of-00006.safetensors.part01"
printf 'lock\n' > "$H/.cache/huggingface/x.lock"
(cd "$H" && sha256sum model-00001-of-00006.safetensors config.json > sha256-manifest.txt)
V="MODEL_DIR=$H WORKER_MODEL_DIR=$W"

out=$(top_head copy-to-peer --help); rc=$?
check "--help: usage, exit 0" eval '[ $rc = 0 ] && contains "$out" "usage: dsv41-top copy-to-peer"'
# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --dry-run 2>&1); rc=$?
check "dry run: exit 0, the files it would send" eval '[ $rc = 0 ] && contains "$out" "worker: + model-00001-of-00006.safetensors"'
check "dry run: nothing sent" [ ! -e "$W/model-00001-of-00006.safetensors" ]

# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --progress 0 2>&1); rc=$?
check "copy: exit 0" [ $rc = 0 ]
check "copy: the shard arrived intact" cmp -s "$H/model-00001-of-00006.safetensors" "$W/model-00001-of-00006.safetensors"
check "copy: the EXL3 banks and plan" eval '[ -f "$W/exl3/qn/L00.part.safetensors" ] && [ -f "$W/exl3/plan/J268-ho-v31-K5n.json" ]'
check "copy: the Engram pieces stay home" [ ! -e "$W/model-00005-of-00006.safetensors.part01" ]
check "copy: .cache stays home" [ ! -e "$W/.cache" ]
check "copy: verified on the worker" contains "$out" "verify worker: 2 of 2 file(s) OK"
check "copy: the EXL3 bank count compared" contains "$out" "worker: EXL3 bank files: 2, as on the head"
check "copy: said per file" contains "$out" "worker: + config.json"

# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --no-verify 2>&1); rc=$?
check "again: exit 0, nothing sent" eval '[ $rc = 0 ] && ! contains "$out" "worker: + " 2>/dev/null'
check "--no-verify: no check" eval '! contains "$out" "verify worker" 2>/dev/null'

# a damaged copy on the worker is found by the check after the copy (rsync
# itself skips a file whose size and time match)
flip_byte "$W/model-00001-of-00006.safetensors" 100
touch -r "$H/model-00001-of-00006.safetensors" "$W/model-00001-of-00006.safetensors"
# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer 2>&1); rc=$?
check "a damaged copy rsync skips: the check fails, exit 1" eval \
    '[ $rc = 1 ] && contains "$out" "worker: FAILED      model-00001-of-00006.safetensors"'

# killed on a slow link, then resumed: 64 MiB at 40 Mbit/s takes ~13 s
head -c 67108864 /dev/urandom > "$H/model-00002-of-00006.safetensors"
on_host head tc qdisc add dev enp1s0f0np0 root tbf rate 40mbit burst 32kbit latency 400ms
# shellcheck disable=SC2086
top_head $V copy-to-peer --progress 0.5 > "$IT_DIR/copy.out" 2>&1 &
pid=$!
sleep 4
kill_in_ns head dsv41-top
wait $pid; rc=$?
on_host head tc qdisc del dev enp1s0f0np0 root
out=$(cat "$IT_DIR/copy.out")
check "killed: progress lines came first" eval 'printf "%s\n" "$out" | grep -q "^copy worker: .* % .*/s .* left$"'
check "killed: exit 1, said" eval '[ $rc = 1 ] && contains "$out" "worker: copy interrupted"'
part=$(stat -c %s "$W/model-00002-of-00006.safetensors" 2>/dev/null || echo 0)
check "killed: the partial file kept" eval '[ "$part" -gt 0 ] && [ "$part" -lt 67108864 ]'
# shellcheck disable=SC2086
out=$(top_head $V copy-to-peer --no-verify 2>&1); rc=$?
check "resumed: exit 0, the shard whole" eval '[ $rc = 0 ] && cmp -s "$H/model-00002-of-00006.safetensors" "$W/model-00002-of-00006.safetensors"'

# shellcheck disable=SC2086
out=$(top_head $V PATH=/nonexistent copy-to-peer 2>&1); rc=$?
check "no rsync on the head: said, exit 2" eval '[ $rc = 2 ] && contains "$out" "cannot run rsync on the head"'
rm -rf "$H" "$W"
summary
