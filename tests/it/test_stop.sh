#!/bin/bash
# stop across the test hosts with the simulator image: the graceful stop
# (rank 0 drains a stream in flight, then the worker), --now, the timeout's
# kill, Ctrl-C during a stop, and the ranks' bounded logs. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

clean_ranks() {
    on_host head podman rm -f -a -t 0 >/dev/null 2>&1
    on_host worker podman rm -f -a -t 0 >/dev/null 2>&1
}
no_containers() {
    [ -z "$(on_host worker podman ps -aq)" ] && [ -z "$(on_host head podman ps -aq)" ]
}
rm -rf "$MODEL_SKELETON"
model_skeleton
clean_ranks
key=$IT_DIR/head/state/api_key
SSE=$IT_DIR/stop.sse
# a streamed completion of 64 tokens at the rank's decode rate, in the
# background, once its first token has come
stream_bg() {
    : >"$SSE"
    on_host head curl -sN -H "Authorization: Bearer $(cat "$key")" \
        -d '{"model":"m","prompt":"tell a story","max_tokens":64,"stream":true}' \
        http://127.0.0.1:8000/v1/completions >"$SSE" 2>/dev/null &
    cpid=$!
    for _ in $(seq 200); do grep -q '^data: {' "$SSE" && return 0; sleep 0.05; done
    return 1
}
last_data() { grep '^data:' "$SSE" | tail -1; }
line_of() { # text needle: the first line number
    printf '%s\n' "$1" | grep -n -F -- "$2" | head -1 | cut -d: -f1
}
# 64 tokens at 10 tok/s: a stream of ~6 s, longer than a stop takes to begin
RANKS="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 DSV41_SIM_DECODE_TPS=10"

# --- the graceful stop: the stream in flight ends, rank 0 first ---------------------------
out=$(top_head "$RANKS" launch 2>&1); rc=$?
check "launch: ready" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "ready after"'
check "graceful: a stream is in flight" stream_bg
out=$(top_head STOP_TIMEOUT=120 stop 2>&1); rc=$?
wait "$cpid"
check "graceful: exit 0" [ $rc -eq 0 ]
check "graceful: rank 0 drains" contains "$out" "r0 head: stopping dsv41-r0 (draining, up to 120 s)..."
check "graceful: rank 0 says when it stopped" eval 'printf "%s\n" "$out" | grep -qE "^stopped dsv41-r0 on head after [0-9]+ s$"'
check "graceful: the worker gets the short timeout" contains "$out" "r1 worker: stopping dsv41-r1 (up to 10 s)..."
# (a headless rank whose head is gone may end on its own, exit code 1)
check "graceful: the worker stopped" eval 'printf "%s\n" "$out" | grep -qE "^stopped dsv41-r1 on worker after [0-9]+ s"'
check "graceful: rank 0 stopped before the worker is asked" \
    [ "$(line_of "$out" "stopped dsv41-r0 on head")" -lt "$(line_of "$out" "stopping dsv41-r1")" ]
check "graceful: the stream in flight ended with [DONE]" [ "$(last_data)" = "data: [DONE]" ]
check "graceful: ...with all its tokens" [ "$(grep -c '^data: {' "$SSE")" -ge 64 ]
check "graceful: no containers left" no_containers

# --- --now cuts a stream in flight ---------------------------------------------------
out=$(top_head "$RANKS" launch 2>&1)
check "now: a stream is in flight" stream_bg
# (podman's rm -f alone would SIGTERM and wait 10 s: the stream would drain)
out=$(top_head stop --now 2>&1); rc=$?
wait "$cpid"
check "now: exit 0" [ $rc -eq 0 ]
check "now: both ranks removed" eval 'printf "%s" "$out" | grep -q "^stopped dsv41-r0 on head$" && printf "%s" "$out" | grep -q "^stopped dsv41-r1 on worker$"'
check "now: no drain" eval '! printf "%s" "$out" | grep -q draining'
check "now: the stream was cut (no [DONE])" [ "$(last_data)" != "data: [DONE]" ]
check "now: no containers left" no_containers

