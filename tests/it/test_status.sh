#!/bin/bash
# `dsv41-top status` and `doctor` on the head against the worker over real
# sshd, with simulator containers running on both hosts, and every way the
# worker can fail to answer. Needs the hosts of hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

RANK_ARGS="vllm serve /model --served-model-name deepseek-v4.1-flash --tensor-parallel-size 2 --nnodes 2
 --master-addr $HEAD_IP --master-port 29655"
KEY=it-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')

start_ranks() {
    on_host head podman rm -f -t 0 dsv41-r0 >/dev/null 2>&1
    on_host worker podman rm -f -t 0 dsv41-r1 >/dev/null 2>&1
    # shellcheck disable=SC2086
    on_host worker podman run -d --name dsv41-r1 --network host -e DSV41_SIM_BOOT_MS=200 \
        "$SIM_IMAGE" $RANK_ARGS --node-rank 1 --headless >/dev/null
    mkdir -p "$IT_DIR/head/state"
    printf '%s' "$KEY" > "$IT_DIR/head/state/api_key"
    chmod 600 "$IT_DIR/head/state/api_key"
    printf 'VLLM_API_KEY=%s\n' "$KEY" > "$IT_DIR/head/rank0.env"
    chmod 600 "$IT_DIR/head/rank0.env"
    # (2,000 tokens an answer: a request is still in flight when its peer dies)
    # shellcheck disable=SC2086
    on_host head podman run -d --name dsv41-r0 --network host --env-file "$IT_DIR/head/rank0.env" \
        -e DSV41_SIM_BOOT_MS=200 -e DSV41_SIM_OUTPUT_TOKENS=2000 "$SIM_IMAGE" $RANK_ARGS --node-rank 0 \
        --port 8000 >/dev/null
    for _ in $(seq 100); do
        on_host head curl -sf -o /dev/null "http://127.0.0.1:8000/health" && return 0
        sleep 0.1
    done
    echo "ranks did not come up" >&2
    on_host head podman logs dsv41-r0 >&2
    return 1
}


start_ranks || { not_ok "ranks start"; summary; exit 1; }
# ranks run with a memory guard on their node, as launch leaves them (status
# calls a rank without one a problem)
mkdir -p "$IT_DIR/worker/state/bin"
cp "$IT_ROOT/build/dsv41-guard" "$IT_DIR/worker/state/bin/dsv41-guard"
on_host worker "$IT_DIR/worker/state/bin/dsv41-guard" --state-dir "$IT_DIR/worker/state" --stop >/dev/null 2>&1
on_host worker "$IT_DIR/worker/state/bin/dsv41-guard" --state-dir "$IT_DIR/worker/state" \
    --runtime podman --ranks 2 --daemon >/dev/null 2>&1
top_head guard --stop >/dev/null 2>&1
top_head guard --daemon >/dev/null 2>&1

# --- all well ------------------------------------------------------------
out=$(top_head status 2>&1); rc=$?
check "status exits 0 when all is well" [ $rc -eq 0 ]
check "status names the worker's own hostname" contains "$out" "host spark-worker"
check "status warns that GID indexes differ" contains "$out" "GID index differs: head 3, worker 5"
check "status shows GB10 GPU memory as n/a" contains "$out" "memory n/a"

json=$(top_head status --json 2>&1); rc=$?
check "status --json exits 0" [ $rc -eq 0 ]
check "json: worker reachable" jq_is "$json" '.nodes[1].reachable' true
check "json: worker hostname" jq_is "$json" '.nodes[1].hostname' spark-worker
want_mem=$(on_host worker awk '/^MemTotal:/ {print $2}' /proc/meminfo)
check "json: worker MemTotal is what the worker has" jq_is "$json" '.nodes[1].mem.total_kib' "$want_mem"
want_pid=$(on_host worker podman inspect -f '{{.State.Pid}}' dsv41-r1)
check "json: worker rank pid is what the worker's podman says" \
    jq_is "$json" '.nodes[1].containers[] | select(.name=="dsv41-r1") | .pid' "$want_pid"
