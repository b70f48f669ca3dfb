#!/bin/bash
# verify's hashing on a quiet real host (the device tool's machine: no
# nested paging, 16 cores), beside OpenSSL's own speed in the same run:
# `make bench`'s verify figure comes from the 2-core VM, where the copy from
# the page cache (memory traffic openssl speed's L1-resident buffer does not
# have) costs ~13 %. Runs the static worker helper, dsv41-verify, which is
# verify's hashing loop (src/verify/verify.c) without the head's linking: the
# GPU machine has no -dev packages to build the head. Needs DSV41_VERIFY (a
# static dsv41-verify built here); writes into $OUT when set.
set -u
out=${OUT:-/tmp/dsv41-device}
mkdir -p "$out"
exec > >(tee "$out/device_verify.txt") 2>&1
bin=${DSV41_VERIFY:?the static dsv41-verify built here}
. "$(dirname "$0")/verify_lib.sh"
FILES=${FILES:-16} MB=${MB:-768}
D=$(mktemp -d /tmp/dsv41-dverify.XXXXXX)
trap 'rm -rf "$D"' EXIT
echo "== host: $(nproc) cores, kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
# their pids waited for: a bare wait would wait for the tee above too
pids=()
for i in $(seq "$FILES"); do head -c $((MB << 20)) /dev/urandom > "$D/f$i.bin" & pids+=($!); done
wait "${pids[@]}"
(cd "$D" && ls f*.bin | xargs -P "$(nproc)" -n 1 sha256sum > sha256-manifest.txt)
cat "$D"/f*.bin > /dev/null
total=$((FILES * MB * 1048576))
rate() { gb_per_s "$total" "$1"; }
for jobs in 2 4 8 16; do
    [ "$jobs" -le "$(nproc)" ] || continue
    ceil=$(sha256_ceiling "$jobs")
    t_ssl=$(best sh -c "cd '$D' && ls f*.bin | xargs -P $jobs -n 1 openssl dgst -sha256")
    echo "== $jobs jobs, $FILES files of $MB MiB from the page cache, best of 3"
    printf '%-46s %8s GB/s\n' "openssl speed -multi $jobs (the ceiling)" "$ceil"
    printf '%-46s %8s GB/s\n' "xargs -P $jobs openssl dgst -sha256" "$(rate "$t_ssl")"
    # the way the bytes reach the hash (hashfile.c): chosen by measuring
    # (auto), and each forced, to show whether auto chose the cheaper here
    for io in auto read map; do
        t_top=$(DSV41_VERIFY_IO=${io#auto} best "$bin" --dir "$D" \
            --manifest "$D/sha256-manifest.txt" --jobs "$jobs")
        printf '%-46s %8s GB/s   %s of the ceiling (goal 0.90), %s x openssl dgst\n' \
            "dsv41-verify --jobs $jobs ($io)" "$(rate "$t_top")" \
            "$(awk -v r="$(rate "$t_top")" -v c="$ceil" 'BEGIN {printf "%.2f", (c > 0) ? r / c : 0}')" \
            "$(awk -v a="$t_ssl" -v b="$t_top" 'BEGIN {printf "%.2f", a / b}')"
    done
done
