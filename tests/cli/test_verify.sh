#!/bin/bash
# `dsv41-top verify` as an operator and a script use it, beside coreutils'
# sha256sum -c on the same files: the same verdict per file, clear errors for
# bad manifests, a hostile path or FIFO never opened or waited on, progress
# lines, the terminal bar, an interrupted run, JSON.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
TOP=${DSV41_BIN:-$root/build/dsv41-top}
T=$(mktemp -d /tmp/dsv41-verify-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T XDG_CONFIG_HOME=$T
D=$T/model
mkdir -p "$D/exl3"
head -c 67108864 /dev/urandom > "$D/model-00001-of-00006.safetensors"
printf '{"architectures": ["DeepseekV4ForCausalLM"]}\n' > "$D/config.json"
printf 'bank\n' > "$D/exl3/L00.part.safetensors"
(cd "$D" && sha256sum model-00001-of-00006.safetensors config.json exl3/L00.part.safetensors \
    > sha256-manifest.txt)

out=$("$TOP" verify --help); rc=$?
check "--help: usage, exit 0" eval '[ $rc = 0 ] && contains "$out" "usage: dsv41-top verify"'
out=$("$TOP" verify --bogus 2>&1); rc=$?
check "an unknown option: usage, exit 2" eval '[ $rc = 2 ] && contains "$out" "usage:"'

out=$(MODEL_DIR=$D "$TOP" verify 2>&1); rc=$?
check "all files match: exit 0" [ $rc = 0 ]
check "all files match: said per file" contains "$out" "OK          exl3/L00.part.safetensors"
check "all files match: the summary" contains "$out" "3 of 3 file(s) OK"
check "MODEL_DIR from the environment" contains "$out" "in $D against $D/sha256-manifest.txt"

# one byte flipped in the middle of the shard, one file gone
flip_byte "$D/model-00001-of-00006.safetensors" 33554432
rm "$D/config.json"
out=$("$TOP" verify --dir "$D" 2>&1); rc=$?
check "a corrupt and a missing file: exit 1" [ $rc = 1 ]
check "the corrupt shard: FAILED" contains "$out" "FAILED      model-00001-of-00006.safetensors: sha256 differs"
check "the missing file: MISSING" contains "$out" "MISSING     config.json"
ours=$(printf '%s\n' "$out" | awk '$1 == "OK" || $1 == "FAILED" || $1 == "MISSING" {sub(":", "", $2); print $2, ($1 == "OK" ? "OK" : "BAD")}' | sort)
theirs=$(cd "$D" && sha256sum -c sha256-manifest.txt 2>/dev/null | awk -F': ' '{print $1, ($2 == "OK" ? "OK" : "BAD")}' | sort)
check "the same verdict per file as sha256sum -c" eval '[ "$ours" = "$theirs" ] || { echo "    ours: $ours"; echo "    sha256sum: $theirs"; false; }'

json=$("$TOP" verify --dir "$D" --json config.json model-00001-of-00006.safetensors 2>/dev/null); rc=$?
check "json: exit 1, two files" eval '[ $rc = 1 ] && jq_is "$json" ".files | length" 2'
check "json: results" jq_is "$json" '[.files[] | .result] | sort | join(",")' 'FAILED,MISSING'
check "json: a missing file has no size" jq_is "$json" '.files[] | select(.path == "config.json") | .size' null

# bad manifests: the file and line, exit 2, nothing hashed
printf '%s  ok\nnot-a-hash  x\n' "$(printf '%064d' 0)" > "$T/bad.txt"
out=$("$TOP" verify --dir "$D" --manifest "$T/bad.txt" 2>&1); rc=$?
check "a malformed line: exit 2, file and line named" eval \
    '[ $rc = 2 ] && contains "$out" "$T/bad.txt:2: expected 64 hex digits"'
printf '%s  ../outside\n' "$(printf '%064d' 0)" > "$T/hostile.txt"
out=$("$TOP" verify --dir "$D" --manifest "$T/hostile.txt" 2>&1); rc=$?
check "a path out of the directory: refused" eval '[ $rc = 2 ] && contains "$out" "hostile.txt:1: path with a '"'..'"' part"'
out=$("$TOP" verify --dir "$T/nowhere" 2>&1); rc=$?
check "no manifest: exit 2, said" eval '[ $rc = 2 ] && contains "$out" "cannot read the manifest $T/nowhere/sha256-manifest.txt"'
out=$("$TOP" verify --dir "$D" not-listed 2>&1); rc=$?
check "a path the manifest lacks: exit 2" eval '[ $rc = 2 ] && contains "$out" "not-listed is not in the manifest"'

# a FIFO where a file should be: reported, never waited on
mkfifo "$D/fifo"
printf '%s  fifo\n' "$(printf '%064d' 0)" > "$T/fifo.txt"
out=$(timeout 10 "$TOP" verify --dir "$D" --manifest "$T/fifo.txt" 2>&1); rc=$?
check "a FIFO: UNREADABLE, not a hang" eval '[ $rc = 1 ] && contains "$out" "UNREADABLE  fifo: not a regular file"'

# progress lines and an interrupted run: a sparse 8 GB file hashes for seconds
truncate -s 8G "$D/huge.bin"
printf '%s  huge.bin\n' "$(printf '%064d' 0)" > "$T/huge.txt"
"$TOP" verify --dir "$D" --manifest "$T/huge.txt" --progress 0.2 > "$T/out" 2>&1 &
pid=$!
sleep 1.2
kill -TERM $pid
wait $pid; rc=$?
out=$(cat "$T/out")
check "progress lines when not a terminal" contains "$out" " of 8.59 GB "
check "interrupted: exit 1" [ $rc = 1 ]
check "interrupted: the file is CANCELLED" contains "$out" "CANCELLED   huge.bin"
check "interrupted: said in the summary" contains "$out" "; interrupted"

# a terminal: a bar redrawn in place on stderr
rm "$D/huge.bin"
truncate -s 2G "$D/huge.bin"
script -qec "$(printf '%q ' "$TOP" verify --dir "$D" --manifest "$T/huge.txt")" /dev/null > "$T/tty" 2>&1
check "a terminal: the progress bar" grep -q 'verify \[#*\.*\] ' "$T/tty"
check "a terminal: the bar cleared before the result" eval "grep -q \$'\\r\\033\\[KFAILED' '$T/tty' || grep -q \$'\\033\\[KFAILED' '$T/tty'"

summary
