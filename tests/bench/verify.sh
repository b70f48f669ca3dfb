#!/bin/bash
# verify beside the script era's `sha256sum -c` and a parallel
# `xargs -P N sha256sum`, on the same files read from the page cache (each
# tool reads them once untimed first), best of 3 runs each. Disk speed is
# left out on purpose: it is the same for every tool.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
TOP=$root/build/dsv41-top
. "$root/tests/bench/verify_lib.sh"
# 3 GiB: a checkpoint's shards are GBs each, so the program's start (~20 ms of dynamic
# linking) must not weigh as it would on a second's work
FILES=${VERIFY_BENCH_FILES:-4} MB=${VERIFY_BENCH_MB:-768}
D=$(mktemp -d /tmp/dsv41-verify-bench.XXXXXX)
trap 'rm -rf "$D"' EXIT
for i in $(seq "$FILES"); do head -c $((MB << 20)) /dev/urandom > "$D/f$i.bin"; done
(cd "$D" && sha256sum f*.bin > sha256-manifest.txt)
cat "$D"/f*.bin > /dev/null
sync # nothing of the new files left to write back while the tools are timed
jobs=$(nproc); [ "$jobs" -gt 4 ] && jobs=4
total=$((FILES * MB * 1048576))
echo "== verify: $FILES files of $MB MiB from the page cache, best of 3, $(nproc) cores"
t_sum=$(best sh -c "cd '$D' && sha256sum -c sha256-manifest.txt")
t_par=$(best sh -c "cd '$D' && ls f*.bin | xargs -P $jobs -n 1 sha256sum")
t_ssl=$(best sh -c "cd '$D' && ls f*.bin | xargs -P $jobs -n 1 openssl dgst -sha256")
t_top=$(best "$TOP" verify --dir "$D" --jobs "$jobs")
ceil=$(sha256_ceiling "$jobs")
rate() { gb_per_s "$total" "$1"; }
printf '%-44s %8s GB/s\n' "sha256sum -c (the script era)" "$(rate "$t_sum")"
printf '%-44s %8s GB/s\n' "xargs -P $jobs sha256sum" "$(rate "$t_par")"
printf '%-44s %8s GB/s\n' "xargs -P $jobs openssl dgst -sha256" "$(rate "$t_ssl")"
printf '%-44s %8s GB/s\n' "openssl speed -multi $jobs (the ceiling)" "$ceil"
printf '%-44s %8s GB/s   ratio to sha256sum -c %s, to xargs -P %s\n' "dsv41-top verify --jobs $jobs" \
    "$(rate "$t_top")" "$(awk -v a="$t_sum" -v b="$t_top" 'BEGIN {printf "%.2f", a / b}')" \
    "$jobs $(awk -v a="$t_par" -v b="$t_top" 'BEGIN {printf "%.2f", a / b}')"
share=$(awk -v r="$(rate "$t_top")" -v c="$ceil" 'BEGIN {printf "%.2f", (c > 0) ? r / c : 0}')
printf '%-44s %8s   goal >= 0.90 of the ceiling: %s; beside openssl dgst %s\n' "  verify / openssl speed" \
    "$share" "$(awk -v s="$share" 'BEGIN {print (s >= 0.90) ? "met" : "NOT met"}')" \
    "$(awk -v a="$t_ssl" -v b="$t_top" 'BEGIN {printf "%.2f", a / b}')"
# the way verify chose on this machine (read() or mmap, hashfile.c), with what
# each cost while it measured them: one more run, its own line
printf '  %s\n' "$("$TOP" verify --dir "$D" --jobs "$jobs" | sed -n 's/^verify: the bytes reached/reached/p')"
