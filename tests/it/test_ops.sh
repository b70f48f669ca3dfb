#!/bin/bash
# Operations beyond the console on the test hosts: `dsv41-top exporter`
# scraped by a real Prometheus (Debian's, on the head's loopback, started and
# stopped here) beside the simulator's vLLM page, PromQL answering the values
# the hosts really have (the worker's RDMA fixture, its MemAvailable, the
# ranks); the bearer token beyond loopback; the Grafana dashboard's every
# series one that we or vLLM export; then `watch` with SUPERVISE=1 and both
# alert receivers (a real HTTP receiver, dsv41-sim receiver, and an
# ALERT_CMD): a killed rank is relaunched and serves again, the hourly cap
# holds (then every rank stopped, one alert), and a guard's firing leaves
# every rank stopped with one alert. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
model_skeleton
for h in $HOSTS; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
STATE=$IT_DIR/head/state
rm -rf "$STATE/incidents" "$STATE/supervise.tsv"
P=$(test_ports)
EXP=$((P + 1)) EXP_TOK=$((P + 2)) PROM=$((P + 3)) RECV=$((P + 4)) RECV2=$((P + 5))
W=$IT_DIR/ops
rm -rf "$W"
mkdir -p "$W"
pids=()
cleanup() {
    pkill_in_ns head "dsv41-top (exporter|watch)"
    pkill_in_ns head "prometheus --config.file=$W/"
    pkill_in_ns head "dsv41-sim receiver --port $RECV"
    pkill_in_ns head "dsv41-sim receiver --port $RECV2"
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT

out=$(top_head EXTRA_ENV=DSV41_SIM_BOOT_MS=500 launch 2>&1); rc=$?
check "launch for the exporter" [ $rc -eq 0 ] || printf '%s\n' "$out" | tail -5

# --- the exporter -------------------------------------------------------------------
# its alerts as an ntfy-style service takes them (text, a Title header)
on_host head "$SIM" receiver --port "$RECV2" --out "$W/ntfy.jsonl" >/dev/null 2>&1 &
pids+=($!)
top_head "ALERT_WEBHOOK=http://127.0.0.1:$RECV2/ntfy" ALERT_FORMAT=text \
    exporter --listen "127.0.0.1:$EXP" --interval 1 >"$W/exporter.out" 2>"$W/exporter.err" &
pids+=($!)
page() { on_host head curl -s --max-time 5 "$@"; }
up() { for _ in $(seq 200); do page -o /dev/null "http://127.0.0.1:$EXP/metrics" && return 0; sleep 0.1; done; return 1; }
check "exporter: serves /metrics on loopback" up
ranks_seen() { for _ in $(seq 200); do page "http://127.0.0.1:$EXP/metrics" | grep -q '^dsv41_ranks_up 2$' && return 0; sleep 0.1; done; return 1; }
check "exporter: both ranks up" ranks_seen
M=$(page "http://127.0.0.1:$EXP/metrics")
check "exporter: promtool check metrics passes (the format, the conventions)" eval 'printf "%s\n" "$M" | promtool check metrics'
check "exporter: a node label on the node's figures" contains "$M" 'dsv41_memory_available_bytes{node="worker"}'
check "exporter: the worker's RDMA port from its sysfs (words x 4 = bytes)" contains "$M" \
    'dsv41_rdma_port_receive_bytes_total{node="worker",device="roceP2p1s0f0",port="1",netdev="enP2p1s0f0np0"} 3950617284'
check "exporter: the worker's GPU; none on the head, and no fake 0 for it" eval \
    'printf "%s\n" "$M" | grep -q "^dsv41_gpu_power_watts{node=\"worker\"" && ! printf "%s\n" "$M" | grep -q "^dsv41_gpu_power_watts{node=\"head\""'
code=$(page -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$EXP/metrics")
check "exporter: POST is 405" [ "$code" = 405 ]
big=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(page -o /dev/null -w '%{http_code}' -H "X-Big: $big" "http://127.0.0.1:$EXP/metrics")
check "exporter: a request past its bound is refused ($code)" eval '[ "$code" != 200 ]'

# beyond loopback: a token, from a 0600 file
out=$(top_head exporter --listen "$HEAD_IP:$EXP_TOK" 2>&1); rc=$?
check "exporter: beyond loopback without EXPORTER_TOKEN_FILE refused, named" eval \
    '[ $rc -eq 2 ] && printf "%s" "$out" | grep -q EXPORTER_TOKEN_FILE'
TOK=$W/token
openssl rand -hex 24 > "$TOK"
chmod 644 "$TOK"
out=$(top_head EXPORTER_TOKEN_FILE="$TOK" exporter --listen "$HEAD_IP:$EXP_TOK" 2>&1); rc=$?
check "exporter: a token file others can read refused, the fix named" eval \
    '[ $rc -eq 2 ] && printf "%s" "$out" | grep -q "chmod 600"'
chmod 600 "$TOK"
top_head EXPORTER_TOKEN_FILE="$TOK" exporter --listen "$HEAD_IP:$EXP_TOK" --interval 0.5 \
    >/dev/null 2>"$W/exporter-tok.err" &
pids+=($!)
tok_up() { for _ in $(seq 200); do [ "$(page -o /dev/null -w '%{http_code}' "http://$HEAD_IP:$EXP_TOK/metrics")" = 401 ] && return 0; sleep 0.1; done; return 1; }
check "exporter: no token, 401" tok_up
code=$(page -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong-token-0123456789" "http://$HEAD_IP:$EXP_TOK/metrics")
check "exporter: a wrong token, 401" [ "$code" = 401 ]
code=$(page -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$TOK")" "http://$HEAD_IP:$EXP_TOK/metrics")
check "exporter: the token, 200" [ "$code" = 200 ]

# --- a real Prometheus scrapes it ------------------------------------------------------
cat > "$W/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: dsv41
    static_configs: [{targets: ["127.0.0.1:$EXP"]}]
  - job_name: dsv41-token
    authorization: {credentials_file: "$TOK"}
    static_configs: [{targets: ["$HEAD_IP:$EXP_TOK"]}]
  - job_name: vllm
    static_configs: [{targets: ["127.0.0.1:8000"]}]
EOF
on_host head prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/tsdb" \
    --web.listen-address="127.0.0.1:$PROM" >"$W/prometheus.log" 2>&1 &
pids+=($!)
q() { page -G "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1"; }
qv() { q "$1" | jq -r '.data.result[0].value[1] // "none"' 2>/dev/null; }
scraped() { for _ in $(seq 300); do [ "$(qv 'min(up)')" = 1 ] && [ "$(q up | jq '.data.result | length')" = 3 ] && return 0; sleep 0.2; done; return 1; }
check "prometheus: scrapes the exporter, the token's and vLLM's page" scraped ||
    { q up | jq -c '.data.result[] | [.metric.job, .value[1]]'; tail -5 "$W/prometheus.log"; }
v=$(qv 'dsv41_rdma_port_receive_bytes_total{job="dsv41",node="worker",device="roceP2p1s0f0"}')
check "PromQL: the worker's RDMA bytes as its sysfs has them ($v)" [ "$v" = 3950617284 ]
v=$(qv 'dsv41_rdma_port_rate_bytes_per_second{job="dsv41",node="worker",device="roceP2p1s0f0"}')
check "PromQL: its link rate, 200 Gb/s in bytes/s ($v)" [ "$v" = 25000000000 ]
v=$(qv 'dsv41_memory_available_bytes{job="dsv41",node="worker"}')
real=$(($(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024))
check "PromQL: the worker's MemAvailable within 10 % of /proc/meminfo's ($v, $real)" \
    awk -v a="$v" -v b="$real" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= b / 10)}'
check "PromQL: both ranks up" [ "$(qv 'dsv41_ranks_up{job="dsv41"}')" = 2 ]
check "PromQL: the worker's rank" [ "$(qv 'dsv41_rank_up{job="dsv41",node="worker",rank="1"}')" = 1 ]
check "PromQL: the API up, not wedged" eval '[ "$(qv "dsv41_api_up{job=\"dsv41\"}")" = 1 ] && [ "$(qv "dsv41_engine_wedged{job=\"dsv41\"}")" = 0 ]'
check "PromQL: each node's guard in one state" [ "$(qv 'count(dsv41_guard_state{job="dsv41"} == 1)')" = 2 ]
check "PromQL: the token's exporter, the same figures" [ "$(qv 'dsv41_ranks_up{job="dsv41-token"}')" = 2 ]
# each exporter samples every node and polls their guards: one is enough from here on
pkill_in_ns head "dsv41-top exporter --listen $HEAD_IP:$EXP_TOK"
check "PromQL: vLLM's own series beside ours" [ "$(qv 'count(vllm:num_requests_running)')" != none ]

# --- the dashboard: every series it queries is ours or vLLM's ---------------------------
D=$IT_ROOT/dist/grafana/dsv41.json
ours=$(page "http://127.0.0.1:$EXP/metrics" | sed -n 's/^# TYPE \([^ ]*\) .*/\1/p')
theirs=$(page "http://127.0.0.1:8000/metrics" | grep -v '^#' | sed 's/[{ ].*//')
known=$(printf '%s\n%s\n' "$ours" "$theirs" | sort -u)
exprs=$(jq -r '.panels[].targets[]?.expr' "$D")
# the metric names: what is left once strings, matchers, ranges, offsets, groupings and
# the names of functions and aggregations are taken out
names=$(printf '%s\n' "$exprs" | sed -E 's/"[^"]*"//g; s/\{[^}]*\}//g; s/\[[^]]*\]//g; s/offset +[0-9a-z]+//g;
    s/(by|without|on|ignoring|group_left|group_right) *\([^)]*\)//g' |
    grep -oE '[a-zA-Z_:][a-zA-Z0-9_:]*' |
    grep -vxE 'sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile|count_values|rate|irate|increase|delta|idelta|deriv|histogram_quantile|abs|clamp_min|clamp_max|and|or|unless|bool' |
    sort -u)
missing=$(comm -23 <(printf '%s\n' "$names") <(printf '%s\n' "$known"))
check "dashboard: $(printf '%s\n' "$names" | wc -l) series, every one exported by us or vLLM" [ -z "$missing" ] ||
    echo "    not exported: $missing"
check "dashboard: a node variable and vLLM's series" eval 'jq -e ".templating.list[] | select(.name == \"node\")" "$D" >/dev/null && printf "%s" "$names" | grep -q "^vllm:"'
bad=0
while IFS= read -r e; do
    [ "$(q "${e//\$node/.*}" | jq -r .status)" = success ] || { echo "    Prometheus refuses: $e"; bad=1; }
done <<< "$exprs"
check "dashboard: Prometheus takes every query" [ $bad -eq 0 ]
pkill_in_ns head "prometheus --config.file=$W/"

# --- the exporter's alerts, as an ntfy-style service takes them -------------------------
# an acceptance's verdict: its run's report as accept writes it (report.json's verdict)
A=$STATE/accept/$(date +%Y%m%d-%H%M%S)-0123456789ab
mkdir -p "$A"
printf '{"verdict":"pass","done":"promoted"}\n' > "$A/report.json"
text_alert() { for _ in $(seq 600); do grep -q acceptance "$W/ntfy.jsonl" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
check "exporter: an alert of the acceptance's verdict" text_alert
t=$(grep acceptance "$W/ntfy.jsonl" | head -1)
check "exporter's alert in text: a Title, text/plain, the verdict" eval \
    'printf "%s" "$t" | jq -e "(.title | contains(\"acceptance\")) and (.title | endswith(\"(dsv41-top)\")) and (.content_type | startswith(\"text/plain\")) and (.body | contains(\"acceptance: pass, promoted\"))" >/dev/null' ||
    printf '    %s\n' "$t"
rm -rf "$STATE/accept"
# its restarts' figures are read again at the end; the supervisor's phase runs without it
pkill_in_ns head "dsv41-top exporter --listen 127.0.0.1:$EXP"

# --- alerts and supervision under watch ------------------------------------------------
on_host head "$SIM" receiver --port "$RECV" --out "$W/hook.jsonl" --fail 1 >"$W/receiver.out" 2>&1 &
pids+=($!)
recv_up() { for _ in $(seq 100); do grep -q "receiver on" "$W/receiver.out" && return 0; sleep 0.1; done; return 1; }
check "the alert receiver listens" recv_up
# a relaunch is watch's own `launch` job: the simulator's short boot goes with it
top_head SUPERVISE=1 SUPERVISE_MAX=2 SUPERVISE_BACKOFF_S=1 EXTRA_ENV=DSV41_SIM_BOOT_MS=500 \
    "ALERT_WEBHOOK=http://127.0.0.1:$RECV/hook" "ALERT_CMD=tee -a $W/cmd.jsonl" \
    watch --json --interval 0.5 >"$W/watch.jsonl" 2>"$W/watch.err" &
pids+=($!)
watching() { for _ in $(seq 300); do grep -q '"key":"rank.worker","value":"dsv41-r1 running"' "$W/watch.jsonl" && return 0; sleep 0.1; done; return 1; }
check "watch with SUPERVISE=1 sees the ranks" watching
# the kinds in the order they came (a guard's warning aside: a busy test machine's memory)
# (those the receiver took: it answers the first with 503, to be tried again)
alerts() { jq -r 'select(.answered == 200) | .body | fromjson | .kind' "$W/hook.jsonl" 2>/dev/null | grep -vx guard-warning | tr '\n' ' '; }
wait_alert() { # kind [count]: waits for the count-th alert of that kind
    for _ in $(seq 900); do [ "$(jq -r 'select(.answered == 200) | .body | fromjson | .kind' "$W/hook.jsonl" 2>/dev/null | grep -cx "$1")" -ge "${2:-1}" ] && return 0; sleep 0.1; done; return 1
}
serving() { for _ in $(seq 300); do top_head smoke --timeout 30 >/dev/null 2>&1 && return 0; sleep 0.5; done; return 1; }

on_host worker podman kill dsv41-r1 >/dev/null
check "killed rank: an alert of its exit" wait_alert rank-exited || echo "    alerts: $(alerts)"
check "killed rank: relaunched, an alert of the restart" wait_alert restart || { echo "    alerts: $(alerts)"; tail -20 "$W/watch.jsonl"; }
# (a launch that fails on a loaded machine is tried again: a second restart)
check "killed rank: the deployment serves again" serving
kills=1
restarts() { jq -r 'select(.answered == 200) | .body | fromjson | .kind' "$W/hook.jsonl" | grep -cx restart; }
check "alert: a receiver's 503 tried again, the same event" eval \
    '[ "$(jq -r "[.answered, (.body | fromjson | .seq)] | @tsv" "$W/hook.jsonl" | head -2 | cut -f2 | uniq | wc -l)" = 1 ] && [ "$(head -1 "$W/hook.jsonl" | jq .answered)" = 503 ]'
check "alert: the webhook's body is JSON, said so" eval '[ "$(head -1 "$W/hook.jsonl" | jq -r .content_type)" = application/json ]'
a=$(jq -c 'select(.answered == 200 and (.body | fromjson | .kind == "rank-exited")) | .body | fromjson' "$W/hook.jsonl" | head -1)
check "alert: JSON with its fields (kind, node, what, time, host)" eval \
    'printf "%s" "$a" | jq -e ".node == \"worker\" and (.what | test(\"rank r1 on worker exited\")) and (.time | length > 0) and (.host | length > 0)" >/dev/null'
check "alert: it names the incident directory, which exists" eval \
    'd=$(printf "%s" "$a" | jq -r .incident); [ -d "$d" ] && [ -s "$d/summary.txt" ]'
check "alert: says what the supervisor does" contains "$a" "supervisor: every rank stopped and relaunched"
r=$(jq -c 'select(.answered == 200 and (.body | fromjson | .kind == "restart")) | .body | fromjson' "$W/hook.jsonl" | head -1)
check "restart: an incident of its own" eval 'd=$(printf "%s" "$r" | jq -r .incident); [ -d "$d" ] && grep -q "relaunched after rank-exited" "$d/summary.txt"'
check "restart: recorded in supervise.tsv" grep -q "restart	rank-exited" "$STATE/supervise.tsv"
check "restart: status shows it and why" contains "$(top_head status 2>&1)" "relaunched after rank-exited"

# the hourly cap (SUPERVISE_MAX=2): exits are relaunched until two relaunches were made in
# the hour, the next one is not, and every rank is stopped. A relaunched deployment's exit
# is an incident of its own at once (no 30 s window to wait out: incident.h).
while [ "$(restarts)" -lt 2 ] && [ $kills -lt 3 ]; do
    n=$(restarts)
    on_host worker podman kill dsv41-r1 >/dev/null
    kills=$((kills + 1))
    check "killed again ($kills): relaunched" wait_alert restart $((n + 1)) || echo "    alerts: $(alerts)"
    check "killed again ($kills): serves" serving
done
on_host worker podman kill dsv41-r1 >/dev/null
kills=$((kills + 1))
check "cap: an alert that the supervisor stopped" wait_alert supervise-stopped || echo "    alerts: $(alerts)"
none_running() { for _ in $(seq 300); do
    [ -z "$(ct_ids head)" ] && [ -z "$(ct_ids worker)" ] && return 0
    sleep 0.2; done; return 1; }
check "cap: every rank stopped" none_running
sleep 4
check "cap: SUPERVISE_MAX relaunches, no more" [ "$(restarts)" = 2 ]
check "cap: gave-up recorded" grep -q "gave-up	rank-exited" "$STATE/supervise.tsv"

# a guard's firing: every rank stopped, one alert, no relaunch (SUPERVISE_AFTER_GUARD=0)
out=$(top_head EXTRA_ENV=DSV41_SIM_BOOT_MS=500 launch 2>&1)
check "relaunched by hand: serves" serving
n_before=$(wc -l < "$W/hook.jsonl")
G=$IT_DIR/worker/state/bin/dsv41-guard
on_host worker "$G" --state-dir "$IT_DIR/worker/state" --stop >/dev/null 2>&1
on_host worker "$G" --state-dir "$IT_DIR/worker/state" --runtime podman --ranks 2 --floor 100000 \
    --proc-root /proc --daemon >/dev/null 2>&1
check "guard fires: an alert" wait_alert guard-fired || echo "    alerts: $(alerts)"
check "guard fires: every rank stopped" none_running
sleep 8 # a relaunch would have begun (backoff 1 s) and an alert of it settled
new=$(tail -n +$((n_before + 1)) "$W/hook.jsonl" | jq -r 'select(.answered == 200) | .body | fromjson | .kind' | grep -vx guard-warning)
check "guard fires: one alert, no other ($(echo $new))" [ "$new" = guard-fired ] || {
    # what came, in order, and what the guard and the incidents said
    tail -n +$((n_before + 1)) "$W/hook.jsonl" | jq -r 'select(.answered == 200) | .body | fromjson |
        "    alert: \(.time) \(.kind) \(.what)"'
    tail -n 6 "$IT_DIR/worker/state/memguard.log" | sed 's/^/    worker guard: /'
    ls "$STATE/incidents" | tail -n 4 | sed 's/^/    incident: /'
    tail -n 4 "$STATE/supervise.tsv" | sed 's/^/    supervise.tsv: /'
}
g=$(jq -c 'select(.answered == 200 and (.body | fromjson | .kind == "guard-fired")) | .body | fromjson' "$W/hook.jsonl" | head -1)
check "guard fires: the alert says the ranks stay stopped" contains "$g" "not relaunched (SUPERVISE_AFTER_GUARD=0)"
check "guard fires: no relaunch" eval '[ -z "$(on_host head podman ps -q --filter name=dsv41-r)" ]'
on_host worker "$G" --state-dir "$IT_DIR/worker/state" --stop >/dev/null 2>&1

# a node that stops answering (its sshd stopped)
sshd_signal() { for p in $(ip netns pids "$NS_WORKER"); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] && kill "-$1" "$p"; done; }
sshd_signal STOP
check "unreachable: an alert naming the node" wait_alert node-unreachable || echo "    alerts: $(alerts)"
sshd_signal CONT
u=$(jq -c 'select(.answered == 200 and (.body | fromjson | .kind == "node-unreachable")) | .body | fromjson' "$W/hook.jsonl" | head -1)
check "unreachable: the worker" eval 'printf "%s" "$u" | jq -e ".node == \"worker\"" >/dev/null'

# every alert went to both receivers, once each, in order
# in order: what the test did; a wedge a slow machine adds beside a dead rank is its own
# event (the supervisor, busy with the relaunch, leaves it) and ignored here
want="$(for _ in $(seq $kills); do printf 'rank-exited '; done)supervise-stopped guard-fired node-unreachable "
check "alerts: the webhook got each in order" eval \
    '[ "$(alerts | sed "s/restart //g; s/wedged //g")" = "$want" ] && alerts | sed "s/wedged //g" | grep -q "^rank-exited restart "' ||
    echo "    webhook: $(alerts)"
check "alerts: each event once" eval \
    '[ "$(jq -r "select(.answered == 200) | .body | fromjson | .seq" "$W/hook.jsonl" | sort | uniq -d)" = "" ]'
top_head exporter --listen "127.0.0.1:$EXP" >/dev/null 2>>"$W/exporter.err" &
pids+=($!)
exp_restarts() { for _ in $(seq 150); do page "http://127.0.0.1:$EXP/metrics" 2>/dev/null | grep -q '^dsv41_supervise_restarts_total{cause="rank-exited"} 2$' && return 0; sleep 0.2; done; return 1; }
check "restarts: the exporter counts them by cause" exp_restarts
cmd_kinds() { jq -r .kind "$W/cmd.jsonl" | grep -vx guard-warning | tr '\n' ' '; }
check "alerts: ALERT_CMD got the same, JSON on stdin" eval '[ "$(cmd_kinds)" = "$(alerts)" ]' ||
    echo "    cmd: $(cmd_kinds)"
check "alerts: the ALERT_WEBHOOK URL in no output" eval '! grep -q "$RECV/hook" "$W/watch.jsonl" "$W/watch.err"'

pkill_in_ns head "dsv41-top watch --json"
pkill_in_ns head "dsv41-top exporter"
pkill_in_ns head "prometheus --config.file=$W/"
pkill_in_ns head "dsv41-sim receiver --port $RECV"
pkill_in_ns head "dsv41-sim receiver --port $RECV2"
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
pids=()
check "watch and exporter: nothing on stderr but their own messages" eval \
    '! grep -hv -e "^$" -e "^dsv41-top" -e "^head: " -e "^worker: " -e "^{" "$W/watch.err" "$W/exporter.err" | grep -q .' ||
    grep -hv -e "^dsv41-top" "$W/watch.err" "$W/exporter.err" | head -20 | sed 's/^/#   /'
top_head stop >/dev/null 2>&1
summary
