#!/bin/bash
# `dsv41-top download` against dsv41-sim's hub on loopback, the bytes served
# by real nginx (Range, limit_rate) or by the simulator's own CDN with its
# faults. Every check of bytes sent is judged by what the server counted.
# (The hub's own JS client against the same simulator: test_client.sh.)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/hub/lib.sh"

# --- a whole download, bytes from nginx ----------------------------------------------
start_nginx 0 || not_ok "nginx starts"
start_hub --page 7 --cdn "http://127.0.0.1:$NP"
out=$(DL "$T/a" --dry-run 2>&1); rc=$?
check "dry run: exit 0, what it would fetch and the disk it needs" eval '[ $rc -eq 0 ] && contains "$out" "would fetch" && contains "$out" "from 3 parts, written in place"'
check "dry run: nothing written" [ -z "$(find "$T/a" -type f ! -name '.dsv41-*' 2>/dev/null)" ]
out=$(DL "$T/a" --chunk 4 --progress 1 2>&1); rc=$?
check "download: exit 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || printf '%s\n' "$out" | tail -20
check "download: every file as the hub has it, the Engram shards whole" expect_dir "$T/a"
check "download: the shards match sha256-manifest.txt" eval '(cd "$T/a" && sha256sum -c --quiet sha256-manifest.txt)'
check "download: a line per verified file" contains "$out" "OK          model-00005-of-00006.safetensors"
check "download: progress lines" contains "$out" "download: "
check "download: the listing's every page read" [ "$(stat_of tree_pages)" -ge $(( $(find "$REV" | wc -l) / 7 )) ]
sent=$(nginx_bytes)
check "download: nginx sent each LFS byte once" [ "$sent" -eq "$(lfs_bytes)" ]
[ "$sent" -eq "$(lfs_bytes)" ] || { echo "    nginx sent $sent for $(lfs_bytes)"; awk '$2 != 206' "$T/nginx.log" | head -5; }
check "download: no token reached the CDN" eval '! grep -q "Bearer" "$T/nginx.log"'
before=$(nginx_bytes)
out=$(DL "$T/a" 2>&1); rc=$?
check "again: exit 0, nothing fetched" eval '[ $rc -eq 0 ] && [ "$(nginx_bytes)" -eq "$before" ] && contains "$out" "(verified earlier)"'
flip_byte "$T/a/model-00003-of-00006.safetensors" 1000
out=$(DL "$T/a" --verify 2>&1); rc=$?
check "--verify: a damaged complete file found and fetched again (exit 0)" eval '[ $rc -eq 0 ] && contains "$out" "REFETCH     model-00003-of-00006.safetensors" && expect_dir "$T/a"'
json=$(DL "$T/b" --json --include 'model-0000[56]*' 2>/dev/null); rc=$?
check "--json --include: exit 0, JSON lines only" eval '[ $rc -eq 0 ] && printf "%s\n" "$json" | jq -e . >/dev/null'
check "--include: a shard with its parts, nothing else" eval '[ -f "$T/b/model-00005-of-00006.safetensors" ] && [ ! -e "$T/b/config.json" ]'
check "--json: the end says ok" jq_is "$(printf '%s\n' "$json" | tail -1)" .ok true
kill "$(cat "$T/nginx.pid")" 2>/dev/null

# --- the token: only to the hub -------------------------------------------------------
start_hub --token hf_testsecret
out=$(DL "$T/tok" 2>&1); rc=$?
check "gated repo without a token: exit 2, HF_TOKEN named" eval '[ $rc -eq 2 ] && contains "$out" "set HF_TOKEN"'
printf 'hf_testsecret\n' > "$T/token"
out=$(env HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN_PATH="$T/token" HOME="$T" HF_TOKEN= \
    "$TOP" download --dir "$T/tok" 2>&1); rc=$?
check "with the token from HF_TOKEN_PATH: exit 0" [ $rc -eq 0 ]
check "the token never reached the CDN" [ "$(stat_of cdn_auth_seen)" -eq 0 ]
check "the token in no file of the download" eval '! grep -rq hf_testsecret "$T/tok"'
out=$(env HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN=hf_wrong HOME="$T" "$TOP" download --dir "$T/tok2" 2>&1); rc=$?
check "a token without access: exit 2, said" eval '[ $rc -eq 2 ] && contains "$out" "HF_TOKEN has no access"'

