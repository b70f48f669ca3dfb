# Shared by the integration scripts: names of the two test hosts, paths, and
# small assertion helpers. Sourced, never run.
IT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# DSV41_IT_SLOT=N: the Nth of several sets of test hosts side by side
# (tests/it/run.sh runs tests in parallel, one set each); unset: the one set a
# test run by hand uses. Everything a set owns is named from it: its folder,
# its namespaces, its fish account.
IT_SLOT=${DSV41_IT_SLOT:-}
IT_DIR=${IT_DIR:-/tmp/dsv41-it$IT_SLOT}
NS_PREFIX=dsv41${IT_SLOT:+s$IT_SLOT}- # a test host's network namespace: $NS_PREFIX$host
NS_HEAD=${NS_PREFIX}head
NS_WORKER=${NS_PREFIX}worker
HOSTS="head worker worker2"
HEAD_IP=10.10.10.13
WORKER_IP=10.10.10.11
WORKER2_IP=10.10.10.12
FABRIC_IF=enp1s0f0np0
BIN=${DSV41_BIN:-$IT_ROOT/build/dsv41-top}
SIM=${DSV41_SIM:-$IT_ROOT/build/dsv41-sim}
SIM_IMAGE=localhost/dsv41-sim:test
FISH_USER=dsv41fish$IT_SLOT # a uid-0 account of the test hosts whose login shell is fish

# The first of 20 TCP ports a test's listeners on loopback may use: below
# the kernel's ephemeral range (32768-), and under tests/run.sh a range of
# its own per job slot, so that tests side by side never pick the same one.
test_ports() {
    echo $((20000 + ${IT_SLOT:-0} * 1200 + RANDOM % 60 * 20))
}

# Runs a command on a test host, with that host's hostname (own UTS
# namespace) and podman storage.
on_host() { # head|worker cmd...
    local h=$1 ns=$NS_PREFIX$1
    shift
    nsenter --net="/run/netns/$ns" unshare --uts env \
        CONTAINERS_CONF="$IT_DIR/$h/containers.conf" \
        CONTAINERS_STORAGE_CONF="$IT_DIR/$h/storage.conf" \
        CONTAINERS_REGISTRIES_CONF="$IT_DIR/$h/registries.conf" \
        sh -c 'hostname "spark-$0"; exec "$@"' "$h" "$@"
}

