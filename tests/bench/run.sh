#!/bin/bash
# make bench: performance figures printed side by side with the peer tools
# they are measured against, in one run. Figures, not pass/fail: a "goal"
# column says whether the issue's target was met on this machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/it/lib.sh"
if [ "$(id -u)" != 0 ]; then echo "bench needs root (test hosts)" >&2; exit 1; fi
trap '"$root/tests/it/hosts.sh" down >/dev/null 2>&1' EXIT INT TERM
"$root/tests/it/hosts.sh" up >/dev/null
BENCH=$root/build/tests/bench-status
CLIENT=$root/build/tests/bench-client

echo "== API client: SSE parsing on one core (64 MiB of vLLM-shaped chunks)"
out=$("$CLIENT" sse 64)
fr=$(printf '%s\n' "$out" | awk '/sse_framing/ {print $2}')
full=$(printf '%s\n' "$out" | awk '/sse_and_chunks/ {print $2}')
printf '%-44s %10s MB/s\n' "SSE framing alone" "$fr"
printf '%-44s %10s MB/s   goal >= 100: %s\n' "SSE framing + every chunk's JSON assembled" "$full" \
    "$(awk -v v="$full" 'BEGIN {print (v >= 100) ? "met" : "NOT met"}')"

echo "== API client: measured rates against the simulator's configured ones"
SIMPORT=$((30000 + RANDOM % 20000))
PRE=20000 DEC=50
VLLM_API_KEY=benchkey DSV41_SIM_BOOT_MS=50 DSV41_SIM_PREFILL_TPS=$PRE DSV41_SIM_DECODE_TPS=$DEC \
    DSV41_SIM_OUTPUT_TOKENS=100 "$root/build/dsv41-sim" /model --served-model-name deepseek-v4.1-flash \
    --host 127.0.0.1 --port $SIMPORT >/tmp/dsv41-bench-sim.log 2>&1 &
simpid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$SIMPORT/health" && break; sleep 0.05; done
bjson=$(mktemp /tmp/dsv41-bench-XXXXXX.json)
DSV41_API_KEY=benchkey "$root/build/dsv41-top" bench "http://127.0.0.1:$SIMPORT" --prefill 8192 \
    --reps 3 --conc 1 2 4 --kinds code --out "$bjson" >/dev/null 2>&1
pm=$(jq '.prefill["8192"].median' "$bjson")
printf '%-44s %10.1f tok/s, configured %d: ratio %s\n' "prefill 8192 tokens" "$pm" $PRE \
    "$(awk -v m="$pm" -v c=$PRE 'BEGIN {r=m/c; printf "%.4f %s", r, (r > 0.99 && r < 1.01) ? "(goal within 1%: met)" : "(goal within 1%: NOT met)"}')"
for C in 1 2 4; do
    dm=$(jq ".decode[] | select(.C == $C) | .per_stream_median" "$bjson")
    printf '%-44s %10.2f tok/s, configured %d: ratio %s\n' "decode per stream, C=$C" "$dm" $DEC \
        "$(awk -v m="$dm" -v c=$DEC 'BEGIN {r=m/c; printf "%.4f %s", r, (r > 0.99 && r < 1.01) ? "(goal within 1%: met)" : "(goal within 1%: NOT met)"}')"
done
rm -f "$bjson"

echo "== API client: TTFT against curl's time_starttransfer on the same request (20 each)"
body='{"model":"m","stream":true,"messages":[{"role":"user","content":"What is 17 * 23?"}]}'
cms=$(for _ in $(seq 20); do
    curl -sN -o /dev/null -w '%{time_starttransfer}\n' -H 'Authorization: Bearer benchkey' \
        -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$SIMPORT/v1/chat/completions"
done | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int(NR/2)+1] * 1000}')
oms=$("$CLIENT" ttft "http://127.0.0.1:$SIMPORT" benchkey 20 | awk '{print $2}')
kill $simpid 2>/dev/null; wait $simpid 2>/dev/null
printf '%-44s %10s ms\n' "curl time_starttransfer (median)" "$cms"
printf '%-44s %10s ms   overhead %s ms, goal <= 1 ms: %s\n' "dsv41-top client TTFT (median)" "$oms" \
    "$(awk -v a="$oms" -v b="$cms" 'BEGIN {printf "%.3f", a - b}')" \
    "$(awk -v a="$oms" -v b="$cms" 'BEGIN {print (a - b <= 1.0) ? "met" : "NOT met"}')"
N=${BENCH_N:-20}
SAMPLE_S=${BENCH_SAMPLE_S:-30}

# both ranks up, so status does all it does in real use (API included)
KEY=bench-$$
mkdir -p "$IT_DIR/head/state"
printf '%s' "$KEY" > "$IT_DIR/head/state/api_key"; chmod 600 "$IT_DIR/head/state/api_key"
printf 'VLLM_API_KEY=%s\n' "$KEY" > "$IT_DIR/head/rank0.env"; chmod 600 "$IT_DIR/head/rank0.env"
A="vllm serve /model --served-model-name deepseek-v4.1-flash --tensor-parallel-size 2 --nnodes 2 --master-addr $HEAD_IP --master-port 29655"
# shellcheck disable=SC2086
on_host worker podman run -d --name dsv41-r1 --network host -e DSV41_SIM_BOOT_MS=100 "$SIM_IMAGE" $A --node-rank 1 --headless >/dev/null
# shellcheck disable=SC2086
on_host head podman run -d --name dsv41-r0 --network host --env-file "$IT_DIR/head/rank0.env" -e DSV41_SIM_BOOT_MS=100 "$SIM_IMAGE" $A --node-rank 0 --port 8000 >/dev/null
for _ in $(seq 100); do on_host head curl -sf -o /dev/null http://127.0.0.1:8000/health && break; sleep 0.1; done

