#!/bin/bash
# make test's jobs after the builds, several at a time. Most of a test's time
# is waiting (a simulated boot, a timeout running out, a stream at a paced
# rate), so on two cores four jobs at once take about a quarter of the time
# one after another does. Each job's output is kept apart and printed whole
# when it ends, with its time; a job of the integration tests gets a set of
# test hosts of its own (tests/it/hosts.sh with DSV41_IT_SLOT=N), built for it
# and removed after it, so no test sees what another left and any order works.
#
# usage: tests/run.sh [-j N] [--list] [PATTERN...]
#   PATTERN   shell patterns over job names (default: every job); e.g.
#             'it/*' the integration tests, 'it/test_launch.sh' one test in
#             the plain build, '*+tsan' the TSan round
#   -j N      jobs at a time (default: DSV41_JOBS, else 4)
#   --list    the jobs and their expected seconds, longest first
# Needs the builds (make builds); the integration tests need root.
set -u
# Started with SIGINT ignored (a background job of a script, nohup), every
# test would inherit that, and the tests that interrupt a command of ours
# would see it keep running (it leaves an ignored signal ignored): the jobs
# get the default dispositions whatever started the run.
if [ -z "${DSV41_RUN_SIGNALS:-}" ]; then
    export DSV41_RUN_SIGNALS=default
    exec env --default-signal=INT,QUIT,TERM,HUP "$0" "$@"