want_pid=$(on_host head podman inspect -f '{{.State.Pid}}' dsv41-r0)
check "json: head rank pid" jq_is "$json" '.nodes[0].containers[0].pid' "$want_pid"
check "json: head GID index 3" jq_is "$json" '.nodes[0].fabric.gid_index' 3
check "json: worker GID index 5" jq_is "$json" '.nodes[1].fabric.gid_index' 5
check "json: worker fabric IPv4 from the real interface" jq_is "$json" '.nodes[1].fabric.ipv4' "$WORKER_IP"
check "json: worker HCAs" jq_is "$json" '.nodes[1].fabric.hcas' "roceP2p1s0f0,rocep1s0f0"
check "json: rdma port state" jq_is "$json" '.nodes[1].rdma[2].state' "4: ACTIVE"
check "json: GPU memory is null, not 0" jq_is "$json" '.nodes[1].gpu[0].mem_total_mib' null
check "json: GPU utilisation" jq_is "$json" '.nodes[1].gpu[0].util_pct' 37
check "json: per-process GPU memory" jq_is "$json" '.nodes[1].gpu[0].procs[0].used_mib' 96512
check "json: api health" jq_is "$json" '.api.health' 200
check "json: api models with the key" jq_is "$json" '.api.models' 200
check "json: max_model_len" jq_is "$json" '.api.max_model_len' 262144
check "json: ok" jq_is "$json" '.ok' true
check "json: metrics scraped" jq_is "$json" '.api.metrics.running' 0
check "json: not wedged" jq_is "$json" '.api.wedged' null
check "status shows the server's metrics" contains "$out" "server  running 0  waiting 0"
check "the API key never reaches the output" eval '! printf "%s" "$json$out" | grep -q "$KEY"'

# --- the worker cannot be reached -----------------------------------------
out=$(top_head WORKER=root@$WORKER_IP:2222 status 2>&1); rc=$?
check "refused: exit 1" [ $rc -eq 1 ]
check "refused: says so and what to try" contains "$out" "cannot connect to $WORKER_IP port 2222: Connection refused"
out=$(top_head WORKER=root@10.10.10.77 SSH_TIMEOUT=1 status 2>&1); rc=$?
check "no such host on the link: exit 1" [ $rc -eq 1 ]
check "no such host on the link: cannot connect" contains "$out" "worker: unreachable: worker: cannot connect to 10.10.10.77"
out=$(top_head WORKER=nosuchhost.invalid status --json 2>&1); rc=$?
check "unknown name: exit 1" [ $rc -eq 1 ]
check "unknown name: cannot resolve" contains "$out" "cannot resolve 'nosuchhost.invalid'"
check "unknown name: JSON stays valid" jq_is "$out" '.nodes[1].reachable' false

# a port that accepts but never speaks ssh: the handshake times out
on_host worker nc -lk "$WORKER_IP" 2200 </dev/null >/dev/null 2>&1 &
nc_pid=$!
sleep 0.3
t0=$(date +%s)
out=$(top_head WORKER=root@$WORKER_IP:2200 SSH_TIMEOUT=1 status 2>&1); rc=$?
t1=$(date +%s)
kill_in_ns worker nc; wait "$nc_pid" 2>/dev/null
check "silent port: exit 1" [ $rc -eq 1 ]
check "silent port: the handshake times out, named" contains "$out" "ssh handshake with $WORKER_IP:2200 failed"
check "silent port: within the timeout, not hanging" [ $((t1 - t0)) -le 8 ]

# --- host keys -------------------------------------------------------------
: > "$IT_DIR/empty_known_hosts"
fp=$(ssh-keygen -lf "$IT_DIR/ssh_host_ed25519_key.pub" | awk '{print $2}')
out=$(top_head SSH_KNOWN_HOSTS="$IT_DIR/empty_known_hosts" status 2>&1); rc=$?
check "unknown host key: refused" [ $rc -eq 1 ]
check "unknown host key: names the fingerprint" contains "$out" "unknown host key for $WORKER_IP (ED25519 $fp)"
check "unknown host key: says how to accept it" contains "$out" "ssh-keyscan -p 22 $WORKER_IP >>"
echo "$WORKER_IP $(cut -d' ' -f1,2 "$IT_DIR/other_host_key.pub")" > "$IT_DIR/changed_known_hosts"
out=$(top_head SSH_KNOWN_HOSTS="$IT_DIR/changed_known_hosts" status 2>&1); rc=$?
check "changed host key: refused" [ $rc -eq 1 ]
check "changed host key: loud, with the fix" contains "$out" "HOST KEY CHANGED for $WORKER_IP"
check "changed host key: names ssh-keygen -R" contains "$out" "ssh-keygen -R '$WORKER_IP'"

