#!/bin/bash
# `dsv41-top assemble`: the split shards of a directory `hf download` left
# (SHARD.partNN) rebuilt in place. Killed at random moments it continues; on a
# tmpfs with one chunk to spare beyond the parts it finishes (the script era's
# cat needs the shard's size again); a damaged part is named and `download
# --include` repairs it.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
TMPL=dsv41-as
. "$root/tests/hub/lib.sh"
S5=model-00005-of-00006.safetensors
S6=model-00006-of-00006.safetensors
AS() { "$TOP" assemble "$@"; }
# a directory as `hf download` leaves it: the repo's files, shards 5/6 in parts
hf_dir() { rm -rf "$1"; mkdir -p "$1" && cp -a "$REV/." "$1/"; }
written() { jq -r '.written // empty' "$1/$S5.dsv41-assemble.json" "$1/$S6.dsv41-assemble.json" 2>/dev/null | tr '\n' +; }

# --- a whole directory ----------------------------------------------------------------
hf_dir "$T/h"
t0=$(date +%s%N)
out=$(AS "$T/h" --chunk 1 --progress 0.01 2>&1); rc=$?
full_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "assemble: exit 0" [ $rc -eq 0 ]
check "assemble: shards whole, parts gone, the rest untouched" expect_dir "$T/h"
check "assemble: the shards match sha256-manifest.txt" eval '(cd "$T/h" && sha256sum -c --quiet sha256-manifest.txt)'
check "assemble: an OK line per shard" eval 'contains "$out" "OK          $S5" && contains "$out" "OK          $S6"'
check "assemble: progress lines" contains "$out" "assemble $S5"
check "assemble: no journal left" [ -z "$(find "$T/h" -name '*.dsv41-assemble.json*' -o -name '*.incomplete')" ]
out=$(AS "$T/h" 2>&1); rc=$?
check "nothing to assemble: exit 2, said" eval '[ $rc -eq 2 ] && contains "$out" "no SHARD.partNN pieces"'

# --- kill -9 at random moments, then a run to the end ----------------------------------
# The moments are drawn from how long a whole run took here just now, so a
# fast disk or a slow one both see kills all through the work; when the
# machine was slow just then and the work outran the kills, it starts again
# with moments half as far apart.
for attempt in 1 2 3 4; do
    hf_dir "$T/k"
    seen=" " kills=0
    for i in $(seq 40); do
        (exec "$TOP" assemble "$T/k" --chunk 1 --progress 0 > "$T/k.log" 2>&1) &
        pid=$!
        ms=$(( full_ms / 20 + RANDOM % (full_ms / 4 + 1) ))
        sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        rc=$?
        [ $rc -eq 137 ] || break # it finished first (or failed: checked below)
        kills=$((kills + 1))
        w=$(written "$T/k")
        case "$seen" in *" $w "*) ;; *) seen="$seen$w " ;; esac
    done
    distinct=$(echo $seen | wc -w)
    echo "    moments from ${full_ms} ms: $kills kills landed, at $distinct distinct journal states"
    [ "$distinct" -ge 3 ] && break
    full_ms=$((full_ms / 2))
done
check "kill -9: landed at three or more distinct points" [ "$distinct" -ge 3 ]
# the last run killed may have finished its work first (then nothing is left)
[ $rc -eq 0 ] || { AS "$T/k" --chunk 1 > "$T/k.log" 2>&1; rc=$?; }
cat "$T/k.log" | sed 's/^/    /'
check "kill -9: the run after the last kill finishes (exit 0, or nothing left to do)" eval '[ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -q "no SHARD.partNN pieces" "$T/k.log"; }'
check "kill -9: shards whole and matching, parts gone" eval 'expect_dir "$T/k" && (cd "$T/k" && sha256sum -c --quiet sha256-manifest.txt)'

# --- the disk: the parts and one chunk, no more -----------------------------------------
parts=$(cd "$REV" && du -cb $S5.part* $S6.part* | tail -1 | cut -f1)
mkdir -p "$T/small"
if mount -t tmpfs -o size=$(( parts + 3 * 1048576 )) tmpfs "$T/small" 2>/dev/null; then
    cp "$REV"/$S5.part* "$REV"/$S6.part* "$REV/sha256-manifest.txt" "$T/small/"
    if cat "$T/small/$S5".part* > "$T/small/catted" 2>/dev/null; then
        not_ok "the tmpfs is too big to tell: the script era's cat fit"
    else
        ok "the script era's cat does not fit on this tmpfs (the bound below can fail)"
    fi
    rm -f "$T/small/catted"
    out=$(KEEP_PARTS=1 AS "$T/small" 2>&1); rc=$?
    check "KEEP_PARTS=1 on a tight disk: refused up front with the bytes needed" eval '[ $rc -eq 1 ] && contains "$out" "needs" && contains "$out" "bytes free"'
    out=$(AS "$T/small" 2>&1); rc=$?
    check "a 1 GiB chunk on a tight disk: refused up front, nothing touched" eval '[ $rc -eq 1 ] && [ -z "$(find "$T/small" -name "*.incomplete")" ] && [ "$(ls "$T/small" | grep -c part)" -eq "$(ls "$REV" | grep -c part)" ]'
    find "$T/small" -name '*.dsv41-assemble.json' -delete
    out=$(AS "$T/small" --chunk 1 2>&1); rc=$?
    printf '%s\n' "$out" | sed 's/^/    /'
    check "--chunk 1: both shards rebuilt within the parts' space and 3 MiB" eval '[ $rc -eq 0 ] && (cd "$T/small" && sha256sum -c --quiet --ignore-missing sha256-manifest.txt) && [ -z "$(ls "$T/small" | grep part)" ]'
    umount "$T/small"
