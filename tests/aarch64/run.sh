#!/bin/bash
# The Spark's CPU: the program, its static helpers and the unit tests
# cross-built for aarch64 (make aarch64, warnings as errors), then run here
# under qemu-aarch64-static: every unit test (on aarch64 `char` is unsigned),
# and the static helpers as a worker runs them - dsv41-verify hashing a
# directory beside sha256sum, dsv41-guard's arguments and its guard on a
# fixture /proc, dsv41-xfer's refusals. Needs make deps-aarch64.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
. "$root/tests/it/lib.sh"
B=build-aarch64
Q=qemu-aarch64-static
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v "$Q" >/dev/null; then
    not_ok "the aarch64 cross compiler and qemu-user are missing: make deps-aarch64"
    summary
    exit 1
fi
out=$(make -s aarch64 WERROR=1 2>&1); rc=$?
check "make aarch64: builds, warnings as errors" [ $rc -eq 0 ] || printf '%s\n' "$out" | tail -20
[ $rc -eq 0 ] || { summary; exit 1; }
for b in dsv41-top dsv41-guard dsv41-verify dsv41-xfer dsv41-sim; do
    check "$b is an aarch64 program" eval 'file -b "$B/$b" | grep -q "ARM aarch64"'
done
for b in dsv41-guard dsv41-verify dsv41-xfer; do
    check "$b is static (a worker has nothing of ours)" eval 'file -b "$B/$b" | grep -q "statically linked"'
done

# --- the unit tests under qemu -----------------------------------------------------------
T=$(mktemp -d /tmp/dsv41-aarch64.XXXXXX)
trap 'rm -rf "$T"' EXIT
skipped() { # log: which cases skipped, if any
    local n
    n=$(grep -E '^\[  SKIPPED \] [a-z_0-9]+$' "$1" | sort -u | awk '{print $NF}' | paste -sd, -)
    [ -n "$n" ] && echo " (skipped: $n, which exec this CPU's programs)"
}
# (DSV41_TEST_QEMU: the few cases that exec this CPU's programs skip, as
# qemu-user cannot follow an exec without binfmt_misc; the log says which)
for t in tests/unit/test_*.c; do
    t=$(basename "$t" .c)
    if DSV41_TEST_QEMU=1 DSV41_FIXTURES=tests/fixtures "$Q" "$B/tests/$t" > "$T/$t.log" 2>&1; then
        ok "unit: $t under qemu-aarch64$(skipped "$T/$t.log")"
    else
        not_ok "unit: $t under qemu-aarch64"
        grep -E "FAILED|ERROR|Assert|error" "$T/$t.log" | head -10 | sed 's/^/    /'
    fi
done
out=$("$Q" "$B/dsv41-top" --version 2>&1)
check "dsv41-top --version under qemu-aarch64" contains "$out" "dsv41-top"

# --- the static helpers, as a worker runs them ------------------------------------------------
mkdir -p "$T/ck/sub"
head -c 3000000 /dev/urandom > "$T/ck/model-00001-of-00006.safetensors"
printf 'config\n' > "$T/ck/config.json"
head -c 1000 /dev/urandom > "$T/ck/sub/bank.safetensors"
(cd "$T/ck" && sha256sum model-00001-of-00006.safetensors config.json sub/bank.safetensors > "$T/manifest")
out=$("$Q" "$B/dsv41-verify" --dir "$T/ck" --manifest "$T/manifest" --jobs 2 2>&1); rc=$?
check "dsv41-verify: every file of the manifest verified, exit 0" eval \
    '[ $rc -eq 0 ] && [ "$(printf "%s\n" "$out" | grep -c "^file OK ")" = 3 ]' ||
    printf '%s\n' "$out" | tail -5 | sed 's/^/    /'
check "dsv41-verify: the sums are sha256sum's" eval \
    'printf "%s\n" "$out" | grep "^file OK " | grep -q "$(cut -d" " -f1 "$T/manifest" | head -1)"'
flip_byte "$T/ck/config.json" 0
out=$("$Q" "$B/dsv41-verify" --dir "$T/ck" --manifest "$T/manifest" 2>&1); rc=$?
check "dsv41-verify: a changed file FAILED, exit 1" eval \
    '[ $rc -eq 1 ] && printf "%s\n" "$out" | grep -q "^file FAILED .*config.json"'
out=$("$Q" "$B/dsv41-guard" --help 2>&1); rc=$?
check "dsv41-guard --help: usage, exit 0" eval '[ $rc -eq 0 ] && contains "$out" "usage: dsv41-guard"'
out=$("$Q" "$B/dsv41-guard" --state-dir "$T/s" --floor banana 2>&1); rc=$?
check "dsv41-guard: a bad value refused, exit 2" eval '[ $rc -eq 2 ] && contains "$out" "not understood: --floor banana"'
mkdir -p "$T/s" "$T/proc"
cp tests/fixtures/proc/spark/meminfo "$T/proc/meminfo"
out=$("$Q" "$B/dsv41-guard" --state-dir "$T/s" --proc-root "$T/proc" --runtime podman \
    --socket none --status 2>&1); rc=$?
check "dsv41-guard --status with no guard: exit 1, said" eval '[ $rc -eq 1 ] && [ -n "$out" ]'
printf 'tok\n' > "$T/token"
out=$("$Q" "$B/dsv41-xfer" --dir "$T/x" --plan "$T/no-plan" --token-file "$T/token" --listen 127.0.0.1:1 2>&1); rc=$?
check "dsv41-xfer: a missing plan refused" eval '[ $rc -ne 0 ] && [ -n "$out" ]'
summary
