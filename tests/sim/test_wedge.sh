#!/bin/bash
# The wedge rule (src/serve/wedge.c) through `watch --json` beside the
# simulator, whose engine follows vLLM v1 (tests/sim/sim_metrics.h): the
# prompt counter moves only with a request's first token, the KV-cache gauge
# rises chunk by chunk. Scaled in time: a prefill of MAX_LEN (262,144)
# tokens at 8 x the measured 2,050 tok/s lasts 16 s, four times
# WEDGE_SECONDS (4 s), and must raise no alarm; the same prefill frozen
# part-way (DSV41_SIM_FREEZE_AFTER_MS: a collective that never returns) must
# be called wedged within WEDGE_SECONDS + 10 s of the moment the simulator
# says it froze; and `bench` with its 32k prefills raises none.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
SIM=${DSV41_SIM:-$root/build/dsv41-sim}
TOP=${DSV41_BIN:-$root/build/dsv41-top}
T=$(mktemp -d /tmp/dsv41-wedge-test.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
PORT=$(test_ports)
URL=http://127.0.0.1:$PORT
KEY=wedge-$RANDOM
WEDGE=4
export HOME=$T XDG_CONFIG_HOME=$T STATE_DIR=$T/state DSV41_API_KEY=$KEY API_URL=$URL
unset WORKER
TPS=16400 # 8 x 2,050

start_sim() { # extra env words...
    [ -n "${SIMPID:-}" ] && { kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null; }
    env VLLM_API_KEY=$KEY DSV41_SIM_BOOT_MS=50 DSV41_SIM_PREFILL_TPS=$TPS DSV41_SIM_DECODE_TPS=100 \
        "$@" "$SIM" /model --served-model-name deepseek-v4.1-flash --host 127.0.0.1 \
        --port "$PORT" --max-num-batched-tokens 2048 > "$T/sim.log" 2>&1 &
    SIMPID=$!
    PIDS+=("$SIMPID")
    for _ in $(seq 100); do curl -sf -o /dev/null "$URL/health" && return 0; sleep 0.05; done
    return 1
}
start_watch() { # log
    WEDGE_SECONDS=$WEDGE PROBE_IDLE_S=3600 "$TOP" watch --json --interval 0.5 > "$1" 2>"$1.err" &
    WATCHPID=$!
    PIDS+=("$WATCHPID")
    for _ in $(seq 100); do grep -q '"key":"wedged"' "$1" && return 0; sleep 0.1; done
    return 1
}
stop_watch() { kill "$WATCHPID" 2>/dev/null; wait "$WATCHPID" 2>/dev/null; }
# a completion of N prompt token ids, 8 tokens out, streamed
long_prompt() { # tokens out
    awk -v n="$1" 'BEGIN { printf "{\"model\":\"deepseek-v4.1-flash\",\"max_tokens\":8,\"stream\":true,\"prompt\":["; for (i = 0; i < n; i++) printf "%s%d", i ? "," : "", 1000 + i % 5000; printf "]}" }' > "$2"
}
alarms() { grep '"key":"wedged"' "$1" | grep -c '"alarm":3'; }

# --- a MAX_LEN prefill: no alarm ------------------------------------------------------
long_prompt 262144 "$T/max.json"
start_sim
start_watch "$T/w1.json"
kv0=$(curl -s "$URL/metrics" | awk '/^vllm:kv_cache_usage_perc/ {print $2}')
t0=$(date +%s.%N)
curl -s -N -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    --data-binary @"$T/max.json" "$URL/v1/completions" > "$T/max.out" &
cp=$!
sleep 3
m=$(curl -s "$URL/metrics")
kv1=$(printf '%s\n' "$m" | awk '/^vllm:kv_cache_usage_perc/ {print $2}')
check "prefill: the request counts as running" eval 'printf "%s\n" "$m" | grep -q "^vllm:num_requests_running{.*} 1$"'
check "prefill: the prompt counter has not moved (vLLM v1 counts it with the first token)" \
    eval 'printf "%s\n" "$m" | grep -q "^vllm:prompt_tokens_total{.*} 0.0$"'
check "prefill: the KV-cache gauge rises chunk by chunk ($kv0 -> $kv1)" \
    awk -v a="$kv0" -v b="$kv1" 'BEGIN { exit !(b > a) }'
wait $cp
t1=$(date +%s.%N)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
sleep 1
m=$(curl -s "$URL/metrics")
check "prefill: the whole prompt counted once done" \
    eval 'printf "%s\n" "$m" | grep -q "^vllm:prompt_tokens_total{.*} 262144.0$"'
check "prefill: the blocks freed at the end" \
    eval 'printf "%s\n" "$m" | grep -q "^vllm:kv_cache_usage_perc{.*} 0$"'
stop_watch
check "prefill: it took longer than WEDGE_SECONDS ($took s)" awk -v a="$took" -v w="$WEDGE" 'BEGIN { exit !(a > w) }'
check "prefill: no wedge alarm during it" eval '[ "$(alarms "$T/w1.json")" = 0 ]' ||
    grep '"key":"wedged"' "$T/w1.json" | sed 's/^/    /'

# --- frozen part-way through the prefill: alarmed in time ------------------------------
start_sim DSV41_SIM_FREEZE_AFTER_MS=5000
start_watch "$T/w2.json"
curl -s -N -m 60 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    --data-binary @"$T/max.json" "$URL/v1/completions" > /dev/null &
cp=$!
PIDS+=("$cp")
for _ in $(seq 300); do [ "$(alarms "$T/w2.json")" != 0 ] && break; sleep 0.1; done
froze=$(awk '/engine frozen at/ {print $NF; exit}' "$T/sim.log")
said=$(grep '"key":"wedged"' "$T/w2.json" | grep '"alarm":3' | head -1)
check "freeze: the simulator froze mid-prefill, and says when" [ -n "$froze" ]
check "freeze: called wedged" [ -n "$said" ]
at=$(printf '%s' "$said" | jq -r .time | xargs -I{} date -d {} +%s)
late=$(awk -v a="${at:-0}" -v b="${froze:-0}" 'BEGIN { printf "%.0f", a - b }')
echo "    (frozen at $froze, wedge said $late s later; WEDGE_SECONDS $WEDGE)"
check "freeze: within WEDGE_SECONDS + 10 s of the freeze" \
    awk -v l="$late" -v w="$WEDGE" 'BEGIN { exit !(l >= w - 1 && l <= w + 10) }'
check "freeze: /health still 200 (a hang, not a dead engine)" \
    eval '[ "$(curl -s -o /dev/null -w "%{http_code}" "$URL/health")" = 200 ]'
check "freeze: the verdict names what stood still" contains "$said" "nothing moving for"
stop_watch
kill "$cp" 2>/dev/null

# --- bench's 32k prefills beside watch: no alarm --------------------------------------
# (the make demo's bench recorded a "wedged" incident with the earlier rule):
# at 2 x 2,050 tok/s each 32k prefill lasts 8 s, twice WEDGE_SECONDS
start_sim DSV41_SIM_PREFILL_TPS=4100
start_watch "$T/w3.json"
out=$("$TOP" bench "$URL" --prefill 32768 --reps 2 --conc 1 --kinds code --out "$T/b.json" 2>&1); rc=$?
stop_watch
check "bench: runs" [ $rc = 0 ] || printf '%s\n' "$out" | tail -5
check "bench beside watch: no wedge alarm" eval '[ "$(alarms "$T/w3.json")" = 0 ]' ||
    grep '"key":"wedged"' "$T/w3.json" | sed 's/^/    /'
summary