# --- interrupted at KILLS (10; make soak: 20) random moments, then resumed ---------------
# 8 connections at 1 MB/s each: the download takes ~20 s. Every other time
# SIGKILL (nothing runs after it), else SIGINT (it ends itself, saying so).
# What a kill loses: what landed since the last save of the state, and what
# was on its way (the sockets' buffers) - both a fraction of a MB at this rate.
KILLS=${KILLS:-10}
DSV41_HUB_FAULTS=rate=1000000 start_hub
int_ok=0 ints=0 int_real=0 int_seen=
for i in $(seq "$KILLS"); do
    DL_BG "$T/k.$i.log" "$T/k" --chunk 2 --connections 8 --progress 0
    p=$!
    sleep "$(awk -v r=$RANDOM 'BEGIN {printf "%.2f", 0.3 + r / 32768 * 1.2}')"
    if [ $((i % 2)) -eq 0 ]; then
        kill -9 "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    else
        ints=$((ints + 1))
        transferring "$p" "$T/k.$i.log" # SIGINT once the program handles it, not before
        kill -INT "$p" 2>/dev/null
        wait "$p"; r=$?
        # 1 and the resume hint, or 0 when it had just finished
        if [ $r -eq 1 ] && grep -q "interrupted: run download again to resume" "$T/k.$i.log"; then
            int_ok=$((int_ok + 1)) int_real=$((int_real + 1))
        elif [ $r -eq 0 ]; then
            int_ok=$((int_ok + 1))
        fi
        int_seen+="    run $i: exit $r: $(tail -1 "$T/k.$i.log")"$'\n'
    fi
done
check "SIGINT $ints times: each run ended itself, said how to resume ($int_real mid-way)" \
    eval '[ "$int_ok" -eq "$ints" ] && [ "$int_real" -ge 1 ]' || printf '%s' "$int_seen"
out=$(DL "$T/k" --chunk 2 2>&1); rc=$?
check "interrupted $KILLS times: the next run ends it (exit 0)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || printf '%s\n' "$out" | grep -v "^OK" | tail -15
check "interrupted $KILLS times: every file as the hub has it" expect_dir "$T/k"
sent=$(stat_of cdn_bytes) want=$(lfs_bytes)
echo "    the CDN sent $sent bytes for $want"
check "interrupted $KILLS times: at most 1.05 x the size fetched in all" [ "$sent" -le $(( want * 105 / 100 )) ]

# --- faults ---------------------------------------------------------------------------
# every response is over 100000 bytes (the smallest file is 256 KiB): each of
# the first twelve is cut, whichever arrives first
DSV41_HUB_FAULTS=drop=100000/12 start_hub
out=$(DL "$T/drop" --chunk 2 2>&1); rc=$?
check "dropped connections: exit 0, every file right" eval '[ $rc -eq 0 ] && expect_dir "$T/drop"'
check "dropped connections: the retries said" contains "$out" "retry: "
DSV41_HUB_FAULTS=norange start_hub
out=$(DL "$T/norange" --chunk 2 2>&1); rc=$?
check "200 for a Range request: exit 0, every file right" eval '[ $rc -eq 0 ] && expect_dir "$T/norange"'
check "200 for a Range request: the server did send whole files" [ "$(stat_of cdn_full)" -gt 0 ]
# small ranges over many connections: when the hash differs, transfers of the
# piece that delivered all their bytes have often not ended yet; their end is
# no failure (the piece's bytes start over without it being theirs)
DSV41_HUB_FAULTS=flip=model-00002-of-00006.safetensors@1000000 start_hub
out=$(DL "$T/flip" --chunk 1 --connections 32 2>&1); rc=$?
[ $rc -eq 0 ] || printf '%s\n' "$out" | grep -v '^OK' | tail -5
check "a flipped byte: caught and fetched again, exit 0" eval '[ $rc -eq 0 ] && contains "$out" "REFETCH     model-00002-of-00006.safetensors: its hash differed"'
check "a flipped byte: every file right" expect_dir "$T/flip"
# a split shard is hashed once, whole, against the manifest (#32); when the
# whole differs its parts are checked each against the hub's sha256, and only
# the bad one is fetched again
DSV41_HUB_FAULTS=flip=model-00005-of-00006.safetensors.part02@1000 start_hub
out=$(DL "$T/flip5" --chunk 1 --include 'model-00005*' 2>&1); rc=$?
[ $rc -eq 0 ] || printf '%s\n' "$out" | grep -v '^OK' | tail -5
check "a flipped byte in a part: that part fetched again, exit 0" eval '[ $rc -eq 0 ] && contains "$out" "REFETCH     model-00005-of-00006.safetensors.part02: its hash differed"'
check "a flipped byte in a part: no other part fetched again" eval '[ "$(printf "%s\n" "$out" | grep -c REFETCH)" = 1 ]'
check "a flipped byte in a part: the shard right" eval '(cd "$T/flip5" && grep " model-00005" "$REV/sha256-manifest.txt" | sha256sum -c --quiet)'
# a manifest that disagrees with parts that each match the hub: said, no refetch
cp -a "$HUB" "$T/hub2"
sed -i 's/^[0-9a-f]*\(  model-00005\)/0000000000000000000000000000000000000000000000000000000000000000\1/' \
    "$T/hub2/revs/$C1/sha256-manifest.txt"
