#!/bin/bash
# The memory guard beside the script era's: from MemAvailable crossing the
# floor to the rank's death, on an idle machine and then with every core but
# one busy (a CPU hog per core and a writer to the disk, O_DIRECT so the
# page cache - part of MemAvailable - stays put); then its CPU at rest.
# Needs the test hosts up (make bench: tests/bench/run.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/it/lib.sh"
. "$root/tests/bench/guard_lib.sh"
N=${BENCH_GUARD_TRIALS:-20}
hold=0 # MiB the rank holds (DSV41_SIM_HOLD_MIB); the large-rank set sets it
GB=$root/build/tests/bench-guard
GD=$IT_DIR/head/guardbench
mkdir -p "$GD"
echo "== memory guard: MemAvailable crossing the floor -> rank dead ($N trials each)"
# the script era's guard: awk once a second, then the runtime's CLI
cat > "$GD/script-guard.sh" <<'EOS'
while :; do
    a=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    if [ "$a" -lt "$1" ]; then
        for id in $(podman ps -q --filter name=dsv41-r); do podman kill "$id" >/dev/null 2>&1; done
    fi
    sleep 1
done
EOS
trial() { # ours|script -> latency ms
    on_host head podman rm -f -t 0 dsv41-r0 >/dev/null 2>&1
    on_host head podman run -d --name dsv41-r0 --network host -e DSV41_SIM_HOLD_MIB="$hold" \
        "$SIM_IMAGE" vllm serve /model --port 9008 >/dev/null
    local pid a floor gpid=
    pid=$(on_host head podman inspect -f '{{.State.Pid}}' dsv41-r0)
    # its memory all taken before the floor is set
    for _ in $( [ "$hold" -gt 0 ] && seq 300); do
        [ "$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)" -ge $((hold * 1000)) ] && break
        sleep 0.1
    done
    a=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    floor=$((a - 262144))
    if [ "$1" = ours ]; then
        rm -f "$GD"/memguard.log
        on_host head "$root/build/dsv41-guard" --state-dir "$GD" --runtime podman --ranks 1 \
            --floor "$(awk -v f=$floor 'BEGIN {printf "%.4f", f / 1048576}')" --daemon >/dev/null
        for _ in $(seq 50); do grep -q "ranks resolved: [0-9]" "$GD/memguard.log" 2>/dev/null && break; sleep 0.1; done
    else
        on_host head bash "$GD/script-guard.sh" "$floor" &
        gpid=$!
        sleep 0.2
    fi
    local r sent=
    r=$("$GB" "$pid" "$floor" 4096)
    if [ "$1" = ours ]; then
        # the guard's part: its FIRED line says when the SIGKILL left (the same clock)
        sent=$(fired_at "$GD/memguard.log")
        on_host head "$root/build/dsv41-guard" --state-dir "$GD" --stop >/dev/null
    else
        kill_in_ns head bash; kill $gpid 2>/dev/null; wait $gpid 2>/dev/null
    fi
    trial_line "$r" "$sent"
}
# column COL of the measured trials, sorted: their p50/p99 line, or their p99 alone
col() { awk -v c="$1" '$c ~ /^[0-9.]+$/ {print $c}' | sort -n; }
stats() { awk '{a[NR]=$1} END {if (NR) printf "p50 %.1f ms, p99 %.1f ms", a[int((NR+1)/2)], a[int(NR*0.99+0.999)]; else printf "no figure"}'; }
p99() { awk '{a[NR]=$1} END {print NR ? a[int(NR*0.99+0.999)] : 99999}'; }
run() { # ours|script label -> prints the lines; sets last_p99 (dead), last_sent_p99
    local res=() ok
    for _ in $(seq "$N"); do res+=("$(trial "$1" 2>/dev/null)"); done
    ok=$(printf '%s\n' "${res[@]}" | col 1 | wc -l)
    printf '%-44s %s  (%d of %d trials measured)\n' "$2" "$(printf '%s\n' "${res[@]}" | col 1 | stats)" \
        "$ok" "${#res[@]}"
    last_p99=$(printf '%s\n' "${res[@]}" | col 1 | p99)
    last_sent_p99=$(printf '%s\n' "${res[@]}" | col 2 | p99)
    [ "$1" = ours ] && printf '%-44s %s  (%d of them: from the FIRED lines)\n' "  the guard's part: crossing -> SIGKILL" \
        "$(printf '%s\n' "${res[@]}" | col 2 | stats)" "$(printf '%s\n' "${res[@]}" | col 2 | wc -l)"
    return 0
}
run ours "dsv41-guard (pidfd SIGKILL), idle"
ours_p99=$last_p99
run script "script era (1 s awk loop + CLI kill), idle"
printf '%-44s goal p99 <= 100 ms: %s\n' "" "$(awk -v p="$ours_p99" 'BEGIN {print (p <= 100) ? "met" : "NOT met"}')"

