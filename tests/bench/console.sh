#!/bin/bash
# The console's figures beside htop -d 10 at the same terminal size, in one
# run, on the test hosts (needs hosts.sh up):
#   idle CPU and bytes written to the terminal per second,
#   CPU and RSS while both ranks log 2,000 lines/s each,
#   key press to updated screen.
# With SOAK_S=N it instead floods for N seconds and fails unless RSS stays
# <= 64 MB and flat (make soak: 600 s; make test: a short smoke).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/it/lib.sh"
require_hosts
W=120 H=40
IDLE_S=${CONSOLE_IDLE_S:-30}
FLOOD_S=${CONSOLE_FLOOD_S:-30}
RATE=${CONSOLE_RATE:-2000}
SOAK_S=${SOAK_S:-}
TCK=$(getconf CLK_TCK)
S_TOP=dsv41-bench-top-$$ S_HTOP=dsv41-bench-htop-$$
out=$(mktemp -d)

cleanup() {
    tmux kill-session -t $S_TOP 2>/dev/null
    tmux kill-session -t $S_HTOP 2>/dev/null
    top_head stop >/dev/null 2>&1
    rm -rf "$out"
}
trap cleanup EXIT

model_skeleton
stop_test_guards
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state"
mkdir -p "$IT_DIR/head/state" "$IT_DIR/worker/state"
launch() { # extra EXTRA_ENV words
    top_head stop >/dev/null 2>&1
    top_head "EXTRA_ENV=DSV41_SIM_BOOT_MS=500 $*" launch >"$out/launch.log" 2>&1 ||
        { echo "launch failed:"; tail -5 "$out/launch.log"; exit 1; }
}
cat > "$out/console.sh" <<EOF
#!/bin/bash
DSV41_IT_SLOT="$IT_SLOT"
. "$root/tests/it/lib.sh"
BIN="$BIN"
top_head TERM=tmux-256color LANG=C.UTF-8 DSV41_NVML_LIB="$root/build/tests/libnvml-standin.so" \
    DSV41_NVML_STANDIN=gb10 "\$@"
