#!/bin/bash
# First contact with a real setup, over real ssh: hostile settings refused at
# load with the setting named (and nothing run on either host); values that
# are legal but full of shell syntax carried as one word through a whole
# launch, verify and copy on a worker account whose login shell is fish; an
# sshd offering ECDSA and ed25519 while known_hosts holds ed25519 only; an ssh
# config with Include, Match and ProxyJump that dsv41-top and OpenSSH's rsync
# both follow; the API key kept out of argv and settings of every process.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

P=/tmp/dsv41-pwned # every payload touches this: it must never exist
rm -f "$P"
for h in head worker; do on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1; done
model_skeleton
pwned() { [ -e "$P" ]; }

# --- hostile values: refused where they load, each named -----------------------------------
hostile=(
    "MEMGUARD_GIB=1 --daemon; touch $P; #"
    "RUNTIME=x';touch $P;'"
    "IMG=--help"
    "PLAN_NAME=../../../etc/passwd"
    "PORT=65536"
    "MPORT=0"
    "WORKER=-oProxyCommand=touch $P"
    "WORKERS=worker,-oProxyCommand=touch"
    "MODEL_DIR=relative/\$(touch $P)"
    "WORKER_STATE_DIR=/x:/etc"
    "EXTRA_ENV=\$(touch $P)=1"
    "STATE_DIR=/tmp/x\"y"
    "GPUS=all\`touch $P\`"
    "ULIMITS=memlock=-1;touch"
    "HEAD_IFNAME=eth0;touch"
    "WORKER_HCAS=\$(touch $P)"
    "WORKER_IP=10.0.0.1;touch"
    "API_URL=file:///etc/passwd"
    "VLLM_CMD=--entrypoint=/bin/sh"
    "EXTRA=--x $(printf '\nrm -rf /')"
    "MEMGUARD_GIB=nan"
    "MEMGUARD_GIB=1e30"
)
for kv in "${hostile[@]}"; do
    key=${kv%%=*}
    for cmd in status "launch --dry-run" "guard --status --all"; do
        # shellcheck disable=SC2086
        out=$(top_head "$kv" $cmd 2>&1); rc=$?
        if [ $rc -ne 2 ] || ! contains "$out" "$key=" >/dev/null 2>&1 ||
            ! contains "$out" "expected" >/dev/null 2>&1; then
            not_ok "hostile $key ($cmd): refused with its name (rc $rc: $(printf '%s' "$out" | head -c 300))"
        fi
    done
done
check "hostile settings: every one refused, naming the setting" [ "$FAILED" -eq 0 ]
check "hostile settings: nothing ran on any host" eval '! pwned'
mkdir -p "$IT_DIR/home/.config"
printf 'MEMGUARD_GIB=1;touch %s\n' "$P" > "$IT_DIR/home/.config/hostile.conf"
out=$(top_head DSV41_CONFIG="$IT_DIR/home/.config/hostile.conf" status 2>&1); rc=$?
check "hostile config file: refused with file:line" eval '[ $rc -eq 2 ] && contains "$out" "(from $IT_DIR/home/.config/hostile.conf:1)"'
out=$(top_head --set DSV41_API_KEY=sk-on-the-command-line status 2>&1); rc=$?
check "--set of a secret: refused, the way named" eval '[ $rc -eq 2 ] && contains "$out" "export DSV41_API_KEY"'
check "--set of a secret: not repeated" eval '! contains "$out" "sk-on-the-command-line" 2>/dev/null'
out=$(top_head guard --floor '1 --daemon' 2>&1); rc=$?
check "guard --floor with words after the number: usage, exit 2" [ $rc -eq 2 ]
G=$IT_ROOT/build/dsv41-guard
out=$(on_host worker "$G" --state-dir "$IT_DIR/worker/hostile-guard" --runtime "x';touch $P;'" --status 2>&1); rc=$?
check "the static guard: a runtime other than docker or podman refused" [ $rc -eq 2 ]
out=$(on_host worker "$G" --state-dir "$IT_DIR/worker/hostile-guard" --floor nan --status 2>&1); rc=$?
check "the static guard: --floor nan refused" [ $rc -eq 2 ]
check "the static guard: nothing ran" eval '! pwned'