fi
# in braces: bash reads the whole script before running any of it, so an edit
# made while a run goes on does not shift what the running one reads
{
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
JOBS=${DSV41_JOBS:-4}
list=
pats=()
while [ $# -gt 0 ]; do
    case $1 in
    -j) JOBS=$2; shift 2 ;;
    -j*) JOBS=${1#-j}; shift ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tests/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) pats+=("$1"); shift ;;
    esac
done
[ ${#pats[@]} -gt 0 ] || pats=('*')
TSAN_ENV="TSAN_OPTIONS=halt_on_error=1\\ exitcode=66"

# --- the jobs -------------------------------------------------------------------------
# One line each: name, expected seconds (longest first keeps the end short;
# from a run's printed times), what it needs, the command. Needs: "-" none,
# "hosts" a set of test hosts, "hosts:LOCK" / "-:LOCK" and no other job
# holding LOCK at the same time.
# The TSan round of the integration tests: the tests whose subject is our
# threads' concurrency (the console's and watch's monitor and pollers, the
# ssh I/O thread under drops and streams, the ProxyJump pump, launch/stop/copy
# on every node at once, cancellation across threads, the guard's threads); the others
# (settings and quoting, one-shot probes, valgrind) run in the plain build
# only: the threads they use are the ones these drive. docs/testing.md says
# which threads each covers. DSV41_IT_TSAN=all: every test twice.
TSAN_ROUND="test_copy.sh test_download_copy.sh test_engine_remote.sh test_first_contact.sh
    test_guard.sh test_hang.sh test_interrupt.sh test_launch.sh test_status.sh test_stop.sh
    test_three.sh test_watch.sh test_console.sh test_soak.sh"
# Expected seconds of the integration tests (plain build; the TSan build takes
# about as long: the tests wait far more than they compute), measured by a run.
declare -A SECS=([test_console.sh]=180 [test_launch.sh]=145 [test_guard.sh]=190
    [test_hang.sh]=103 [test_stop.sh]=55 [test_engine_remote.sh]=64 [test_interrupt.sh]=51
    [test_copy.sh]=84 [test_watch.sh]=94 [test_soak.sh]=47 [test_status.sh]=69
    [test_engine.sh]=44 [test_three.sh]=26 [test_first_contact.sh]=64 [test_alike.sh]=59
    [test_key.sh]=35 [test_valgrind.sh]=36 [test_status_local.sh]=47 [test_units.sh]=28
    [test_download_copy.sh]=34 [test_verify_peer.sh]=25 [test_accept.sh]=373 [test_ops.sh]=181)
# test_guard takes real memory from the machine (MemAvailable is one for all):
# two at once would cross each other's floors.
declare -A LOCK=([test_guard.sh]=memory)

job_table() {
    local b t n tsan
    for b in "" +asan +tsan; do
        case $b in
        "") n=build ;; +asan) n=build-address-undefined ;; +tsan) n=build-thread ;;
        esac
        echo "unit$b 80 - tests/unit/run.sh $n"
    done
    echo "sim/test_sim.sh 29 - tests/sim/test_sim.sh"
    echo "sim/test_client.sh 18 - tests/sim/test_client.sh"
    echo "sim/test_wedge.sh 56 - tests/sim/test_wedge.sh"
    echo "node/run.sh 12 - tests/node/run.sh"
    echo "hub/test_client.sh 20 - tests/hub/test_client.sh"
    echo "hub/test_download.sh 137 - tests/hub/test_download.sh"
    echo "hub/test_download.sh+tsan 208 - DSV41_BIN=$root/build-thread/dsv41-top $TSAN_ENV tests/hub/test_download.sh"
    echo "hub/test_assemble.sh 37 - tests/hub/test_assemble.sh"
    echo "pi/test_pi.sh 132 - tests/pi/test_pi.sh"
    for t in verify install units nvml engine key; do echo "cli/test_$t.sh 10 - tests/cli/test_$t.sh"; done
    echo "cli/test_deb.sh 103 - tests/cli/test_deb.sh"
    echo "cli/test_guard_stall.sh 10 - tests/cli/test_guard_stall.sh"
    echo "cli/test_guard_stall.sh+tsan 10 - DSV41_GUARD=$root/build-thread/dsv41-guard $TSAN_ENV tests/cli/test_guard_stall.sh"
    echo "cli/test_engine.sh+tsan 9 - DSV41_ENGINE_PROBE=$root/build-thread/tests/engine-probe $TSAN_ENV tests/cli/test_engine.sh"
    echo "cli/test_verify.sh+tsan 20 - DSV41_BIN=$root/build-thread/dsv41-top $TSAN_ENV tests/cli/test_verify.sh"
    echo "cli/test_key.sh+tsan 6 - DSV41_BIN=$root/build-thread/dsv41-top $TSAN_ENV tests/cli/test_key.sh"
    echo "fuzz-smoke 100 - tests/fuzz/run.sh 1"
    echo "aarch64/run.sh 330 - tests/aarch64/run.sh"
    for t in tests/it/test_*.sh tests/tui/test_*.sh; do
        n=$(basename "$t")
        tsan=
        [ "${DSV41_IT_TSAN:-}" = all ] && tsan=1
        case " $(echo $TSAN_ROUND) " in *" $n "*) tsan=1 ;; esac
        echo "${t#tests/} ${SECS[$n]:-60} hosts${LOCK[$n]:+:${LOCK[$n]}} bash $t"
        [ -n "$tsan" ] && echo "${t#tests/}+tsan ${SECS[$n]:-60} hosts${LOCK[$n]:+:${LOCK[$n]}} DSV41_BIN=$root/build-thread/dsv41-top DSV41_SESSION=$root/build-thread/tests/it-session $TSAN_ENV bash $t"
    done
}

# the selected jobs, longest first
declare -a NAME SEC NEED CMD
while read -r n s need cmd; do
    for p in "${pats[@]}"; do
        # shellcheck disable=SC2053
        if [[ $n == $p ]]; then
            NAME+=("$n") SEC+=("$s") NEED+=("$need") CMD+=("$cmd")
            break
        fi
    done