# --- wrong user key ---------------------------------------------------------
sed "s|IdentityFile .*|IdentityFile $IT_DIR/wrong_user_key|" "$IT_DIR/ssh_config" > "$IT_DIR/ssh_config_wrong"
out=$(top_head SSH_CONFIG="$IT_DIR/ssh_config_wrong" status 2>&1); rc=$?
check "wrong user key: exit 1" [ $rc -eq 1 ]
check "wrong user key: says the keys were refused" contains "$out" "root@$WORKER_IP refused our keys (tried 1 identity file)"

# --- the agent: no key file anywhere, the key only in ssh-agent ----------------
mkdir -p "$IT_DIR/agenthome"
grep -v IdentityFile "$IT_DIR/ssh_config" > "$IT_DIR/ssh_config_agent"
agent_out=$(on_host head ssh-agent -s -a "$IT_DIR/agent.sock")
agent_pid=$(printf '%s' "$agent_out" | sed -n 's/^SSH_AGENT_PID=\([0-9]*\);.*/\1/p')
on_host head env SSH_AUTH_SOCK="$IT_DIR/agent.sock" ssh-add -q "$IT_DIR/home/.ssh/id_ed25519" 2>/dev/null
out=$(top_head HOME="$IT_DIR/agenthome" SSH_CONFIG="$IT_DIR/ssh_config_agent" \
    SSH_AUTH_SOCK="$IT_DIR/agent.sock" status --json 2>&1)
check "agent: the worker is reached with the agent's key alone" jq_is "$out" '.nodes[1].reachable' true
on_host head env SSH_AUTH_SOCK="$IT_DIR/agent.sock" ssh-add -q -D 2>/dev/null
out=$(top_head HOME="$IT_DIR/agenthome" SSH_CONFIG="$IT_DIR/ssh_config_agent" \
    SSH_AUTH_SOCK="$IT_DIR/agent.sock" status 2>&1)
check "agent: an empty agent and no key file is refused, named" contains "$out" "the ssh agent (no key accepted)"
kill "$agent_pid" 2>/dev/null

# --- garbage in every probed file --------------------------------------------
g=$IT_DIR/garbage
mkdir -p "$g/proc" "$g/sys/class/infiniband/evil/ports/1/gid_attrs/types" "$g/sys/class/infiniband/evil/ports/1/gids"
head -c 4096 /dev/urandom > "$g/proc/meminfo"
printf 'oom_kill \033[2J\033]0;pwned\007\n' > "$g/proc/vmstat"
printf '4: ACTIVE\033[31m\n' > "$g/sys/class/infiniband/evil/ports/1/state"
head -c 300 /dev/urandom > "$g/sys/class/infiniband/evil/ports/1/rate"
printf 'RoCE v2\n' > "$g/sys/class/infiniband/evil/ports/1/gid_attrs/types/0"
printf '0000:0000:0000:0000:0000:ffff:zzzz:0a0b\n' > "$g/sys/class/infiniband/evil/ports/1/gids/0"
touch "$IT_DIR/smi-garbage"
out=$(top_head WORKER_PROC_ROOT="$g/proc" WORKER_SYS_ROOT="$g/sys" status --json 2>&1); rc=$?
rm -f "$IT_DIR/smi-garbage"
check "garbage: exit 1, no crash" [ $rc -eq 1 ]
check "garbage: JSON still parses" jq_is "$out" '.nodes[1].reachable' true
check "garbage: memory is null, not 0" jq_is "$out" '.nodes[1].mem.total_kib' null
check "garbage: meminfo named as the problem" contains "$out" "cannot read MemTotal/MemAvailable"
check "garbage: nvidia-smi output refused" contains "$out" "unreadable CSV"
check "garbage: no escape byte reaches the output" eval '! printf "%s" "$out" | grep -q $'"'"'\033'"'"
check "garbage: no invalid UTF-8 reaches the output" eval 'printf "%s" "$out" | iconv -f UTF-8 -t UTF-8 >/dev/null'