else
    not_ok "a tmpfs for the disk check (needs root)"
fi

# --- KEEP_PARTS=1 --------------------------------------------------------------------------
hf_dir "$T/keep"
out=$(KEEP_PARTS=1 AS "$T/keep" 2>&1); rc=$?
check "KEEP_PARTS=1: shards rebuilt, exit 0" eval '[ $rc -eq 0 ] && (cd "$T/keep" && sha256sum -c --quiet sha256-manifest.txt)'
check "KEEP_PARTS=1: the parts kept, unchanged" eval 'for p in $(cd "$REV" && ls | grep part); do cmp -s "$REV/$p" "$T/keep/$p" || exit 1; done'

# --- a damaged part: named; download --include repairs it; assemble then knows --------------
hf_dir "$T/bad"
flip_byte "$T/bad/$S5.part02" 12345
out=$(AS "$T/bad" 2>&1); rc=$?
check "a damaged part: exit 1, FAILED with both sums and the fix" eval '[ $rc -eq 1 ] && contains "$out" "FAILED      $S5 rebuilt from its parts has sha256" && contains "$out" "download --include $S5"'
check "a damaged part: the other shard still rebuilt" contains "$out" "OK          $S6"
check "a damaged part: no bad shard under its name" [ ! -e "$T/bad/$S5" ]
out=$(AS "$T/bad" 2>&1); rc=$?
check "a damaged part: a rerun fails the same way (nothing put in place)" eval '[ $rc -eq 1 ] && [ ! -e "$T/bad/$S5" ]'
start_hub
out=$(DL "$T/bad" --include "$S5" 2>&1); rc=$?
check "download --include repairs the shard" eval '[ $rc -eq 0 ] && cat "$REV/$S5".part* | cmp -s - "$T/bad/$S5"'
out=$(AS "$T/bad" 2>&1); rc=$?
check "assemble after the repair: already in place, journal removed, exit 0" eval '[ $rc -eq 0 ] && contains "$out" "already in place" && [ ! -e "$T/bad/$S5.dsv41-assemble.json" ]'
stop_hub

# --- what it refuses ---------------------------------------------------------------------
hf_dir "$T/gap"
rm "$T/gap/$S5.part02"
out=$(AS "$T/gap" 2>&1); rc=$?
check "a missing part: named, exit 1, nothing written for that shard" eval '[ $rc -eq 1 ] && contains "$out" "part 2 is missing" && [ ! -e "$T/gap/$S5.incomplete" ]'
hf_dir "$T/both"
cat "$REV/$S6".part* > "$T/both/$S6"
out=$(AS "$T/both" 2>&1); rc=$?
check "a whole shard beside its parts: the operator's choice, named" eval '[ $rc -eq 1 ] && contains "$out" "already whole beside its parts" && [ -e "$T/both/$S6.part01" ]'
hf_dir "$T/j"
printf '{"written":5,"parts":[{"name":"../../etc/passwd","size":9,"copied":5}]}' > "$T/j/$S5.dsv41-assemble.json"
out=$(AS "$T/j" 2>&1); rc=$?
check "a hostile journal: refused as damaged, exit 1" eval '[ $rc -eq 1 ] && contains "$out" "is damaged"'
hf_dir "$T/j2"
printf '{"written":0,"parts":[{"name":"%s.part01","size":16777216,"copied":0}]}' "$S6" > "$T/j2/$S5.dsv41-assemble.json"
out=$(AS "$T/j2" 2>&1); rc=$?
check "a journal naming another shard's part: refused as damaged; that shard still whole" eval '[ $rc -eq 1 ] && contains "$out" "is damaged" && cat "$REV/$S6".part* | cmp -s - "$T/j2/$S6"'
hf_dir "$T/ln"
echo "precious" > "$T/outside"
rm "$T/ln/$S5.part02"
ln -s "$T/outside" "$T/ln/$S5.part02"
out=$(AS "$T/ln" 2>&1); rc=$?
check "a part that is a symlink: refused, the file it points at untouched" eval '[ $rc -eq 1 ] && contains "$out" "not a file" && [ "$(cat "$T/outside")" = precious ]'
hf_dir "$T/lk"
flock -n "$T/lk/.dsv41-download.lock" sleep 5 &
lockpid=$!
sleep 0.3
out=$(AS "$T/lk" 2>&1); rc=$?
check "a download writing the directory: assemble refuses, nothing touched" eval '[ $rc -eq 1 ] && contains "$out" "another download is writing" && [ -e "$T/lk/$S5.part01" ] && [ ! -e "$T/lk/$S5.incomplete" ]'
kill $lockpid 2>/dev/null; wait $lockpid 2>/dev/null
out=$(AS "$T/nowhere" 2>&1); rc=$?
check "no such directory: exit 2, named" eval '[ $rc -eq 2 ] && contains "$out" "$T/nowhere"'
out=$(AS "$T/h" --chunk 0 2>&1); rc=$?
check "--chunk 0: usage, exit 2" [ $rc -eq 2 ]
out=$("$TOP" assemble --help); rc=$?
check "--help: usage, exit 0" eval '[ $rc -eq 0 ] && contains "$out" "usage: dsv41-top assemble"'
summary
