#!/bin/bash
# make demo: a simulated two-node deployment on this machine (two hosts in
# network namespaces, sshd in the worker, dsv41-sim ranks in podman), and
# dsv41-top looking at it. The console is not built yet: the demo shows
# `status` and `doctor`, then leaves a shell on the head until you exit.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/it/lib.sh"
if [ "$(id -u)" != 0 ]; then
    echo "make demo builds two test hosts (network namespaces, sshd, podman) and needs root." >&2
    echo "Without root, try: ./dsv41-top status; ./dsv41-top doctor; ./dsv41-top config" >&2
    exit 1
fi
trap '"$root/tests/it/hosts.sh" down >/dev/null 2>&1; echo "demo: everything it started is stopped"' EXIT INT TERM
echo "demo: building the test hosts (head $HEAD_IP, worker $WORKER_IP over ssh)..."
"$root/tests/it/hosts.sh" up >/dev/null || exit 1
KEY=demo-$RANDOM$RANDOM
mkdir -p "$IT_DIR/head/state"
printf '%s' "$KEY" > "$IT_DIR/head/state/api_key"; chmod 600 "$IT_DIR/head/state/api_key"
printf 'VLLM_API_KEY=%s\n' "$KEY" > "$IT_DIR/head/rank0.env"; chmod 600 "$IT_DIR/head/rank0.env"
A="/model --served-model-name deepseek-v4.1-flash --tensor-parallel-size 2 --nnodes 2 --master-addr $HEAD_IP --master-port 29655"
echo "demo: starting the simulated ranks dsv41-r1 (worker) and dsv41-r0 (head)..."
# shellcheck disable=SC2086
on_host worker podman run -d --name dsv41-r1 --network host -e DSV41_SIM_BOOT_MS=2000 "$SIM_IMAGE" $A --node-rank 1 --headless >/dev/null
# shellcheck disable=SC2086
on_host head podman run -d --name dsv41-r0 --network host --env-file "$IT_DIR/head/rank0.env" -e DSV41_SIM_BOOT_MS=2000 "$SIM_IMAGE" $A --node-rank 0 --port 8000 >/dev/null
for _ in $(seq 100); do on_host head curl -sf -o /dev/null http://127.0.0.1:8000/health && break; sleep 0.1; done
# a checkpoint skeleton (empty files with the real names) so doctor has a model to find
model_skeleton
echo; echo "\$ dsv41-top status"; top_head IMG="$SIM_IMAGE" status
echo; echo "\$ dsv41-top doctor"; top_head IMG="$SIM_IMAGE" doctor
if [ -t 0 ]; then
    echo
    echo "demo: a shell on the head; dsv41-top is 'dt' here (try: dt status --json). Exit to stop."
    # shellcheck disable=SC2046
    on_host head env $(head_env) IMG="$SIM_IMAGE" PS1='head# ' bash --norc -i -c \
        "alias dt='$BIN'; shopt -s expand_aliases; exec bash --norc -i" || true
fi