# the load: a hog on every core but one, a writer (direct I/O) beside them
cores=$(nproc); hogs=$((cores > 1 ? cores - 1 : 1))
load=()
for _ in $(seq $hogs); do sh -c 'while :; do :; done' & load+=($!); done
sh -c 'while :; do dd if=/dev/zero of="$1/writer.bin" bs=1M count=128 oflag=direct status=none 2>/dev/null ||
    dd if=/dev/zero of="$1/writer.bin" bs=1M count=128 conv=fsync status=none; done' sh "$GD" & load+=($!)
run ours "dsv41-guard, $hogs CPU hog(s) + a disk writer"
loaded_p99=$last_p99 loaded_sent_p99=$last_sent_p99
# a rank that holds memory, as a real one does: its death is the unmapping of
# that memory, which the guard does itself (process_mrelease, docs/guard.md).
# (4 KiB pages, as a rank's host memory is: ~3 s a GiB to take on the test VM
# under this load, so fewer trials. MemAvailable's return made no figure: the
# runtime's cleanup starts as the rank dies, and in one of ten trials half of
# the memory showed 2.6 s after the death, which I could not explain.)
hold=${BENCH_GUARD_HOLD_MIB:-1024}
N=$(( (N + 1) / 2 )) run ours "dsv41-guard, the same load, a $hold MiB rank"
ours_big=$last_p99
N=$(( (N + 3) / 4 )) run script "script era, the same load, a $hold MiB rank"
printf '%-44s the %s MiB rank dead, p99: ours %s ms, script era %s ms (x%s)\n' "" "$hold" "$ours_big" \
    "$last_p99" "$(awk -v a="$ours_big" -v b="$last_p99" 'BEGIN {printf "%.1f", (a > 0) ? b / a : 0}')"
hold=0
kill "${load[@]}" 2>/dev/null; wait "${load[@]}" 2>/dev/null
pkill -f "of=$GD/writer.bin" 2>/dev/null; rm -f "$GD/writer.bin"
met() { awk -v p="$1" 'BEGIN {print (p <= 5) ? "met" : "NOT met"}'; }
printf '%-44s goal p99 <= 5 ms under load: %s to the death, %s to the SIGKILL\n' "" \
    "$(met "$loaded_p99")" "$(met "$loaded_sent_p99")"
echo "    (dead: the rank's pidfd readable. After the SIGKILL the time is the kernel's: the rank's"
echo "     threads exit, then, as the container's init, its namespaces go: docs/guard.md)"
on_host head podman rm -f -t 0 dsv41-r0 >/dev/null 2>&1

echo "== memory guard: CPU at steady state (30 s, one rank resolved)"
on_host head podman run -d --name dsv41-r0 --network host "$SIM_IMAGE" vllm serve /model --port 9008 >/dev/null
on_host head "$root/build/dsv41-guard" --state-dir "$GD" --runtime podman --ranks 1 --floor 1 --daemon >/dev/null
sleep 3
gp=$(head -1 "$GD"/guard.spark-head.lock | cut -d" " -f1)
t0=$(awk '{print $14 + $15}' /proc/$gp/stat)
sleep 30
t1=$(awk '{print $14 + $15}' /proc/$gp/stat)
on_host head "$root/build/dsv41-guard" --state-dir "$GD" --stop >/dev/null
on_host head podman rm -f -t 0 dsv41-r0 >/dev/null 2>&1
pct=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", (b - a) / hz / 30 * 100}')
printf '%-44s %s %% of a core   goal <= 0.2%%: %s\n' "guard CPU" "$pct" "$(awk -v p="$pct" 'BEGIN {print (p <= 0.2) ? "met" : "NOT met"}')"
