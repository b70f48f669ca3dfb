#!/bin/bash
# download --to-workers on the test hosts: the simulator's hub (its own CDN,
# paced) on the head, the download there, and each file sent to the worker
# over copy-to-peer's streams as soon as the head has it verified - so the
# copy overlaps the download. Then both directories as the hub has them.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

D=$IT_DIR/dlcopy
rm -rf "$D"
mkdir -p "$D"
HUB=$D/hub
C1=$("$IT_ROOT/tests/hub/mkrepo.sh" "$HUB" 16 3)
REV=$HUB/revs/$C1
REPO=0xSero/DeepSeek-V4.1-Flash-Spark
HP=$(test_ports)
# 4 MB/s per connection, and the last shard's bytes held back until the worker
# has a file: the copy must overlap the download however slow this machine is
# (HF_STALL_S: the held connection is tried again meanwhile, as a stall is)
GATE=$D/worker-has-a-file
on_host head env DSV41_HUB_FAULTS="rate=4000000,gate=model-00006-of-00006.safetensors@$GATE" "$SIM" hub --root "$HUB" --repo "$REPO" \
    --port "$HP" > "$D/hub.log" 2>&1 &
for _ in $(seq 100); do on_host head curl -sf -o /dev/null "http://127.0.0.1:$HP/_stats" && break; sleep 0.1; done

. "$IT_ROOT/tests/hub/expect_dir.sh"

# the gate opens once a file is whole on the worker (or after 150 s: then the
# overlap check below fails, as it should)
( for _ in $(seq 1500); do
      [ -n "$(find "$D/worker" -type f -name '*.json' ! -name '.*' 2>/dev/null)" ] && break
      sleep 0.1
  done; touch "$GATE" ) &
gate_pid=$!
out=$(top_head HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN= HF_TOKEN_PATH=/nonexistent \
    MODEL_DIR="$D/head" WORKER_MODEL_DIR="$D/worker" download --to-workers --connections 4 \
    --progress 1 2>&1); rc=$?
kill $gate_pid 2>/dev/null; wait $gate_pid 2>/dev/null; touch "$GATE"
check "download --to-workers: exit 0" [ $rc = 0 ]
[ $rc = 0 ] || printf '%s\n' "$out" | tail -20
check "the head's copy as the hub has it" expect_dir "$D/head"
check "the worker's copy as the hub has it" expect_dir "$D/worker"
check "said: every worker has every file" contains "$out" "download: every worker has every file, verified as it landed"
first_copy=$(printf '%s\n' "$out" | grep -n '^COPIED ' | head -1 | cut -d: -f1)
last_ok=$(printf '%s\n' "$out" | grep -n '^OK ' | tail -1 | cut -d: -f1)
check "overlapped: a file reached the worker before the download's last one was verified" \
    eval '[ -n "$first_copy" ] && [ -n "$last_ok" ] && [ "$first_copy" -lt "$last_ok" ]'
check "the progress line counts the worker's bytes" eval 'printf "%s\n" "$out" | grep -q "copied: worker .* of "'

# what the download verified, kept for the copy: the hub's sums, and a copy
# to another directory of the worker checks every file against them
st=$D/head/.dsv41-download.json
check "the download's state keeps the hub's sums (git sha1, LFS sha256)" eval \
    'jq -e "(.files[] | select(.path == \"config.json\") | .sha1 | test(\"^[0-9a-f]{40}$\")) and (.files[] | select(.path == \"exl3/qn/L00.part.safetensors\") | .sha256 | test(\"^[0-9a-f]{64}$\"))" "$st" > /dev/null'
out=$(top_head MODEL_DIR="$D/head" WORKER_MODEL_DIR="$D/worker2" copy-to-peer --progress 0 2>&1); rc=$?
check "copy-to-peer after the download: exit 0, as the hub has it" eval '[ $rc = 0 ] && expect_dir "$D/worker2"'
check "copy-to-peer after the download: every file checked against the hub" \
    eval 'printf "%s\n" "$out" | grep -q " 0 against the head.s sum alone$"'

# again: nothing fetched, nothing sent
out=$(top_head HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN= HF_TOKEN_PATH=/nonexistent \
    MODEL_DIR="$D/head" WORKER_MODEL_DIR="$D/worker" download --to-workers 2>&1); rc=$?
# (the small files the hub names by git sha1 alone go again: nothing vouches for them)
check "again: exit 0, no shard or bank copied again" eval '[ $rc = 0 ] && ! printf "%s\n" "$out" | grep -q "^COPIED .*safetensors"'
out=$(top_head download --to-workers --json 2>&1); rc=$?
check "--to-workers with --json: refused, exit 2" eval '[ $rc = 2 ] && contains "$out" "does not go with --json"'
pkill -f "$SIM hub --root $HUB" 2>/dev/null
rm -rf "$D"
summary