echo "== status of both nodes, warm session, vs a fresh OpenSSH 'ssh worker cat /proc/meminfo' ($N runs each)"
ssh_ms=()
for _ in $(seq "$N"); do
    t0=$(date +%s%N)
    on_host head ssh -F "$IT_DIR/ssh_config" -o UserKnownHostsFile="$IT_DIR/known_hosts" \
        -o BatchMode=yes worker 'cat /proc/meminfo' >/dev/null
    t1=$(date +%s%N)
    ssh_ms+=($(( (t1 - t0) / 1000 )))
done
ssh_med=$(printf '%s\n' "${ssh_ms[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int(NR/2)+1]/1000}')
# shellcheck disable=SC2046
out=$(on_host head env $(head_env) "$BENCH" warm "$N")
warm=$(printf '%s\n' "$out" | awk '/warm_median_ms/ {print $2}')
cold=$(printf '%s\n' "$out" | awk '/cold_ms/ {print $2}')
p90=$(printf '%s\n' "$out" | awk '/warm_p90_ms/ {print $2}')
ratio=$(awk -v a="$warm" -v b="$ssh_med" 'BEGIN {printf "%.3f", a / b}')
goal=$(awk -v r="$ratio" 'BEGIN {print (r <= 0.2) ? "met" : "NOT met"}')
printf '%-44s %10s\n' "fresh ssh cat /proc/meminfo (median)" "$ssh_med ms"
printf '%-44s %10s\n' "dsv41-top status, cold (connects)" "$cold ms"
printf '%-44s %10s   (p90 %s ms)\n' "dsv41-top status, warm session (median)" "$warm ms" "$p90"
printf '%-44s %10s   goal <= 0.2: %s\n' "ratio warm status / fresh ssh" "$ratio" "$goal"
# where a warm status' time goes: each step's median (the nodes' steps run side by side)
printf '%s\n' "$out" | awk '/^step / {printf "    %-40s %10s ms\n", $2 " " $3, $4}'

echo "== a scrape: dsv41-top exporter (both nodes) vs prometheus-node-exporter (this node), 200 each"
EP=$(test_ports)
# shellcheck disable=SC2046
on_host head env $(head_env) "$root/build/dsv41-top" exporter --listen "127.0.0.1:$EP" >/dev/null 2>&1 &
on_host head prometheus-node-exporter --web.listen-address="127.0.0.1:$((EP + 1))" >/dev/null 2>&1 &
scrape_ms() { # url: 200 scrapes, each one's total time in ms, sorted
    for _ in $(seq 200); do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done |
        awk '{printf "%.3f\n", $1 * 1000}' | sort -n
}
for _ in $(seq 100); do on_host head curl -s "http://127.0.0.1:$EP/metrics" | grep -q '^dsv41_ranks_up 2' && break; sleep 0.2; done
for _ in $(seq 50); do on_host head curl -sf -o /dev/null "http://127.0.0.1:$((EP + 1))/metrics" && break; sleep 0.2; done
ours=$(on_host head bash -c "$(declare -f scrape_ms); scrape_ms http://127.0.0.1:$EP/metrics")
peer=$(on_host head bash -c "$(declare -f scrape_ms); scrape_ms http://127.0.0.1:$((EP + 1))/metrics")
pick() { printf '%s\n' "$1" | awk -v q="$2" '{a[NR]=$1} END {i = int(NR * q); if (i < 1) i = 1; print a[i]}'; }
o50=$(pick "$ours" 0.5) o99=$(pick "$ours" 0.99) p50=$(pick "$peer" 0.5) p99=$(pick "$peer" 0.99)
goal=$(awk -v a="$o99" 'BEGIN {print (a < 10) ? "met" : "NOT met"}')
printf '%-44s %10s   (p99 %s ms)\n' "prometheus-node-exporter scrape (median)" "$p50 ms" "$p99"
printf '%-44s %10s   (p99 %s ms)  goal p99 < 10 ms: %s\n' "dsv41-top exporter scrape (median)" "$o50 ms" "$o99" "$goal"
pkill_in_ns head "dsv41-top exporter --listen 127.0.0.1:$EP"
pkill_in_ns head "prometheus-node-exporter --web.listen-address"

echo "== sampling the worker at 1 Hz for ${SAMPLE_S}s: CPU on the head"
# shellcheck disable=SC2046
out=$(on_host head env $(head_env) "$BENCH" sample "$SAMPLE_S" 1000)
pct=$(printf '%s\n' "$out" | awk '/head_core_pct/ {print $2}')
samples=$(printf '%s\n' "$out" | awk '/^samples/ {print $2}')
goal=$(awk -v p="$pct" 'BEGIN {print (p <= 1.0) ? "met" : "NOT met"}')
printf '%-44s %10s   (%s samples)  goal <= 1%%: %s\n' "head CPU, % of one core" "$pct" "$samples" "$goal"

# status of the local node alone, direct vs the CLI path (time, CPU, processes)
bash "$here/status_local.sh"

bash "$here/launch.sh"

# the memory guard: idle, then with the other cores busy (hosts up).
bash "$here/guard.sh"

# verify beside sha256sum (page cache; no hosts needed).
bash "$here/verify.sh"

# The console beside htop -d 10 (idle CPU, bytes/s, key latency, log flood).
bash "$here/console.sh"

# download beside aria2c and curl through the simulator's hub and nginx
# (limit_rate per connection); peak disk beside the script era's; CPU per GB.
bash "$here/download.sh"

# copy-to-peer beside nc, rsync -a -e ssh and the script era (rsync, then
# sha256sum -c on the worker), on the test hosts; CPU per GB on each end.
bash "$here/copy.sh"
