#!/bin/bash
# dsv41-sim on loopback: the argument checks launch relies on, the rank
# rendezvous, the startup log, and the API in vLLM's formats with bearer auth.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
SIM=${DSV41_SIM:-$root/build/dsv41-sim}
T=$(mktemp -d /tmp/dsv41-sim-test.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
MP=$(test_ports)
PORT=$((MP + 1))
KEY=simkey-$RANDOM
BASE="/model --served-model-name deepseek-v4.1-flash --tensor-parallel-size 2 --nnodes 2 --master-addr 127.0.0.1 --master-port $MP"

# --- arguments ---------------------------------------------------------------
# shellcheck disable=SC2086
out=$("$SIM" $BASE --node-rank 1 2>&1); rc=$?
check "rank 1 without --headless is refused" [ $rc -eq 2 ]
check "...and says why" contains "$out" "--node-rank > 0 needs --headless"
out=$("$SIM" /model --nnodes 2 --node-rank 0 --tensor-parallel-size 2 2>&1); rc=$?
check "missing --master-addr is refused" [ $rc -eq 2 ]
check "...and says why" contains "$out" "needs --master-addr"
# shellcheck disable=SC2086
out=$("$SIM" $BASE --node-rank 0 --bogus-flag 2>&1); rc=$?
check "an unknown vLLM flag is refused" contains "$out" "unrecognized arguments: --bogus-flag"
# shellcheck disable=SC2086
out=$("$SIM" $BASE --node-rank 0 --compilation-config '{"cudagraph_mode":' 2>&1); rc=$?
check "a broken JSON config is refused" contains "$out" "value is not a JSON object"
# vLLM's --override-generation-config takes one JSON argument: a JSON split in two is refused
# shellcheck disable=SC2086
out=$("$SIM" $BASE --node-rank 0 --override-generation-config '{temperature:' '0.6}' 2>&1); rc=$?
check "a JSON split into words is refused" contains "$out" "argument --override-generation-config: value is not a JSON object"
# shellcheck disable=SC2086
out=$("$SIM" $BASE --node-rank 1 --headless --port 8000 2>&1); rc=$?
check "a headless rank with --port is refused" [ $rc -eq 2 ]

# --- ranks that disagree on --nnodes ---------------------------------------------
# shellcheck disable=SC2086
DSV41_SIM_JOIN_TIMEOUT_MS=5000 "$SIM" $BASE --node-rank 0 --port "$PORT" --host 127.0.0.1 >"$T/r0.log" 2>&1 &
r0=$!; PIDS+=($r0)
sleep 0.3
"$SIM" /model --tensor-parallel-size 3 --nnodes 3 --master-addr 127.0.0.1 --master-port "$MP" \
    --node-rank 1 --headless >"$T/r1.log" 2>&1; rc1=$?
wait $r0; rc0=$?
check "nnodes mismatch: the joining rank fails" [ $rc1 -ne 0 ]
check "nnodes mismatch: rank 0 fails" [ $rc0 -ne 0 ]
check "nnodes mismatch: rank 0 names it" contains "$(cat "$T/r0.log")" "joined with --nnodes 3 but rank 0 has --nnodes 2"

# --- a worker that dies while loading: rank 0 never serves (vLLM's API waits for the
# workers' init), says the peer is gone, and ends when stopped ----------------------
# shellcheck disable=SC2086
DSV41_SIM_BOOT_MS=300 "$SIM" $BASE --node-rank 0 --port "$PORT" --host 127.0.0.1 >"$T/r0.log" 2>&1 &
r0=$!; PIDS+=($r0)
# shellcheck disable=SC2086
DSV41_SIM_BOOT_MS=300 DSV41_SIM_DIE_AT=3 "$SIM" $BASE --node-rank 1 --headless >"$T/r1.log" 2>&1; rc1=$?
check "worker dies loading: it fails" [ $rc1 -eq 1 ]
for _ in $(seq 100); do grep -q "closed the connection during startup" "$T/r0.log" && break; sleep 0.05; done
check "worker dies loading: rank 0 says the peer is gone" grep -q "closed the connection during startup" "$T/r0.log"
sleep 0.5 # rank 0's own boot (300 ms) is over: it would serve by now
check "worker dies loading: rank 0 never serves" eval '! curl -s -o /dev/null "http://127.0.0.1:$PORT/health"'
kill -TERM $r0
wait $r0; rc0=$?
check "worker dies loading: rank 0 ends when stopped" [ $rc0 -eq 1 ]

# --- a good pair: rendezvous, startup log, API ----------------------------------------
export VLLM_API_KEY=$KEY DSV41_SIM_BOOT_MS=600 DSV41_SIM_DECODE_TPS=200 DSV41_SIM_PREFILL_TPS=100000
t0=$(date +%s%N)
# shellcheck disable=SC2086
"$SIM" $BASE --node-rank 0 --port "$PORT" --host 127.0.0.1 --max-model-len 4096 >"$T/r0.log" 2>&1 &
r0=$!; PIDS+=($r0)
sleep 0.3
check "rank 0 waits for rank 1 before loading" eval '! grep -q "Loading weights" "$T/r0.log"'
# shellcheck disable=SC2086
"$SIM" $BASE --node-rank 1 --headless >"$T/r1.log" 2>&1 &
r1=$!; PIDS+=($r1)
up=0
for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/health" && { up=1; break; }
    sleep 0.05
done
t1=$(date +%s%N)
check "the API comes up" [ $up -eq 1 ]
check "boot takes the configured time" [ $(( (t1 - t0) / 1000000 )) -ge 500 ]
log=$(cat "$T/r0.log")
prev=0
for phase in "vLLM API server version" "rank 1 joined" "Loading safetensors checkpoint shards" \
    "Loading weights took" "Model loading took" "torch.compile takes" "Available KV cache memory" \
    "GPU KV cache size" "Capturing CUDA graphs" "Graph capturing finished" "init engine" \
    "Starting vLLM API server" "Application startup complete."; do
    n=$(printf '%s\n' "$log" | grep -n -F "$phase" | head -1 | cut -d: -f1)
    check "startup line in order: $phase" [ "${n:-0}" -gt "$prev" ]
    prev=${n:-$prev}
done
check "rank 1 logs its join" contains "$(cat "$T/r1.log")" "rank 1 joined the group at 127.0.0.1:$MP"

code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/models")
check "no key: 401" [ "$code" = 401 ]
check "no key: vLLM's body" [ "$(cat "$T/body")" = '{"error":"Unauthorized"}' ]
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer wrong" "http://127.0.0.1:$PORT/v1/models")
check "wrong key: 401" [ "$code" = 401 ]
models=$(curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/models")
check "models: id" [ "$(printf '%s' "$models" | jq -r '.data[0].id')" = deepseek-v4.1-flash ]
check "models: max_model_len" [ "$(printf '%s' "$models" | jq -r '.data[0].max_model_len')" = 4096 ]
check "models: owned_by vllm" [ "$(printf '%s' "$models" | jq -r '.data[0].owned_by')" = vllm ]

chat='{"model":"deepseek-v4.1-flash","messages":[{"role":"user","content":"What is 17 * 23?"}],"stream":true,"stream_options":{"include_usage":true}}'
sse=$(curl -sN -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d "$chat" "http://127.0.0.1:$PORT/v1/chat/completions")
check "stream: ends with [DONE]" [ "$(printf '%s\n' "$sse" | grep '^data:' | tail -1)" = "data: [DONE]" ]
first=$(printf '%s\n' "$sse" | grep '^data: {' | head -1 | sed 's/^data: //')
check "stream: first delta is the role" [ "$(printf '%s' "$first" | jq -c '.choices[0].delta')" = '{"role":"assistant","content":""}' ]
check "stream: chunk object" [ "$(printf '%s' "$first" | jq -r '.object')" = chat.completion.chunk ]
content=$(printf '%s\n' "$sse" | grep '^data: {' | sed 's/^data: //' | jq -rj '.choices[0].delta.content // empty')
check "stream: the answer" [ "$content" = "17 * 23 = 391." ]
usage=$(printf '%s\n' "$sse" | grep '^data: {' | sed 's/^data: //' | jq -c 'select(.usage) | [.choices, .usage.completion_tokens > 0]')
check "stream: usage chunk with empty choices" [ "$usage" = '[[],true]' ]
fin=$(printf '%s\n' "$sse" | grep '^data: {' | sed 's/^data: //' | jq -r '.choices[0].finish_reason // empty')
check "stream: finish_reason stop" [ "$fin" = stop ]

body=$(curl -s -H "Authorization: Bearer $KEY" -d '{"model":"m","messages":[{"role":"user","content":"What is 17 * 23?"}]}' "http://127.0.0.1:$PORT/v1/chat/completions")
check "non-stream: message content" [ "$(printf '%s' "$body" | jq -r '.choices[0].message.content')" = "17 * 23 = 391." ]
check "non-stream: usage" [ "$(printf '%s' "$body" | jq -r '.usage.prompt_tokens > 0')" = true ]
body=$(curl -s -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":[1,2,3,4,5,6,7,8],"max_tokens":3}' "http://127.0.0.1:$PORT/v1/completions")
check "completions: token-id prompt counted" [ "$(printf '%s' "$body" | jq -r '.usage.prompt_tokens')" = 8 ]
check "completions: max_tokens gives finish length" [ "$(printf '%s' "$body" | jq -r '.choices[0].finish_reason')" = length ]
# prompt_logprobs as vLLM answers them (sim_logprobs.c cites the shape)
plp='{"model":"m","prompt":"The quick brown fox jumps","max_tokens":1,"temperature":0,"prompt_logprobs":5}'
a=$(curl -s -H "Authorization: Bearer $KEY" -d "$plp" "http://127.0.0.1:$PORT/v1/completions")
b=$(curl -s -H "Authorization: Bearer $KEY" -d "$plp" "http://127.0.0.1:$PORT/v1/completions")
check "prompt_logprobs: a position per prompt token, the first null" \
    eval '[ "$(printf "%s" "$a" | jq -c "[.choices[0].prompt_logprobs | length, .[0]]")" = "[7,null]" ]'
check "prompt_logprobs: ranks 1..k, plus the prompt token's own when outside them" \
    eval '[ "$(printf "%s" "$a" | jq -c "[.choices[0].prompt_logprobs[1:][] | [.[].rank] | map(select(. <= 5)) | sort] | unique")" = "[[1,2,3,4,5]]" ]'
check "prompt_logprobs: logprobs <= 0, keys token ids" \
    eval 'printf "%s" "$a" | jq -e "[.choices[0].prompt_logprobs[1:][] | to_entries[] | (.value.logprob <= 0) and (.key | test(\"^[0-9]+\$\"))] | all" >/dev/null'
check "prompt_logprobs: the same prompt, the same answer" [ "$(printf '%s' "$a" | jq -c .choices[0].prompt_logprobs)" = "$(printf '%s' "$b" | jq -c .choices[0].prompt_logprobs)" ]
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":"x","prompt_logprobs":21}' "http://127.0.0.1:$PORT/v1/completions")
check "prompt_logprobs above --max-logprobs (20): 400, vLLM's message" eval \
    '[ $code = 400 ] && grep -q "greater than max allowed: 20" "$T/body"'
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":"x","prompt_logprobs":2,"stream":true}' "http://127.0.0.1:$PORT/v1/completions")
check "prompt_logprobs with stream: 400" eval '[ $code = 400 ] && grep -q "not available when .stream=True." "$T/body"'
check "/version: vLLM's shape" [ "$(curl -s "http://127.0.0.1:$PORT/version" | jq -r .version)" = 0.11.1 ]
long=$(head -c 40000 /dev/zero | tr '\0' 'a')
code=$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $KEY" -d "{\"model\":\"m\",\"prompt\":\"$long\"}" "http://127.0.0.1:$PORT/v1/completions")
check "too long: 400" [ "$code" = 400 ]
check "too long: says maximum context length" contains "$(cat "$T/body")" "maximum context length is 4096 tokens"

# decode pacing: 64 tokens at 200 tok/s take about 0.32 s (a sanity check, not a benchmark)
t0=$(date +%s%N)
curl -s -o /dev/null -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":"tell a story","max_tokens":64,"stream":true}' "http://127.0.0.1:$PORT/v1/completions"
t1=$(date +%s%N)
check "tokens are paced at the configured rate" [ $(( (t1 - t0) / 1000000 )) -ge 300 ]
metrics=$(curl -s "http://127.0.0.1:$PORT/metrics")
check "metrics: generation counter moved" eval '[ "$(printf "%s\n" "$metrics" | awk "/^vllm:generation_tokens_total/ {print (\$2 > 60)}")" = 1 ]'

# a dead peer rank: health still 200, no tokens (vLLM's wedge)
kill -9 "$r1"; wait "$r1" 2>/dev/null; sleep 0.7
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health")
check "dead peer: /health still 200" [ "$code" = 200 ]
sse=$(curl -sN --max-time 2 -H "Authorization: Bearer $KEY" -d "$chat" "http://127.0.0.1:$PORT/v1/chat/completions")
check "dead peer: no tokens come" eval '! printf "%s" "$sse" | grep -q "391"'
check "dead peer: rank 0 logs it" contains "$(cat "$T/r0.log")" "NCCL WARN"

# --- SIGTERM drains, as vLLM does: no new connection, the streams in flight end --------
P2=$((PORT + 1))
start_single() { # log
    # shellcheck disable=SC2086
    DSV41_SIM_DECODE_TPS=20 "$SIM" /model --served-model-name deepseek-v4.1-flash \
        --tensor-parallel-size 1 --nnodes 1 --node-rank 0 --port "$P2" --host 127.0.0.1 >"$1" 2>&1 &
    s0=$!; PIDS+=($s0)
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$P2/health" && return 0; sleep 0.05; done
    return 1
}
# a stream of 64 tokens at 20 tok/s, until its first token has come
stream_bg() { # out
    curl -sN -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":"tell a story","max_tokens":64,"stream":true}' \
        "http://127.0.0.1:$P2/v1/completions" >"$1" 2>/dev/null &
    cpid=$!
    for _ in $(seq 100); do grep -q '^data: {' "$1" && return 0; sleep 0.05; done
    return 1
}
check "drain: the rank comes up" start_single "$T/s0.log"
check "drain: a stream is in flight" stream_bg "$T/s0.sse"
kill -TERM "$s0"
for _ in $(seq 100); do grep -q "Shutting down FastAPI HTTP server" "$T/s0.log" && break; sleep 0.05; done
curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$P2/health"; crc=$?
check "drain: a new connection after SIGTERM is refused (curl: couldn't connect)" [ $crc -eq 7 ]
wait "$cpid"
check "drain: the stream in flight ends with [DONE]" [ "$(grep '^data:' "$T/s0.sse" | tail -1)" = "data: [DONE]" ]
check "drain: ...with every token" [ "$(grep -c '^data: {' "$T/s0.sse")" -ge 64 ]
wait "$s0"; rc=$?
check "drain: the rank then exits 0" [ $rc -eq 0 ]
check "drain: logs that it waited" contains "$(cat "$T/s0.log")" "Waiting for 1 request(s) in flight to finish."
check "drain: start_single again" start_single "$T/s1.log"
check "second SIGTERM: a stream is in flight" stream_bg "$T/s1.sse"
kill -TERM "$s0"
for _ in $(seq 100); do grep -q "Shutting down FastAPI HTTP server" "$T/s1.log" && break; sleep 0.05; done
kill -TERM "$s0"
wait "$s0"; rc=$?
wait "$cpid"
check "second SIGTERM: the rank ends at once (143)" [ $rc -eq 143 ]
check "second SIGTERM: the stream is cut, no [DONE]" eval '! grep -q "^data: \[DONE\]" "$T/s1.sse"'

# --- an engine that dies (EngineDeadError): /health 503, the stream's error event, the
# server gone 5 s later unless VLLM_KEEP_ALIVE_ON_ENGINE_DEATH ---------------------------
dead_sim() { # log, extra env words...
    local log=$1
    shift
    # shellcheck disable=SC2086
    env DSV41_SIM_FAULT=dead:5 "$@" "$SIM" /model --served-model-name deepseek-v4.1-flash \
        --tensor-parallel-size 1 --nnodes 1 --node-rank 0 --port "$P2" --host 127.0.0.1 >"$log" 2>&1 &
    s0=$!; PIDS+=($s0)
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$P2/health" && return 0; sleep 0.05; done
    return 1
}
check "engine dead: the rank comes up" dead_sim "$T/d0.log" VLLM_KEEP_ALIVE_ON_ENGINE_DEATH=1
sse=$(curl -sN --max-time 10 -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":"tell a story","stream":true}' \
    "http://127.0.0.1:$P2/v1/completions")
check "engine dead: the stream ends with vLLM's error event, then [DONE]" eval \
    '[ "$(printf "%s\n" "$sse" | grep "^data:" | tail -2 | head -1 | sed "s/^data: //" | jq -r .error.message)" = "EngineCore encountered an issue. See stack trace (above) for the root cause." ] && [ "$(printf "%s\n" "$sse" | grep "^data:" | tail -1)" = "data: [DONE]" ]'
check "engine dead: /health answers 503" eval '[ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$P2/health")" = 503 ]'
check "engine dead: a new request gets 500 with the message" eval \
    '[ "$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $KEY" -d "{\"model\":\"m\",\"prompt\":\"x\"}" "http://127.0.0.1:$P2/v1/completions")" = 500 ]'
sleep 6
check "engine dead, VLLM_KEEP_ALIVE_ON_ENGINE_DEATH=1: the server stays" kill -0 "$s0"
kill "$s0"; wait "$s0" 2>/dev/null
check "engine dead: the rank comes up again" dead_sim "$T/d1.log"
curl -sN --max-time 10 -H "Authorization: Bearer $KEY" -d '{"model":"m","prompt":"tell a story","stream":true}' \
    "http://127.0.0.1:$P2/v1/completions" >/dev/null
t0=$SECONDS
wait "$s0"; rc=$?
check "engine dead: the server ends by itself within the watchdog's 5 s (exit 1)" \
    eval '[ $rc -eq 1 ] && [ $((SECONDS - t0)) -le 8 ]'
summary