# --- a rank that outlasts STOP_TIMEOUT is killed ---------------------------------------
SLOW="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 DSV41_SIM_DECODE_TPS=1"
out=$(top_head "$SLOW" launch 2>&1)
check "timeout: a stream is in flight" stream_bg
out=$(top_head STOP_TIMEOUT=2 stop 2>&1); rc=$?
wait "$cpid"
check "timeout: exit 0" [ $rc -eq 0 ]
check "timeout: rank 0 killed after the timeout" contains "$out" "killed dsv41-r0 on head after the 2 s timeout (it did not exit on SIGTERM)"
check "timeout: the stream was cut" [ "$(last_data)" != "data: [DONE]" ]
check "timeout: no containers left" no_containers

# --- Ctrl-C during a graceful stop: the rest at once ------------------------------------
out=$(top_head "$SLOW" launch 2>&1)
check "ctrl-c: a stream is in flight" stream_bg
top_head STOP_TIMEOUT=300 stop >"$IT_DIR/stop-int.log" 2>&1 &
spid=$!
for _ in $(seq 200); do grep -q "stopping dsv41-r0 (draining" "$IT_DIR/stop-int.log" && break; sleep 0.05; done
sleep 0.5
for p in $(ip netns pids "$NS_HEAD"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dsv41-top ] && kill -INT "$p"
done
wait "$spid"; rc=$?
wait "$cpid"
out=$(cat "$IT_DIR/stop-int.log")
check "ctrl-c: exit 0" [ $rc -eq 0 ]
check "ctrl-c: says it switched to --now" contains "$out" "interrupted by SIGINT (Ctrl-C): removing the remaining ranks at once (as stop --now)"
check "ctrl-c: rank 0 removed" contains "$out" "stopped dsv41-r0 on head (removed at once after"
check "ctrl-c: the worker removed too" eval 'printf "%s" "$out" | grep -q "^stopped dsv41-r1 on worker$"'
check "ctrl-c: no containers left" no_containers

# --- bounded logs (podman's k8s-file: conmon cuts the file at max-size) ---------------------
out=$(top_head LOG_MAX_SIZE=20k "EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 DSV41_SIM_LOG_RATE=300" launch 2>&1); rc=$?
check "logs: launch with LOG_MAX_SIZE=20k" [ $rc -eq 0 ]
cfg=$(on_host head podman inspect --format '{{.HostConfig.LogConfig.Type}} {{.HostConfig.LogConfig.Size}}' dsv41-r0)
check "logs: k8s-file with the size" eval '[ "$cfg" = "k8s-file 20kB" ]'
lp=$(on_host head podman inspect --format '{{.HostConfig.LogConfig.Path}}' dsv41-r0)
wlp=$(on_host worker podman inspect --format '{{.HostConfig.LogConfig.Path}}' dsv41-r1)
# 300 lines of ~190 bytes a second: 20k is written many times over
sleep 4
# (the newest number: on a loaded machine --tail 1 once gave 8 lines, 1424-1431, the
# file cut by conmon as it was read)
n=$(top_head logs r0 --tail 1 2>&1 | grep -oE 'line [0-9]+' | tail -1 | cut -d' ' -f2)
check "logs: the rank wrote far more than 20k" [ "${n:-0}" -gt 500 ]
check "logs: rank 0's file stays bounded" [ "$(stat -c %s "$lp")" -le 28672 ]
check "logs: the worker's file too" [ "$(stat -c %s "$wlp")" -le 28672 ]
out=$(top_head logs r0 2>&1); rc=$?
check "logs: dsv41-top logs still reads what is kept" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "Engine 000"'
check "logs: ...from the start of what is kept (the boot lines are cut)" eval '! printf "%s" "$out" | grep -q "vLLM API server version"'
top_head stop --now >/dev/null 2>&1
clean_ranks
summary