done < <(job_table | sort -k2,2nr -s)
if [ ${#NAME[@]} -eq 0 ]; then
    echo "tests/run.sh: no job matches ${pats[*]} (--list names them)" >&2
    exit 2
fi
if [ -n "$list" ]; then
    for i in "${!NAME[@]}"; do printf '%-32s %4s s  %s\n' "${NAME[$i]}" "${SEC[$i]}" "${NEED[$i]}"; done
    exit 0
fi

# --- running them -----------------------------------------------------------------------
OUT=$(mktemp -d /tmp/dsv41-tests.XXXXXX)
declare -A PID_JOB=() HELD=()
SLOT_FREE=()
for ((s = 1; s <= JOBS; s++)); do SLOT_FREE[s]=1; done
STATE=()  # per job: "" pending, run, done
T0=()
CPU=()
RESULT=()
FAILED=()
start=$SECONDS

cleanup() {
    local p
    for p in "${!PID_JOB[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A job in its own process group (set -m), so that an interrupted run can end
# every process a job started.
run_job() { # index slot
    local i=$1 slot=$2 log=$OUT/$1.log
    set -m
    (
        set +m
        trap 'exit 143' TERM INT
        # the slot names the job's test hosts and its loopback ports (lib.sh)
        export DSV41_IT_SLOT=$slot
        if [[ ${NEED[$i]} == hosts* ]]; then
            if [ "$(id -u)" != 0 ]; then
                echo "FAIL - the integration tests need root (network namespaces, sshd, podman)"
                exit 1
            fi
            trap 'tests/it/hosts.sh down >/dev/null 2>&1' EXIT
            tests/it/hosts.sh up || { echo "FAIL - could not build the test hosts (slot $slot)"; exit 1; }
        fi
        eval "${CMD[$i]}"
        rc=$?
        # the CPU its own processes took (what it waited for: not the
        # daemons of its test hosts), the second line of times
        times > "$OUT/$i.cpu" # not in a pipe: a forked times sees no children
        exit $rc
    ) > "$log" 2>&1 < /dev/null &
    set +m
    PID_JOB[$!]=$i
    STATE[i]=run
    T0[i]=$SECONDS
    SLOTOF[i]=$slot
    SLOT_FREE[slot]=
    [[ ${NEED[$i]} == *:* ]] && HELD[${NEED[$i]#*:}]=1
}

# the first pending job whose lock is free
next_job() {
    local i
    for i in "${!NAME[@]}"; do
        [ -z "${STATE[i]:-}" ] || continue
        [[ ${NEED[$i]} == *:* ]] && [ -n "${HELD[${NEED[$i]#*:}]:-}" ] && continue
        echo "$i"
        return 0
    done
    return 1
}

# "0m12.345s 0m3.210s" (times: user, system) as whole seconds of CPU
job_cpu() {
    [ -s "$1" ] && awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } printf "%.0f", s }' "$1"
}

SLOTOF=()
left=${#NAME[@]}
echo "== tests/run.sh: ${#NAME[@]} jobs, $JOBS at a time (output of each when it ends)"
while [ "$left" -gt 0 ]; do
    for ((s = 1; s <= JOBS; s++)); do
        [ -n "${SLOT_FREE[s]}" ] || continue
        i=$(next_job) || break
        run_job "$i" "$s"
    done
    wait -n -p pid
    rc=$?
    [ -n "${pid:-}" ] && [ -n "${PID_JOB[$pid]:-}" ] || continue
    i=${PID_JOB[$pid]}
    unset "PID_JOB[$pid]"
    STATE[i]=done
    SLOT_FREE[${SLOTOF[$i]}]=1
    [[ ${NEED[$i]} == *:* ]] && unset "HELD[${NEED[$i]#*:}]"
    left=$((left - 1))
    took=$((SECONDS - T0[i]))
    cpu=$(job_cpu "$OUT/$i.cpu")
    CPU[i]=$cpu
    RESULT[i]="$took s, exit $rc"
    [ "$rc" -eq 0 ] || FAILED+=("${NAME[$i]}")
    echo "==== ${NAME[$i]} (slot ${SLOTOF[$i]}, started at $((T0[i] - start)) s)"
    cat "$OUT/$i.log"
    echo "== ${NAME[$i]}: $took s (exit $rc${cpu:+, $cpu CPU-s})$([ "$rc" -ne 0 ] && echo '  FAILED')"
done

echo "== tests/run.sh: each job's time, longest first"
for i in "${!NAME[@]}"; do printf '%6s s %6s CPU-s  %s%s\n' "${RESULT[i]%% s,*}" "${CPU[i]:-?}" "${NAME[$i]}" \
    "$([ "${RESULT[i]##*exit }" != 0 ] && echo "  FAILED (exit ${RESULT[i]##*exit })")"; done | sort -rn
echo "== tests/run.sh: ${#NAME[@]} jobs in $((SECONDS - start)) s, $JOBS at a time; ${#FAILED[@]} failed${FAILED:+: ${FAILED[*]}}"
[ ${#FAILED[@]} -eq 0 ]
exit
}