EOF
chmod +x "$out/console.sh"
start_console() {
    tmux kill-session -t $S_TOP 2>/dev/null
    tmux new-session -d -s $S_TOP -x $W -y $H "$out/console.sh --title bench-$$"
    for _ in $(seq 100); do
        tmux capture-pane -p -t $S_TOP | grep -q "API up" && break
        sleep 0.1
    done
    TOP_PID=$(pgrep -f -- "--title bench-$$" | while read -r p; do
        [ "$(cat /proc/$p/comm)" = dsv41-top ] && echo "$p"; done | head -1)
}
# utime+stime (own) and cutime+cstime (waited children), in ticks
ticks() { awk '{print $14 + $15, $16 + $17}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# CPU % of one core over S seconds and bytes/s the program wrote to its pane
measure() { # session pid seconds -> "own% children% bytes/s"
    local s=$1 pid=$2 secs=$3 a b
    : > "$out/$s.bytes"
    tmux pipe-pane -t "$s" -o "cat >> $out/$s.bytes"
    read -r a ac < <(ticks "$pid")
    sleep "$secs"
    read -r b bc < <(ticks "$pid")
    tmux pipe-pane -t "$s"
    local bytes
    bytes=$(stat -c %s "$out/$s.bytes")
    awk -v a="$a" -v b="$b" -v ac="$ac" -v bc="$bc" -v t="$TCK" -v s="$secs" -v n="$bytes" \
        'BEGIN {printf "%.2f %.2f %.0f", (b - a) / t / s * 100, (bc - ac) / t / s * 100, n / s}'
}
# the newest chatter line number on screen ("INFO N [loggers.py...")
newest_line() { tmux capture-pane -p -t $S_TOP | grep -o 'INFO [0-9]* \[loggers' | awk '{print $2}' | sort -n | tail -1; }

if [ -n "$SOAK_S" ]; then
    launch "DSV41_SIM_LOG_RATE=$RATE"
    start_console
    [ -n "$TOP_PID" ] || { echo "FAIL - the console did not start"; exit 1; }
    # the ring buffers fill during the first seconds; flat = no growth after
    warm=$(( SOAK_S / 6 > 10 ? SOAK_S / 6 : 10 ))
    t0=$(date +%s) base="" max=0 first=$(rss_kb "$TOP_PID") last=0
    while [ $(( $(date +%s) - t0 )) -lt "$SOAK_S" ]; do
        sleep 5
        [ -d "/proc/$TOP_PID" ] || { echo "FAIL - the console died during the soak"; exit 1; }
        last=$(rss_kb "$TOP_PID")
        [ "$last" -gt "$max" ] && max=$last
        if [ -z "$base" ] && [ $(( $(date +%s) - t0 )) -ge "$warm" ]; then base=$last; fi
    done
    l=$(newest_line)
    echo "console soak: ${SOAK_S}s at 2x$RATE lines/s (line ${l:-?} on screen): RSS at start ${first} kB," \
        "after ${warm}s ${base} kB, max ${max} kB, at the end ${last} kB"
    rc=0
    if [ -n "${TSAN_OPTIONS:-}" ]; then
        # TSan's shadow memory is most of that RSS: under TSan the soak looks for races only
        [ -d "/proc/$TOP_PID" ] && echo "ok   - TSan build: no race stopped the console under the flood"
        exit 0
    fi
    if [ "$max" -le 65536 ]; then echo "ok   - RSS <= 64 MB"; else echo "FAIL - RSS above 64 MB"; rc=1; fi
    if [ "$max" -le $(( base + 2048 )) ]; then echo "ok   - RSS flat after the buffers filled (+2 MB at most)"
    else echo "FAIL - RSS grew by $(( max - base )) kB after the buffers filled"; rc=1; fi
    exit $rc
fi

echo "== console vs htop -d 10, both in tmux at ${W}x${H}, ranks up and idle (${IDLE_S}s)"
launch
start_console
tmux new-session -d -s $S_HTOP -x $W -y $H "exec htop -d 10"
sleep 3
HTOP_PID=$(tmux display -p -t $S_HTOP '#{pane_pid}')
measure $S_TOP "$TOP_PID" "$IDLE_S" > "$out/top.m" &
measure $S_HTOP "$HTOP_PID" "$IDLE_S" > "$out/htop.m"
wait
read -r t_own t_kids t_bps < "$out/top.m"
read -r h_own h_kids h_bps < "$out/htop.m"
verdict() { awk -v a="$1" -v b="$2" 'BEGIN {print (a <= b) ? "met" : "NOT met"}'; }
printf '%-40s %8s %% CPU (+%s %% in its sampling children)\n' "dsv41-top idle" "$t_own" "$t_kids"
printf '%-40s %8s %% CPU (+%s %%)\n' "htop -d 10 idle" "$h_own" "$h_kids"
printf '%-40s %8s   goal dsv41-top <= htop: %s\n' "CPU ratio dsv41-top / htop" \
    "$(awk -v a="$t_own" -v b="$h_own" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')" "$(verdict "$t_own" "$h_own")"
printf '%-40s %8s %% CPU   goal <= htop'"'"'s %s %%: %s\n' "dsv41-top idle, own + children" \
    "$(awk -v a="$t_own" -v b="$t_kids" 'BEGIN {printf "%.2f", a + b}')" \
    "$(awk -v a="$h_own" -v b="$h_kids" 'BEGIN {printf "%.2f", a + b}')" \
    "$(verdict "$(awk -v a="$t_own" -v b="$t_kids" 'BEGIN {print a + b}')" \
               "$(awk -v a="$h_own" -v b="$h_kids" 'BEGIN {print a + b}')")"
printf '%-40s %8s bytes/s\n' "dsv41-top to the terminal" "$t_bps"
printf '%-40s %8s bytes/s\n' "htop -d 10 to the terminal" "$h_bps"
printf '%-40s %8s   goal dsv41-top <= htop: %s\n' "bytes ratio dsv41-top / htop" \
    "$(awk -v a="$t_bps" -v b="$h_bps" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')" "$(verdict "$t_bps" "$h_bps")"

# processes each starts, counted apart from the CPU window (strace stops the
# traced program at each system call): every successful execve, children's
# children too. The head asks podman's API socket for its ranks and, with the
# stand-in NVML (as a Spark's driver library), starts no nvidia-smi.
echo "== processes started in ${EXEC_S:=60}s, idle (strace -f, successful execve)"
execs() { # pid -> count
    timeout "$EXEC_S" strace -f -qq -e trace=execve -p "$1" -o "$out/exec.$1" 2>/dev/null
    grep 'execve(' "$out/exec.$1" | grep -vc '= -1'
}
execs "$TOP_PID" > "$out/top.x" &
execs "$HTOP_PID" > "$out/htop.x"
wait
printf '%-40s %8s per minute   goal 0 on the local node: %s\n' "dsv41-top processes started" \
    "$(( $(cat "$out/top.x") * 60 / EXEC_S ))" "$([ "$(cat "$out/top.x")" = 0 ] && echo met || echo "NOT met")"
printf '%-40s %8s per minute\n' "htop -d 10 processes started" "$(( $(cat "$out/htop.x") * 60 / EXEC_S ))"
[ "$(cat "$out/top.x")" = 0 ] || { echo "    what it started:"; grep 'execve(' "$out/exec.$TOP_PID" | grep -v '= -1' | cut -c1-120 | sort | uniq -c | sort -rn | head -5; }

echo "== key press to updated screen (tab 1 <-> 3, 20 presses; the pane searched every 2 ms)"
# through one tmux control-mode client (tmux -C): a key sent and the pane searched by tmux
# itself (#{C:text}: the line it is on, or 0) are a line each on its stdin and a short line
# back, no process started per probe (a tmux client and a grep of the pane each time cost
# ~17 ms here, most of the figure; bash reading the whole pane from a pipe, a byte per
# read(), ~24 ms); times from bash's $EPOCHREALTIME
# -f no-output: without it tmux copies the console's output to this client as %output
# lines, which bash skips a byte per read(): ~20 ms of a 4 KB frame went into the figure
coproc TM { exec tmux -C attach -f no-output -t "$S_TOP" 2>&1; }
exec {SLP}<> <(:) # a pipe nobody writes: read -t on it is a sleep without a process
tm_reply() { # the next reply block -> TM_REPLY (notifications between blocks skipped)
    TM_REPLY=
    local line inblock=
    while IFS= read -r -t 5 line <&"${TM[0]}"; do
        case $line in
        %begin*) inblock=1 ;;
        %end* | %error*) [ -n "$inblock" ] && return 0 ;;
        *) [ -n "$inblock" ] && TM_REPLY+=$line$'\n' ;;
        esac
    done
    return 1
}
tm() { printf '%s\n' "$1" >&"${TM[1]}" && tm_reply; } # a tmux command -> its reply
tm_reply # the attach's own block comes first
lat=()
for i in $(seq 20); do
    if [ $((i % 2)) = 1 ]; then k=3 want=messages; else k=1 want="fabric (RoCE)"; fi
    t0=${EPOCHREALTIME/./}
    tm "send-keys -t $S_TOP $k"
    for _ in $(seq 1000); do
        tm "display-message -p -t $S_TOP '#{C:$want}'" || break
        [ "$TM_REPLY" != $'0\n' ] && break
        read -r -t 0.002 -u "$SLP"
    done
    t1=${EPOCHREALTIME/./}
    lat+=($((t1 - t0)))
