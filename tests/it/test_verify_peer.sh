#!/bin/bash
# verify on the worker over real ssh: the static dsv41-verify and the head's
# manifest pushed over sftp, the worker's copy hashed there; a corrupt copy,
# a forged manifest on the worker, a missing directory, Ctrl-C and a cut
# session (the helper must not outlive them).
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

H=$IT_DIR/verify-head W=$IT_DIR/verify-worker
rm -rf "$H" "$W"
mkdir -p "$H/exl3"
head -c 33554432 /dev/urandom > "$H/model-00001-of-00006.safetensors"
printf '{}\n' > "$H/config.json"
(cd "$H" && sha256sum model-00001-of-00006.safetensors config.json > sha256-manifest.txt)
cp -a "$H" "$W"
V="MODEL_DIR=$H WORKER_MODEL_DIR=$W"
helper_running() { pgrep -f "dsv41-verify --dir $W" >/dev/null; }
helper_gone_within_5s() {
    local i
    for i in $(seq 50); do helper_running || return 0; sleep 0.1; done
    echo "    still running: $(pgrep -af "dsv41-verify --dir $W")" >&2
    return 1
}

# shellcheck disable=SC2086
out=$(top_head $V verify --all 2>&1); rc=$?
check "all nodes: exit 0" [ $rc = 0 ]
check "all nodes: the head first" contains "$out" "verify: 2 file(s) on head in $H"
check "all nodes: the worker's own copy" contains "$out" "verify: 2 file(s) on worker in $W"
check "all nodes: a line per file on the worker" contains "$out" "worker: OK          model-00001-of-00006.safetensors  (33.6 MB)"
check "all nodes: the worker's summary" contains "$out" "verify worker: 2 of 2 file(s) OK, 33.6 MB hashed"
check "the helper beside dsv41-top is installed on the worker" \
    cmp -s "$(dirname "$BIN")/dsv41-verify" "$IT_DIR/worker/state/bin/dsv41-verify"
# (sanitizer builds link it dynamically: the sanitizers do not link statically)
check "the helper needs nothing on the worker: static" eval \
    '[[ $BIN == */build-* ]] || file "$IT_DIR/worker/state/bin/dsv41-verify" | grep -q "statically linked"'
check "the head's manifest is what the worker checked" cmp -s "$H/sha256-manifest.txt" "$IT_DIR/worker/state/verify-manifest.txt"

# the worker's copy damaged, and its own manifest forged to match: the
# head's manifest still catches it
flip_byte "$W/model-00001-of-00006.safetensors" 1000
(cd "$W" && sha256sum model-00001-of-00006.safetensors config.json > sha256-manifest.txt)
# shellcheck disable=SC2086
out=$(top_head $V verify --all 2>&1); rc=$?
check "a damaged worker copy: exit 1" [ $rc = 1 ]
check "a damaged worker copy: FAILED on the worker" contains "$out" "worker: FAILED      model-00001-of-00006.safetensors: sha256 differs"
check "a damaged worker copy: the head is fine" contains "$out" "verify head: 2 of 2 file(s) OK"
# shellcheck disable=SC2086
json=$(top_head $V verify --node worker --json 2>/dev/null); rc=$?
check "json: one node, the worker" jq_is "$json" '[.nodes[].node] | join(",")' worker
check "json: the failed file" jq_is "$json" '.nodes[0].files[] | select(.result == "FAILED") | .path' model-00001-of-00006.safetensors
check "json: not ok, exit 1" eval '[ $rc = 1 ] && jq_is "$json" .ok false'

# shellcheck disable=SC2086
out=$(top_head MODEL_DIR=$H WORKER_MODEL_DIR=/nonexistent verify --node worker 2>&1); rc=$?
check "no directory on the worker: said, exit 1" eval '[ $rc = 1 ] && contains "$out" "cannot read the directory /nonexistent"'
# shellcheck disable=SC2086
out=$(top_head $V verify --node nosuch 2>&1); rc=$?
check "an unknown node: the names, exit 2" eval '[ $rc = 2 ] && contains "$out" "no node is named nosuch (head, worker)"'

# long runs: a sparse 8 GB file (the head's manifest has a made-up sum)
truncate -s 8G "$W/huge.bin"
printf '%064d  huge.bin\n' 0 > "$IT_DIR/verify-huge.txt"
# shellcheck disable=SC2086
top_head $V verify --node worker --manifest "$IT_DIR/verify-huge.txt" --progress 0.5 > "$IT_DIR/verify.out" 2>&1 &
for _ in $(seq 100); do helper_running && break; sleep 0.1; done
sleep 1
kill_in_ns head dsv41-top
wait $!; rc=$?
out=$(cat "$IT_DIR/verify.out")
check "Ctrl-C: progress from the worker came first" contains "$out" "verify worker: "
check "Ctrl-C: interrupted, exit 1" eval '[ $rc = 1 ] && contains "$out" "; interrupted"'
check "Ctrl-C: the helper on the worker stops" helper_gone_within_5s

# shellcheck disable=SC2086
top_head $V verify --node worker --manifest "$IT_DIR/verify-huge.txt" > "$IT_DIR/verify.out" 2>&1 &
for _ in $(seq 100); do helper_running && break; sleep 0.1; done
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
wait $!; rc=$?
out=$(cat "$IT_DIR/verify.out")
check "session cut: said, exit 1" eval '[ $rc = 1 ] && contains "$out" "worker: the verify ended before its report"'
check "session cut: the file is not counted as verified" contains "$out" "CANCELLED   huge.bin"
check "session cut: the helper on the worker stops" helper_gone_within_5s
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker

# a worker of another CPU (its uname -m says aarch64, as a Spark's does): this
# host's helper is not pushed there, and the refusal names both and the fix
rm -f "$IT_DIR/worker/state/bin/dsv41-verify"
printf '#!/bin/sh\n[ "$1" = -m ] && echo aarch64 || exec /bin/uname "$@"\n' > "$IT_DIR/bin/uname"
chmod +x "$IT_DIR/bin/uname"
# shellcheck disable=SC2086
out=$(top_head $V verify --node worker 2>&1); rc=$?
rm -f "$IT_DIR/bin/uname"
check "another CPU: refused, exit 1" [ $rc = 1 ]
check "another CPU: both named, and the fix" contains "$out" \
    "worker is aarch64, but the helper dsv41-verify found next to this program is built for $(uname -m)"
check "another CPU: nothing pushed" [ ! -e "$IT_DIR/worker/state/bin/dsv41-verify" ]
rm -rf "$H" "$W"
summary
