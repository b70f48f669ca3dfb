# The verify benches' measures (tests/bench/verify.sh here, device_verify.sh on
# the device tool's host), sourced.

best() { # command... : the best wall time of 3 runs, in seconds
    local b=999 t0 t1 t
    for _ in 1 2 3; do
        t0=$(date +%s.%N)
        "$@" > /dev/null 2>&1 || { echo "failed: $*" >&2; echo 999; return; }
        t1=$(date +%s.%N)
        t=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
        b=$(awk -v a="$b" -v t="$t" 'BEGIN {print (t < a) ? t : a}')
    done
    echo "$b"
}

# the ceiling, GB/s: OpenSSL's own sha256 on one 16 KiB buffer (L1-resident:
# no memory traffic, no copy from the page cache), one process per job
sha256_ceiling() { # jobs
    openssl speed -multi "$1" -evp sha256 -bytes 16384 -seconds 2 2>/dev/null |
        awk '$1 == "sha256" { v = $NF } END { sub(/k$/, "", v); printf "%.2f", v * 1000 / 1e9 }'
}

gb_per_s() { # bytes seconds
    awk -v b="$1" -v t="$2" 'BEGIN {printf "%.2f", b / t / 1e9}'
}
