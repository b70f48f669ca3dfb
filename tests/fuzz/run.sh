#!/bin/bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for the given
# number of seconds, seeded from the fixtures. `make fuzz-smoke` runs 10 s.
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build-fuzz
mkdir -p "$out"
pkgs="libssh2 libibverbs libcurl libcjson openssl zlib"
# shellcheck disable=SC2046
clang -std=c17 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=all $(for d in "$root"/src/*/; do printf -- '-I%s ' "$d"; done) \
    -I"$root/tui" $(pkg-config --cflags $pkgs) \
    -o "$out/fuzz_parsers" "$root/tests/fuzz/fuzz_parsers.c" "$root/tui/theme.c" \
    $(ls "$root"/src/*/*.c | grep -vE '/(guardd|verifyd|xferd)\.c$') $(pkg-config --libs $pkgs ncursesw) -pthread -lm
corpus=$out/corpus-parsers
mkdir -p "$corpus"
i=0
for f in "$root"/tests/fixtures/proc/spark/* "$root"/tests/fixtures/nvidia-smi/*.csv; do
    [ -f "$f" ] || continue
    for sel in 0 1 2 3 4; do
        { printf "\\x$(printf %02x $sel)"; cat "$f"; } > "$corpus/seed-$i-$sel"
    done
    i=$((i + 1))
done
for f in "$root"/themes/*.theme; do
    { printf '\x0b'; cat "$f"; } > "$corpus/seed-theme-$(basename "$f")"
done
printf '\x08\033[31mred\033]0;t\007 \xff\xe2\x80\xae x\r y\t z' > "$corpus/seed-log"
printf '\x091000 999 42 1 1 armed\nalive\n2026-11-30 13:22:35 h FIRED\n' > "$corpus/seed-guard"
printf '\x0c# m\n%064d  model-00001-of-00006.safetensors\n\\%064d *a\\\\b\\nc\n' 0 0 > "$corpus/seed-manifest"
printf '\x0dprogress 1 2\nfile OK 3 %064d 0 a\\nb\nend 0 0\n' 0 > "$corpus/seed-wire"
printf '\x0e    300,000,000  99%%  775.26MB/s    0:00:00 (xfr#1, to-chk=4/6)' > "$corpus/seed-rsync"
for f in "$root"/tests/fixtures/known_hosts/*; do
    { printf '\x0f'; cat "$f"; } > "$corpus/seed-kh-$(basename "$f")"
done
printf "\x10it's \\ back\\slash ! \$(x) \"q\"" > "$corpus/seed-quote"
printf '\x11/tmp/a b:c' > "$corpus/seed-setting"
printf '\x12[{"type":"file","oid":"%040d","size":1,"path":"a/b"},{"type":"directory","oid":"%040d","size":0,"path":"a"}]' 0 0 > "$corpus/seed-tree"
printf '\x13<https://h/api/models/a/b/tree/main?cursor=1>; rel="next"' > "$corpus/seed-link"
printf '\x14\x01\x10\x20\x00\x15\x18\x01\x00\xff' > "$corpus/seed-ranges"
printf '\x15dsv41-copy-plan 1\n0 10 5 %064d a/b\n1 0 -1 - c\\\\d\n' 0 > "$corpus/seed-plan"
printf '\x16need 1 0 4096' > "$corpus/seed-report"
printf '\x17DXF1\0\0\0\1\0\0\0\2\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x10' > "$corpus/seed-frame"
for f in "$root"/tests/fixtures/proc/*/pressure/memory "$root"/tests/fixtures/proc/*/buddyinfo \
    "$root"/tests/fixtures/kmsg/*; do
    { printf '\x18'; cat "$f"; } > "$corpus/seed-sig-$i"
    i=$((i + 1))
done
printf '\x091000 999 42 1 1 armed psi=12.5 frag=3 kmsg=2 warn=psi,frag\nalive\nx\n' > "$corpus/seed-guard-sig"
for f in "$root"/tests/fixtures/sse/*.txt; do
    { printf '\x07'; cat "$f"; } > "$corpus/seed-sse-$(basename "$f")"
done
set +e
"$out/fuzz_parsers" -max_total_time="$secs" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/" "$corpus" > "$out/fuzz.log" 2>&1
rc=$?
set -e
grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|Test unit written' "$out/fuzz.log" || true
if [ $rc -ne 0 ]; then
    echo "fuzz: libFuzzer found a failure (exit $rc); see $out/fuzz.log" >&2
    exit 1
fi
echo "fuzz: no failure in ${secs}s"