# --- the worker's sshd offers ECDSA; known_hosts holds its ed25519 key only ---------------------
offered=$(on_host head ssh-keyscan -T 5 -t ecdsa "$WORKER_IP" 2>/dev/null)
check "the worker offers an ECDSA host key" contains "$offered" "ecdsa-sha2-nistp256"
check "known_hosts holds no ECDSA key (as after ssh's first contact)" eval '! grep -q ecdsa "$IT_DIR/known_hosts"'
out=$(top_head status --json 2>&1)
check "status: the worker reached with the ed25519 key" jq_is "$out" '.nodes[1].reachable' true

# --- legal values full of shell syntax, on a worker whose login shell is fish ------------------
check "the fish account's shell is fish" [ "$(getent passwd "$FISH_USER" | cut -d: -f7)" = /usr/bin/fish ]
O="$IT_DIR/odd dir \$(touch $P) 'q' \`touch $P\` !x \\y ;&|<> %s *"
M="$O/model"
rm -rf "$O"
mkdir -p "$O"
cp -a "$MODEL_SKELETON" "$M"
V=(WORKER=worker-fish MODEL_DIR="$M" WORKER_MODEL_DIR="$M" STATE_DIR="$O/head-state"
   WORKER_STATE_DIR="$O/worker-state" EXTRA_ENV=DSV41_SIM_BOOT_MS=300)
out=$(top_head "${V[@]}" doctor 2>&1)
check "doctor over fish: the odd model directory found" contains "$out" "ok   worker model files and plan present"
check "doctor over fish: the worker reachable" contains "$out" "ok   worker reachable over ssh"
out=$(top_head "${V[@]}" launch 2>&1); rc=$?
check "launch over fish with odd paths: ready" eval '[ $rc -eq 0 ] && contains "$out" "ready after"'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -20
check "launch: the worker's state in the odd directory" [ -f "$O/worker-state/dsv41-r1.env" ]
check "launch: the guard installed there" [ -x "$O/worker-state/bin/dsv41-guard" ]
K=$(cat "$O/head-state/api_key" 2>/dev/null)
check "key: in no process's argv" eval '[ -n "$K" ] && ! grep -qa -- "$K" /proc/[0-9]*/cmdline 2>/dev/null'
check "key: not in podman inspect of rank 0" eval '! on_host head podman inspect dsv41-r0 | grep -q -- "$K"'
out=$(top_head "${V[@]}" status 2>&1); rc=$?
check "status over fish: all well" [ $rc -eq 0 ]
out=$(top_head "${V[@]}" logs r1 --tail 5 2>&1)
check "logs over fish" contains "$out" "headless rank 1 ready"
out=$(top_head "${V[@]}" guard --status --all 2>&1); rc=$?
check "guard --status --all over fish" eval '[ $rc -eq 0 ] && printf "%s" "$out" | grep -q "^worker: guard pid [0-9]* armed"'
out=$(top_head "${V[@]}" verify --node worker 2>&1); rc=$?
check "verify --node over fish, in the odd directory" [ $rc -eq 0 ]
out=$(top_head "${V[@]}" WORKER_MODEL_DIR="$O/copy" copy-to-peer --rsync --progress 0 2>&1); rc=$?
check "copy-to-peer --rsync over fish into an odd directory (OpenSSH's rsync)" eval '[ $rc -eq 0 ] && [ -f "$O/copy/config.json" ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -10
out=$(top_head "${V[@]}" WORKER_MODEL_DIR="$O/copy streams" copy-to-peer --progress 0 2>&1); rc=$?
check "copy-to-peer's streams over fish into an odd directory (dsv41-xfer)" eval '[ $rc -eq 0 ] && [ -f "$O/copy streams/config.json" ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -10
out=$(top_head "${V[@]}" stop 2>&1); rc=$?
check "stop over fish" eval '[ $rc -eq 0 ] && contains "$out" "stopped dsv41-r1 on worker"'
check "odd values: nothing ran on any host" eval '! pwned'