# --- a rank exits ---------------------------------------------------------------
# with a request in flight (its first tokens come): rank 0's engine freezes in
# the collective with it inside, as vLLM's does - a request sent only after the
# freeze would wait in the engine's input queue, never running (sim_metrics.h)
on_host head curl -sN -H "Authorization: Bearer $KEY" -d '{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}' \
    http://127.0.0.1:8000/v1/chat/completions > "$IT_DIR/inflight.sse" 2>/dev/null &
curlp=$!
for _ in $(seq 100); do grep -q '"content"' "$IT_DIR/inflight.sse" 2>/dev/null && break; sleep 0.05; done
on_host worker podman kill dsv41-r1 >/dev/null
out=$(top_head status 2>&1); rc=$?
check "exited rank: exit 1" [ $rc -eq 1 ]
check "exited rank: named with its exit code" contains "$out" "worker: rank dsv41-r1 exited with code 137"
check "exited rank, /health still 200: engine wedged" contains "$out" "engine wedged: rank r1 on worker is not running while /health answers"
# the request in flight gets no more tokens: wedged by the metrics too
t0=$(date +%s)
out=$(top_head WEDGE_SECONDS=2 status 2>&1); rc=$?
t1=$(date +%s)
kill_in_ns head curl; wait $curlp 2>/dev/null
check "wedged: requests running, no tokens, said" contains "$out" "(metrics: 1 request(s) running and nothing moving for 2 s (no token, no prefill step"
check "wedged: status waits at most WEDGE_SECONDS for a token" [ $((t1 - t0)) -le 5 ]
json=$(top_head WEDGE_SECONDS=1 status --json 2>&1)
check "wedged: the metrics in JSON" jq_is "$json" '.api.metrics.generation_tokens_total >= 0' true
start_ranks || not_ok "ranks restart"

# --- sshd killed mid-session: reported, then reconnected -------------------------
coproc SESSION { top_session; }
ask() { echo status >&"${SESSION[1]}"; local l; IFS= read -r -t 30 l <&"${SESSION[0]}"; printf '%s' "$l"; }
s1=$(ask)
check "session: first status reaches the worker" jq_is "$s1" '.nodes[1].reachable' true
echo multiplex >&"${SESSION[1]}"
IFS= read -r -t 60 mx <&"${SESSION[0]}"
check "one session: a 200-line stream arrives whole and in order" jq_is "$mx" '[.lines, .in_order] | tostring' '[200,true]'
check "one session: a 2.5 MB line arrives in 1 MiB pieces" jq_is "$mx" '.longest' 1048576
check "one session: commands from two threads meanwhile" jq_is "$mx" '.runs_ok' 10
check "one session: snapshots meanwhile" jq_is "$mx" '.status_ok' 3
echo flood >&"${SESSION[1]}"
IFS= read -r -t 60 fl <&"${SESSION[0]}"
check "one session: a 4.3 MB burst of lines arrives whole and in order (the channel waits)" \
    jq_is "$fl" '[.lines, .in_order] | tostring' '[400000,true]'
echo killed >&"${SESSION[1]}"
IFS= read -r -t 30 kl <&"${SESSION[0]}"
check "a remote command killed by a signal reports 128+9, not success" jq_is "$kl" '.exit' 137
echo late >&"${SESSION[1]}"
IFS= read -r -t 30 kl <&"${SESSION[0]}"
check "a remote command that closes its output before it exits 3 reports 3, not success" jq_is "$kl" '.exit' 3
echo late busy >&"${SESSION[1]}"
IFS= read -r -t 60 kl <&"${SESSION[0]}"
check "the same beside a channel that keeps sending on the session: 3 each time (libssh2's close returns on the first packet of any channel)" \
    jq_is "$kl" '.exits | tostring' '[3,3,3,3]'
echo linger >&"${SESSION[1]}"
IFS= read -r -t 30 kl <&"${SESSION[0]}"
check "one that closes its output and lives on: an error after the grace, not success" \
    contains "$kl" "err: worker: a command closed its output and had not ended 5 s later: no exit status"