HUB=$T/hub2 DSV41_HUB_FAULTS= start_hub
out=$(DL "$T/disagree" --include 'model-00005*' 2>&1); rc=$?
check "a manifest that disagrees with the parts: exit 1, said, nothing fetched again" eval '[ $rc -eq 1 ] && contains "$out" "the repository disagrees with itself" && ! printf "%s" "$out" | grep -q REFETCH'
[ $rc -eq 1 ] || printf '%s\n' "$out" | tail -5
DSV41_HUB_FAULTS=expire=1,rate=2000000 start_hub
out=$(DL "$T/exp" --chunk 8 --connections 4 2>&1); rc=$?
check "an expired CDN URL: resolved again, exit 0, every file right" eval '[ $rc -eq 0 ] && expect_dir "$T/exp" && contains "$out" "resolving the URL again"'
DSV41_HUB_FAULTS=429=3 start_hub
out=$(DL "$T/busy" 2>&1); rc=$?
check "429 with Retry-After: waited, exit 0" eval '[ $rc -eq 0 ] && expect_dir "$T/busy"'
# a hub that answers the headers, then nothing (the manifest; the tree listing):
# HF_STALL_S without a byte ends a try, five tries with a backoff, then the
# download stops naming what it waited for - it never waits forever
for what in sha256-manifest.txt /tree/; do
    DSV41_HUB_FAULTS=stall=$what start_hub
    t0=$(date +%s)
    out=$(HF_STALL_S=2 DL "$T/stall" 2>&1); rc=$?
    took=$(($(date +%s) - t0))
    check "stalled after its headers ($what): ends, exit 2, names it and HF_STALL_S" eval \
        '[ $rc -eq 2 ] && contains "$out" "$what" && contains "$out" "HF_STALL_S (2 s)"' ||
        printf '%s\n' "$out" | tail -5
    check "stalled ($what): every retry said" eval \
        '[ "$(printf "%s\n" "$out" | grep -c "^retry: .*the hub sent nothing for 2 s")" = 4 ]'
    # five tries of 2 s, backoffs of 0.5 + 1 + 2 + 4 s: 17.5 s, and slack for a busy machine
    check "stalled ($what): within the tries' time ($took s)" [ "$took" -le 40 ]
done

# --- listings that must be refused ------------------------------------------------------
for bad in "../../escaped:10" "/etc/passwd:10" "config.json:82" "huge.bin:99999999999999" \
           ".dsv41-download.json:10" "exl3:5" "...part01:10" "d/.part01:10"; do
    DSV41_HUB_FAULTS="inject=$bad" start_hub
    out=$(DL "$T/bad" 2>&1); rc=$?
    check "a hostile listing (${bad%%:*}): refused, exit 2, nothing written" eval '[ $rc -eq 2 ] && contains "$out" "listing" && [ -z "$(find "$T/bad" -type f ! -name ".dsv41-*" 2>/dev/null)" ]'