# --- ProxyJump and Include, the same for libssh2 and OpenSSH -------------------------------------
FW=(nsenter --net=/run/netns/$NS_HEAD iptables)
"${FW[@]}" -I OUTPUT -d "$WORKER_IP" -p tcp --dport 22 -j REJECT
out=$(top_head status --json 2>&1)
check "jump: the direct way to the worker is cut" jq_is "$out" '.nodes[1].reachable' false
# two handshakes through the jump, each slower under TSan on a busy machine
# than head_env's SSH_TIMEOUT of 3 s allows: this is about the way, not the speed
out=$(top_head SSH_TIMEOUT=15 WORKER=worker-jump status --json 2>"$IT_DIR/jump.err")
check "jump: the worker reached through worker2 (ProxyJump from an Included file)" jq_is "$out" '.nodes[1].reachable' true ||
    { printf '%s\n' "$out" | head -20; sed 's/^/    stderr: /' "$IT_DIR/jump.err"; } | sed 's/^/    | /' 
check "jump: it is the worker, not the jump host" jq_is "$out" '.nodes[1].hostname' spark-worker
rm -rf "$IT_DIR/jump-copy"
out=$(top_head WORKER=worker-jump MODEL_DIR="$MODEL_SKELETON" WORKER_MODEL_DIR="$IT_DIR/jump-copy" \
    copy-to-peer --rsync --progress 0 2>&1); rc=$?
check "jump: copy-to-peer's rsync goes the same way" eval '[ $rc -eq 0 ] && [ -f "$IT_DIR/jump-copy/config.json" ]'
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -10
"${FW[@]}" -D OUTPUT -d "$WORKER_IP" -p tcp --dport 22 -j REJECT
printf 'Host worker-bad-jump\n  HostName %s\n  ProxyJump worker,worker2\n' "$WORKER_IP" \
    >> "$IT_DIR/ssh_config.d/first-contact.conf"
out=$(top_head WORKER=worker-bad-jump status 2>&1); rc=$?
check "jump: a chain is refused, with the line" eval '[ $rc -ne 0 ] && contains "$out" "dsv41-top goes through one jump host"'
printf 'Host worker-proxycmd\n  HostName %s\n  ProxyCommand nc %%h %%p\n  User root\n' "$WORKER_IP" \
    >> "$IT_DIR/ssh_config.d/first-contact.conf"
out=$(top_head WORKER=worker-proxycmd status 2>&1)
check "ssh config: what is not supported is said" contains "$out" "ProxyCommand is not supported (use ProxyJump)"

# --- what a hostile node prints never reaches the terminal raw --------------------------------
# the worker's sessions find $IT_DIR/bin first: a mkdir and a podman that fail
# with escape sequences (a title, a clear screen, colours) on both streams
fake() { # name
    printf '%s\n' '#!/bin/sh' \
        "printf '\\033]0;owned\\007\\033[2J\\033[31mEVIL-ERR\\033[0m\\n' >&2" \
        "printf '\\033[31mEVIL-OUT\\033[0m\\n'" 'exit 1' > "$IT_DIR/bin/$1"
    chmod +x "$IT_DIR/bin/$1"
}
raw() { printf '%s' "$1" | grep -q $'\e'; }
fake mkdir
check "hostile node: the fake prints escape sequences" eval 'raw "$(on_host worker "$IT_DIR/bin/mkdir" 2>&1)"'
out=$(top_head verify --node worker 2>&1)
check "hostile node: the helper's failure quoted (mkdir's words)" contains "$out" "EVIL"
check "hostile node: ... without one escape byte" eval '! raw "$out"'
out=$(top_head WORKER_MODEL_DIR="$IT_DIR/never-made" copy-to-peer 2>&1)
check "hostile node: copy-to-peer's mkdir failure quoted" contains "$out" "cannot make $IT_DIR/never-made: EVIL"
check "hostile node: ... without one escape byte" eval '! raw "$out"'
rm -f "$IT_DIR/bin/mkdir"
fake podman
# the worker's CLI (its socket would answer instead: test_engine_remote quotes a hostile engine)
out=$(top_head WORKER_RUNTIME_SOCKET=none stop 2>&1)
check "hostile node: the runtime's failure quoted" contains "$out" "container inspect failed: EVIL"
check "hostile node: ... without one escape byte" eval '! raw "$out"'
rm -f "$IT_DIR/bin/podman"

stop_test_guards
rm -rf "$O" "$IT_DIR/jump-copy"
summary
