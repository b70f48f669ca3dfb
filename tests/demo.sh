#!/bin/bash
# make demo: a simulated two-node deployment on this machine and the console
# looking at it. As root: two hosts in network namespaces (the head, and a
# worker reached over ssh), dsv41-sim ranks in podman; press s to start, t to
# smoke-test, b to bench, g for the gates, S to stop, q to quit. Quitting
# stops everything the demo started. Without root: one local simulator
# process stands in for the deployment, and the console says so.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/it/lib.sh"
if [ ! -t 0 ] || [ ! -t 1 ]; then
    echo "make demo opens the console: run it in a terminal" >&2
    exit 1
fi

if [ "$(id -u)" != 0 ] || ! command -v podman >/dev/null; then
    # the stand-in: one simulated rank 0 on loopback, no worker, no containers
    dir=$(mktemp -d)
    trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null; rm -rf "$dir"; echo "demo: stopped"' EXIT INT TERM
    printf 'demo-%s' "$RANDOM$RANDOM" > "$dir/api_key"; chmod 600 "$dir/api_key"
    VLLM_API_KEY=$(cat "$dir/api_key") DSV41_SIM_BOOT_MS=1000 "$SIM" /model \
        --served-model-name deepseek-v4.1-flash --port 8000 > "$dir/sim.log" 2>&1 &
    sim=$!
    STATE_DIR=$dir API_KEY_FILE=$dir/api_key "$BIN" \
        --title "demo: LOCAL STAND-IN (no root/podman: no test hosts; t b g work, s/S need them)"
    exit 0
fi

trap 'top_head stop >/dev/null 2>&1; "$root/tests/it/hosts.sh" down >/dev/null 2>&1; echo "demo: everything it started is stopped"' EXIT INT TERM
echo "demo: building the test hosts (head $HEAD_IP, worker $WORKER_IP over ssh)..."
"$root/tests/it/hosts.sh" up >/dev/null || exit 1
model_skeleton
mkdir -p "$IT_DIR/head/state" "$IT_DIR/worker/state"
# the console runs on the head host; press s to start the simulated ranks
top_head TERM="${TERM:-xterm-256color}" LANG="${LANG:-C.UTF-8}" \
    "EXTRA_ENV=DSV41_SIM_BOOT_MS=3000 DSV41_SIM_LOG_RATE=5" \
    --title "demo: simulated head + worker (ssh), dsv41-sim ranks in podman: press s to start"