done
check "a hostile listing: nothing outside the directory" [ ! -e "$T/escaped" ]
# a next page on another host (nginx here) would get the token: never followed
DSV41_HUB_FAULTS="link=http://127.0.0.1:$NP" start_hub --page 5 --token hf_testsecret
out=$(env HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN=hf_testsecret HOME="$T" "$TOP" download --dir "$T/link" 2>&1); rc=$?
check "a next page on another host: refused, exit 2, said" eval '[ $rc -eq 2 ] && contains "$out" "next page is not on"'
check "a next page on another host: the token never went there" eval '! grep -q hf_testsecret "$T/nginx.log"'

# --- what the directory may hold: a symlink planted in a file's place ----------------------
start_hub
mkdir -p "$T/sym"
echo precious > "$T/outside"
ln -s "$T/outside" "$T/sym/config.json.incomplete"
out=$(DL "$T/sym" --include config.json 2>&1); rc=$?
check "a symlink as NAME.incomplete: not written through (the file it names untouched)" eval '[ $rc -ne 0 ] && contains "$out" "config.json.incomplete" && [ "$(cat "$T/outside")" = precious ]'
rm -rf "$T/sym"
# an empty state file (a power cut after a rename whose bytes never reached the disk)
: > "$T/a/.dsv41-download.json"
out=$(DL "$T/a" 2>&1); rc=$?
check "an empty state file: taken as none, the files checked again, exit 0" eval '[ $rc -eq 0 ] && expect_dir "$T/a"'

# --- main moves between two runs -------------------------------------------------------
DSV41_HUB_FAULTS=rate=1000000 start_hub
DL_BG /dev/null "$T/move" --progress 0
p=$!
sleep 1.5
kill -9 "$p"; wait "$p" 2>/dev/null
C2=$("$root/tests/hub/mkrepo.sh" "$HUB" 8 2)
start_hub
out=$(DL "$T/move" 2>&1); rc=$?
check "main moved: said, and the pinned commit finished (exit 0)" eval '[ $rc -eq 0 ] && contains "$out" "main now names ${C2:0:12}; this download continues ${C1:0:12}"'
check "main moved: the files are the pinned revision's" expect_dir "$T/move"
out=$(DL "$T/move" --fresh 2>&1); rc=$?
check "--fresh: the new main, exit 0" eval '[ $rc -eq 0 ] && expect_dir "$T/move" "$HUB/revs/$C2"'
echo "$C1" > "$HUB/refs/main"
start_hub

# --- a full disk ------------------------------------------------------------------------
mkdir -p "$T/small"
if mount -t tmpfs -o size=200m tmpfs "$T/small" 2>/dev/null; then
    head -c 100000000 /dev/zero > "$T/small/filler"
    out=$(DL "$T/small/dl" 2>&1); rc=$?
    check "a disk too small: refused up front with both numbers (exit 2)" eval '[ $rc -eq 2 ] && contains "$out" "the download needs" && contains "$out" "free"'
    rm "$T/small/filler"
    out=$(DL "$T/small/dl" 2>&1); rc=$?
    check "space freed: the download completes" eval '[ $rc -eq 0 ] && expect_dir "$T/small/dl"'
    umount "$T/small"
else
    not_ok "a tmpfs for the full-disk check (needs root)"
fi

# --- settings -------------------------------------------------------------------------
out=$(env HF_ENDPOINT="http://127.0.0.1:1" HOME="$T" "$TOP" download --dir "$T/x" 2>&1); rc=$?
check "no hub: exit 2, the endpoint named" eval '[ $rc -eq 2 ] && contains "$out" "cannot reach http://127.0.0.1:1"'
out=$(DL "$T/x" --revision no-such-branch 2>&1); rc=$?
check "an unknown revision: exit 2, REVISION named" eval '[ $rc -eq 2 ] && contains "$out" "check REVISION"'
out=$(env HF_ENDPOINT="http://127.0.0.1:$HP" HF_REPO=nobody/nothing HOME="$T" "$TOP" download --dir "$T/x" 2>&1); rc=$?
check "an unknown repository: exit 2, HF_REPO named" eval '[ $rc -eq 2 ] && contains "$out" "check HF_REPO"'
out=$("$TOP" download --help); rc=$?
check "--help: usage, exit 0" eval '[ $rc -eq 0 ] && contains "$out" "usage: dsv41-top download"'
summary
