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

# trial_line "T0 T1" SENT: bench_guard's answer (its crossing and the
# victim's death, CLOCK_MONOTONIC seconds; T0 "-" where not seen) joined with
# fired_at's second, as "DEAD_MS SENT_MS" from the crossing: the earlier of
# bench_guard's and the guard's own (a guard that saw MemAvailable dip first
# fired before bench_guard's t0; timing from t0 would flatter it). SENT_MS
# "-" without a FIRED line; "none" when nothing was measured.
trial_line() {
    echo "${1:-none}" | awk -v s="${2:--}" '
        NF != 2 { print "none"; next }
        {
            c = $1
            if (s != "-" && (c == "-" || s + 0 < c + 0)) c = s
            if (c == "-") { print "none"; next }
            printf "%.2f %s\n", ($2 - c) * 1e3, s == "-" ? "-" : sprintf("%.2f", (s - c) * 1e3)
        }'
}