# Kills the processes named comm inside a test host's network namespace
# (a background on_host job's $! is only the wrapper).
kill_in_ns() { # head|worker comm [signal]
    local ns=$NS_PREFIX$1 p
    for p in $(ip netns pids "$ns" 2>/dev/null); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && kill "-${3:-TERM}" "$p" 2>/dev/null
    done
    return 0
}
# pgrep -f for one test host: the PIDs of its processes whose command line
# matches an extended regular expression (other sets of hosts may run the
# same commands).
pgrep_in_ns() { # head|worker ERE
    local p cmd
    for p in $(ip netns pids "$NS_PREFIX$1" 2>/dev/null); do
        cmd=$(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline") || continue
        [[ $cmd =~ $2 ]] && echo "$p"
    done
    return 0
}
pkill_in_ns() { # head|worker ERE [signal]
    local p
    for p in $(pgrep_in_ns "$1" "$2"); do kill "-${3:-TERM}" "$p" 2>/dev/null; done
    return 0
}

# A host's container facts through its podman API service (hosts.sh
# start_engine) rather than the podman CLI: a CLI call costs ~0.15 s of CPU,
# and a test that polls a rank's state every 0.1 s with it took most of a
# core from what it measured. An API that does not answer says "error", so
# that no check takes its silence for "no container".
ct_api() { curl -s --max-time 10 --unix-socket "$IT_DIR/$1/podman.sock" "${@:2}"; } # HOST curl-args...
# ct_state HOST NAME: true (running), false (not running, or no such), error
ct_state() {
    local out code
    out=$(ct_api "$1" -w '\n%{http_code}' "http://d/containers/$2/json") || { echo error; return; }
    code=${out##*$'\n'}
    case $code in
        200) printf '%s' "${out%$'\n'*}" | jq -r '.State.Running' 2>/dev/null || echo error ;;
        # only the engine's own answer: a 404 of a path it does not serve is no answer
        404) printf '%s' "${out%$'\n'*}" | grep -q 'no such container' && echo false || echo error ;;
        *) echo error ;;
    esac
}
# ct_ids HOST [all]: the dsv41-r* containers' ids, running ones (or all); "error"
ct_ids() {
    local out
    out=$(ct_api "$1" -f -G --data-urlencode "all=$([ "${2:-}" = all ] && echo true || echo false)" \
        --data-urlencode 'filters={"name":["dsv41-r"]}' http://d/containers/json) || { echo error; return; }
    printf '%s' "$out" | jq -r '.[].Id' 2>/dev/null || echo error
}

# The environment dsv41-top gets on the head in every test. MODEL_DIR is
# absolute: the hosts share one filesystem, and a "~/" in the workers' paths
# is the worker account's home (root's), not the head's HOME.
head_env() {
    echo WORKER=worker SSH_CONFIG="$IT_DIR/ssh_config" SSH_KNOWN_HOSTS="$IT_DIR/known_hosts" \
        SSH_TIMEOUT=3 SSH_AUTH_SOCK= RUNTIME=podman RUNTIME_SOCKET="$IT_DIR/head/podman.sock" \
        WORKER_RUNTIME_SOCKET="$IT_DIR/worker/podman.sock" \
        GPUS= ULIMITS= HOME="$IT_DIR/home" \
        MODEL_DIR="$IT_DIR/home/models/DeepSeek-V4.1-Flash-Spark" \
        IMG="$SIM_IMAGE" WORKER_STATE_DIR="$IT_DIR/worker/state" \
        XDG_CONFIG_HOME="$IT_DIR/home/.config" STATE_DIR="$IT_DIR/head/state" \
        DSV41_SYS_ROOT="$IT_ROOT/tests/fixtures/sysfs/spark-head" \
        WORKER_SYS_ROOT="$IT_ROOT/tests/fixtures/sysfs/spark-worker"
}

# dsv41-top on the head; extra VAR=value words go before the command.
# the session helper (tests/it/session_helper.c): one cluster held across
# the commands a test writes to it; VAR=value words first, as top_head
top_session() {
    local envs=()
    while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
    # shellcheck disable=SC2046
    on_host head env $(head_env) TSAN_OPTIONS="${TSAN_OPTIONS:-}" "${envs[@]}" \
        "${DSV41_SESSION:-$IT_ROOT/build/tests/it-session}"
}
top_head() {
    local envs=()
    while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
    # shellcheck disable=SC2046
    on_host head env $(head_env) TSAN_OPTIONS="${TSAN_OPTIONS:-}" "${envs[@]}" "$BIN" "$@"
}

# A checkpoint skeleton with the real file names (empty shards, a small plan)
# in MODEL_DIR as head_env's HOME gives it; the hosts share the filesystem.
MODEL_SKELETON=$IT_DIR/home/models/DeepSeek-V4.1-Flash-Spark
model_skeleton() {
    local m=$MODEL_SKELETON
    mkdir -p "$m/exl3/plan" "$IT_DIR/worker/state"
    touch "$m/config.json" "$m/model.safetensors.index.json" \
        "$m/model-00005-of-00006.safetensors" "$m/model-00006-of-00006.safetensors"
    echo '{"qdir":"qn:q31:q31s"}' > "$m/exl3/plan/J268-ho-v31-K5n.json"
    (cd "$m" && sha256sum model-00005-of-00006.safetensors model-00006-of-00006.safetensors \
        > sha256-manifest.txt)
}

# Every test file starts with this: without the hosts, a check that expects a
# failure would pass for the wrong reason.
require_hosts() {
    local h
    for h in $HOSTS; do
        if [ ! -e "/run/netns/$NS_PREFIX$h" ] || [ ! -f "$IT_DIR/$h/containers.conf" ]; then
            echo "FAIL - the test hosts are not up (run tests/it/hosts.sh up, or tests/it/run.sh)"
            echo "0 passed, 1 failed"
            exit 1
        fi
    done
}

# Changes one byte of a file at an offset: to 'X', or to 'Y' where it was
# 'X' already (random test data holds an 'X' there one time in 256).
flip_byte() { # file offset
    local c=X
    [ "$(dd if="$1" bs=1 skip="$2" count=1 status=none)" = X ] && c=Y
    printf '%s' "$c" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { # name condition-command...
    local name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name"; return 1; fi
}
contains() { # haystack needle
    case $1 in *"$2"*) return 0 ;; esac
    echo "    expected to find: $2" >&2
    echo "    in: $(printf '%s' "$1" | head -c 2000)" >&2
    return 1
}
# A jq filter's raw output equals expected.
jq_is() { # json filter expected
    local got
    got=$(printf '%s' "$1" | jq -r "$2" 2>&1)
    [ "$got" = "$3" ] && return 0
    echo "    $2 = '$got', expected '$3'" >&2
    return 1
}
summary() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

# Stops every guard daemon the tests started on any host of this set (before
# a state directory is removed: a guard whose lock file is gone would stay behind).
stop_test_guards() {
    local h
    for h in $HOSTS; do pkill_in_ns "$h" "$IT_DIR/[^ ]*/dsv41-guard|$IT_ROOT/build[^ ]*/dsv41-guard"; done
}