done
# the same probe on a screen that is already there: the harness's own cost
t0=${EPOCHREALTIME/./}
for _ in $(seq 20); do tm "display-message -p -t $S_TOP '#{C:dsv41-top}'"; [ "$TM_REPLY" != $'0\n' ]; done
t1=${EPOCHREALTIME/./}
probe_ms=$(awk -v d=$((t1 - t0)) 'BEGIN {printf "%.2f", d / 20 / 1000}')
printf 'detach-client\n' >&"${TM[1]}"
exec {SLP}<&-
wait "$TM_PID" 2>/dev/null
p50=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int(NR*0.5)+1]/1000}')
p99=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[NR]/1000}')
printf '%-40s p50 %s ms, max %s ms (one probe costs %s ms)   goal <= 50 ms: %s\n' \
    "dsv41-top key -> screen" "$p50" "$p99" "$probe_ms" \
    "$(awk -v v="$p99" 'BEGIN {print (v <= 50) ? "met" : "NOT met"}')"
tmux kill-session -t $S_HTOP 2>/dev/null

echo "== both logs at $RATE lines/s each (${FLOOD_S}s)"
launch "DSV41_SIM_LOG_RATE=$RATE"
start_console
sleep 3
l0=$(newest_line); t0=$(date +%s%N)
measure $S_TOP "$TOP_PID" "$FLOOD_S" > "$out/flood.m"
l1=$(newest_line); t1=$(date +%s%N)
read -r f_own f_kids f_bps < "$out/flood.m"
rss=$(rss_kb "$TOP_PID")
shown=$(awk -v a="${l0:-0}" -v b="${l1:-0}" -v d=$(( (t1 - t0) / 1000000 )) 'BEGIN {printf "%.0f", (b - a) / d * 1000}')
printf '%-40s %8s lines/s reached rank 0'"'"'s pane\n' "log flow" "$shown"
printf '%-40s %8s %% CPU   goal <= 10 %%: %s\n' "dsv41-top with both logs flooding" "$f_own" \
    "$(awk -v v="$f_own" 'BEGIN {print (v <= 10) ? "met" : "NOT met"}')"
printf '%-40s %8s bytes/s\n' "dsv41-top to the terminal, flooding" "$f_bps"
printf '%-40s %8s kB   goal <= 65536 kB: %s (flat over 10 min: make soak)\n' "dsv41-top RSS" "$rss" \
    "$(awk -v v="$rss" 'BEGIN {print (v <= 65536) ? "met" : "NOT met"}')"
