#!/bin/bash
# The guard's kill latency and its signals on a quiet machine with an NVIDIA
# driver (the device tool's H200 host), without podman: the static guard
# guards a plain process given by --pid; bench_guard takes memory until
# MemAvailable crosses the floor and times the kill. Also prints what the
# nodes-alike check and the guard read there. Writes into $OUT when set.
set -u
. "$(dirname "$0")/guard_lib.sh"
out=${OUT:-/tmp/dsv41-device}
mkdir -p "$out"
exec > >(tee "$out/device_guard.txt") 2>&1
echo "== host: $(nproc) cores, kernel $(uname -r), page $(getconf PAGESIZE)"
echo "driver (sysfs): $(cat /sys/module/nvidia/version 2>&1)"
echo "driver (nvidia-smi): $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1)"
echo "== /proc/pressure/memory"; cat /proc/pressure/memory 2>&1
echo "== /proc/buddyinfo"; cat /proc/buddyinfo 2>&1
echo "== NVRM records in /dev/kmsg (raw, first 5)"
timeout 2 cat /dev/kmsg 2>&1 | grep -a NVRM | head -5 | tee "$out/kmsg-nvrm.txt"
cc=${CC:-gcc}
# the static guard's sources (its folder's, the container API's, util's),
# built here without make: the GPU machine has none of the -dev packages
$cc -O2 -std=c17 -D_GNU_SOURCE -Isrc/util -Isrc/container -Isrc/guard -o /tmp/dg src/guard/guardd.c \
    src/guard/guard.c src/guard/guardctl.c src/guard/guardout.c src/guard/guardres.c \
    src/guard/guardsig.c src/guard/guardcg.c src/guard/guarddie.c src/container/*.c \
    $(ls src/util/*.c | grep -v png.c) -lm -pthread || exit 1
$cc -O2 -D_GNU_SOURCE -o /tmp/bg tests/bench/bench_guard.c -pthread || exit 1
sd=/tmp/dsv41-dg
rm -rf "$sd"
mkdir -p "$sd"
trials=${TRIALS:-20}
trial_set() { # label: $trials trials into $out/kill_ms-label.txt, then the figures
    : > "$out/kill_ms-$1.txt"
    for i in $(seq "$trials"); do
        sleep 1000 &
        victim=$!
        avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
        floor_kib=$((avail - 2 * 1048576))
        floor_gib=$(awk -v k="$floor_kib" 'BEGIN {printf "%.3f", k / 1048576}')
        rm -f "$sd/memguard.log"
        /tmp/dg --state-dir "$sd" --pid "$victim" --floor "$floor_gib" --daemon >/dev/null
        r=$(/tmp/bg "$victim" "$floor_kib" $(( (avail - 4 * 1048576) / 1024 )))
        trial_line "$r" "$(fired_at "$sd/memguard.log")" >> "$out/kill_ms-$1.txt"
        /tmp/dg --state-dir "$sd" --stop >/dev/null
        kill "$victim" 2>/dev/null
        wait "$victim" 2>/dev/null
    done
    for c in 1 2; do
        [ $c = 1 ] && echo "== crossing -> the process dead, ms ($trials trials, $1): sorted" ||
            echo "== crossing -> the guard's SIGKILL sent, ms ($trials trials, $1): sorted"
        awk -v c=$c '$c ~ /^[0-9.]+$/ {print $c}' "$out/kill_ms-$1.txt" | sort -n | tr '\n' ' '; echo
        awk -v c=$c '$c ~ /^[0-9.]+$/ {print $c}' "$out/kill_ms-$1.txt" | sort -n |
            awk '{v[NR]=$1} END {i=int(NR*0.99+0.999); if (i<1) i=1; if (i>NR) i=NR; print "p50", v[int((NR+1)/2)], "p99", v[i], "max", v[NR]}'
    done
}
trial_set idle
# every core but one busy, and a writer to the disk (direct I/O: the page cache stays put)
load=()
for _ in $(seq $(( $(nproc) - 1 ))); do sh -c 'while :; do :; done' & load+=($!); done
sh -c 'while :; do dd if=/dev/zero of=/tmp/dsv41-dg-writer bs=1M count=128 oflag=direct status=none ||
    dd if=/dev/zero of=/tmp/dsv41-dg-writer bs=1M count=128 conv=fsync status=none; done' & load+=($!)
trial_set loaded
kill "${load[@]}" 2>/dev/null; wait "${load[@]}" 2>/dev/null
pkill -f dsv41-dg-writer 2>/dev/null; rm -f /tmp/dsv41-dg-writer
echo "== the guard's log (signals read there)"
grep -v 'ranks resolved' "$sd/memguard.log" | head -8
cat "$sd"/guard.*.heartbeat 2>/dev/null
