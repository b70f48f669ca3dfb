#!/bin/bash
# Installs the openai SDK (npm ci, from package-lock.json) and runs sdk.mjs
# against a simulator on loopback.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SIM=${DSV41_SIM:-$root/build/dsv41-sim}
cd "$here" || exit 1
if ! npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>npm.log; then
    cat npm.log >&2
    echo "FAIL - npm ci (the openai SDK could not be installed)"
    echo "0 passed, 1 failed"
    exit 1
fi
. "$root/tests/it/lib.sh"
PORT=$(test_ports)
KEY=sdk-$RANDOM
VLLM_API_KEY=$KEY DSV41_SIM_BOOT_MS=50 DSV41_SIM_DECODE_TPS=400 \
    "$SIM" /model --served-model-name deepseek-v4.1-flash --host 127.0.0.1 --port "$PORT" \
    --max-model-len 262144 >"$here/sim.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/health" && break; sleep 0.05; done
node sdk.mjs "http://127.0.0.1:$PORT" "$KEY"