put() { echo "put $1" >&"${SESSION[1]}"; local l; IFS= read -r -t 30 l <&"${SESSION[0]}"; printf '%s' "$l"; }
mkdir -p "$IT_DIR/worker/putdir"
r=$(put "$IT_DIR/worker/putdir/f")
check "sftp: a file is written on the worker" [ "$r" = ok ]
check "sftp: with its content" [ "$(cat "$IT_DIR/worker/putdir/f")" = hello-put ]
check "sftp: with mode 0600" [ "$(stat -c %a "$IT_DIR/worker/putdir/f")" = 600 ]
chmod 644 "$IT_DIR/worker/putdir/f"; echo old-and-longer-content > "$IT_DIR/worker/putdir/f"
r=$(put "$IT_DIR/worker/putdir/f")
check "sftp: an existing file is replaced and set to 0600" \
    eval '[ "$r" = ok ] && [ "$(cat "$IT_DIR/worker/putdir/f")" = hello-put ] && [ "$(stat -c %a "$IT_DIR/worker/putdir/f")" = 600 ]'
r=$(put "$IT_DIR/worker/no-such-dir/f")
check "sftp: a missing directory is named" contains "$r" "worker: cannot write $IT_DIR/worker/no-such-dir/f: no such directory"
"$IT_ROOT/tests/it/hosts.sh" stop-sshd
s2=$(ask)
check "session: sshd killed -> worker unreachable" jq_is "$s2" '.nodes[1].reachable' false
# refused, or - when a reconnect reached the listener while stop-sshd was
# killing its sessions (a TSan run on a loaded machine) - a handshake with
# no banner: either way the worker and its address are named
check "session: the reason names the worker and its address" eval \
    'grep -Eq "worker: (cannot connect to $WORKER_IP port 22|ssh handshake with $WORKER_IP:22 failed)" <<< "$s2"' ||
    printf '%s\n' "$s2" | grep -o '"error":"[^"]*"' >&2
check "session: down_since is set" eval "[ \"\$(printf '%s' \"\$s2\" | jq '.nodes[1].down_since > 0')\" = true ]"
out=$(top_head status 2>&1); rc=$?
check "cli: sshd down -> exit 1" [ $rc -eq 1 ]
check "cli: sshd down -> unreachable" contains "$out" "worker: unreachable"
"$IT_ROOT/tests/it/hosts.sh" start-sshd
# the reconnect waits out its backoff (0.5 s, doubling per failed try): how
# long depends on how many tries the loaded machine made while sshd was down
for _ in $(seq 20); do
    s3=$(ask)
    [ "$(printf '%s' "$s3" | jq -r '.nodes[1].reachable')" = true ] && break
    sleep 1
done
check "session: reconnects once sshd is back" jq_is "$s3" '.nodes[1].reachable' true
exec {SESSION[1]}>&-
wait "$SESSION_PID" 2>/dev/null

# --- doctor ------------------------------------------------------------------------
HIST=ghcr.io/0xsero/deepseek-v4.1-flash-spark@sha256:5668e35e5ee021da4b9ce88a1964caf0e082e8ca01d81d1d64b6213a55c6add5
out=$(top_head IMG=$HIST MODEL_DIR="$IT_DIR/nomodel" doctor 2>&1); rc=$?
check "doctor: exit 1 with no model" [ $rc -eq 1 ]
check "doctor: names node and file" contains "$out" "FAIL worker missing $IT_DIR/nomodel/config.json"
check "doctor: gives the fix" contains "$out" "fix: dsv41-top copy-to-peer"
check "doctor: fabric ok with the detected GID" contains "$out" "fabric enp1s0f0np0 10.10.10.11, HCAs roceP2p1s0f0,rocep1s0f0, GID index 5"
check "doctor: image check runs on the worker" contains "$out" "worker image ghcr.io/0xsero/deepseek-v4.1-flash-spark@sha256:5668e35e"
out=$(top_head MODEL_DIR="$IT_DIR/nomodel" doctor 2>&1)
check "doctor: sees the image the worker has" contains "$out" "ok   worker image present"

top_head guard --stop >/dev/null 2>&1
on_host worker "$IT_DIR/worker/state/bin/dsv41-guard" --state-dir "$IT_DIR/worker/state" --stop >/dev/null 2>&1
summary
