#!/bin/bash
# Runs the libFuzzer harness (make build-clang: clang, ASan+UBSan) on each parser's
# target on its own (DSV41_FUZZ_TARGET=N) for the given number of seconds,
# with the seeds made here from the fixtures plus the committed corpus in
# tests/fuzz/corpus/NAME/. `make fuzz` runs 60 s each, `make fuzz-smoke` 1 s.
# Prints the executions per target; exits 1 at the first target that fails.
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build-clang
# the harness: make build-clang (the clang build's archives, made in parallel and kept)
make -s -C "$root" build-clang >/dev/null || exit 1
harness=$out/tests/fuzz_parsers
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
printf '\x20[{"type":"file","oid":"%040d","size":3,"path":"s.bin.part01"},{"type":"file","oid":"%040d","size":4,"path":"s.bin.part02"},{"type":"file","oid":"%040d","size":5,"path":"d/a"}]' 0 0 0 > "$corpus/seed-plan-split"
printf '\x14\x01\x10\x20\x00\x15\x18\x01\x00\xff' > "$corpus/seed-ranges"
printf '\x15dsv41-copy-plan 1\n0 10 5 %064d a/b\n1 0 -1 - c\\\\d\n' 0 > "$corpus/seed-plan"
printf '\x15dsv41-copy-plan 2\n0 3 5 git:%040d config.json\n' 0 > "$corpus/seed-plan-git"
printf '\x21dsv41-copy-state 2\nboot 1a2b-3c 7\nfile 100 5 - 0 2 a/b c\nrange 0 10\nrange 20 30\nfile 5 1 %064d 1 0 v\n' 0 > "$corpus/seed-state"
printf '\x21dsv41-copy-state 1\nfile 9 -1 - 0 1 x\nrange 1 9\n' > "$corpus/seed-state-v1"
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
printf '\x1cHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n5;x\r\nhello\r\n0\r\nT: 1\r\n\r\n' > "$corpus/seed-http1-chunked"
printf '\x1cHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!' > "$corpus/seed-http1-length"
printf '\x1d{"a":[1,-2.5e3,true,null,{"b":"\\u00e9\\ud83d\\ude00\\n"}],"Config":{"Labels":{"dsv41-top.managed":"1"}},"State":{"Pid":42}}' > "$corpus/seed-jscan"
printf '\x1e\x01\0\0\0\0\0\0\x04out\n\x02\0\0\0\0\0\0\x04err\n' > "$corpus/seed-frames"
for f in "$root"/tests/fixtures/engine/*.json; do
    { printf '\x1d'; cat "$f"; } > "$corpus/seed-jscan-$(basename "$f")"
    { printf '\x1f'; cat "$f"; } > "$corpus/seed-inspect-$(basename "$f")"
done
# the targets' names, in selector order, from the harness itself
names=$(sed -n '/TARGET_NAME\[TARGETS\] = {/,/};/p' "$root/tests/fuzz/fuzz_parsers.c" |
    grep -o '"[a-z0-9-]*"' | tr -d '"')
read -r -a name_of <<< "$(echo $names)"
# each generated seed into the corpus of the target its selector byte names
for f in "$corpus"/*; do
    sel=$(od -An -tu1 -N1 "$f" | tr -d ' ')
    [ -n "${name_of[$sel]:-}" ] || continue
    mkdir -p "$out/corpus/${name_of[$sel]}"
    cp "$f" "$out/corpus/${name_of[$sel]}/"
done
k=0
fail=0
total=0
for name in $names; do
    dirs=("$out/corpus/$name")
    mkdir -p "$out/corpus/$name"
    [ -d "$root/tests/fuzz/corpus/$name" ] && dirs+=("$root/tests/fuzz/corpus/$name")
    set +e
    DSV41_FUZZ_TARGET=$k "$harness" -max_total_time="$secs" -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$out/$name-" "${dirs[@]}" > "$out/fuzz-$name.log" 2>&1
    rc=$?
    set -e
    execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$out/fuzz-$name.log")
    printf 'fuzz %-20s %10s execs in %ss%s\n' "$name" "${execs:-?}" "$secs" \
        "$([ $rc -ne 0 ] && echo "  FAILED (exit $rc)")"
    total=$((total + ${execs:-0}))
    if [ $rc -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|Test unit written' "$out/fuzz-$name.log" || true
        echo "fuzz: libFuzzer found a failure in $name; see $out/fuzz-$name.log" >&2
        fail=1
    fi
    k=$((k + 1))
done
[ $fail -eq 0 ] || exit 1
echo "fuzz: no failure in $k targets, ${secs}s each, $total executions"
