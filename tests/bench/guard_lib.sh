# The guard benches' reading of a trial (tests/bench/guard.sh here,
# device_guard.sh on the device tool's host), sourced.

# fired_at LOG: the second of CLOCK_MONOTONIC at which the guard's FIRED line
# says its SIGKILL left ("... at monotonic S s"); empty when no such line
# came within a second (the guard writes it after the kill)
fired_at() {
    local s
    for _ in $(seq 50); do
        s=$(sed -n 's/.*FIRED: .* at monotonic \([0-9.]*\) s.*/\1/p' "$1" 2>/dev/null | head -1)
        [ -n "$s" ] && { echo "$s"; return 0; }
        sleep 0.02
    done
}

# trial_line "DEAD_MS T0_MONO_S" SENT: bench_guard's answer (crossing -> dead,
# and when the crossing was, same clock) joined with fired_at's second as
# "DEAD_MS SENT_MS" (crossing -> the guard's SIGKILL); DEAD_MS alone when
# either is missing, "none" when bench_guard measured nothing
trial_line() {
    echo "${1:-none}" | awk -v s="${2:-x}" \
        'NF == 2 && s != "x" {printf "%s %.2f\n", $1, (s - $2) * 1e3; next} {print $1}'
}
