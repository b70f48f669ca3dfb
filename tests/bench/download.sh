#!/bin/bash
# download beside aria2c -x16 -s16 and a single curl, the same files through
# the same hub (dsv41-sim's, on loopback) from the same nginx, each connection
# capped at 20 MiB/s like a CDN (limit_rate); then the peak disk of ours
# beside the script era's (its parts, then reassemble.sh's cat), and the CPU
# per GB fetched and hashed beside curl + sha256sum. Every figure comes from
# this run; connections are counted from nginx's log.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
# (DSV41_BIN, DSV41_SIM_BIN: other builds, e.g. a bundle on the device tool's host)
TOP=${DSV41_BIN:-$root/build/dsv41-top}
SIM=${DSV41_SIM_BIN:-$root/build/dsv41-sim}
# aria2c is the peer; where it is not installed (the device tool's host) its
# lines say so and the script era's peak disk, which needs it, is left out
have_aria=1
command -v aria2c > /dev/null || have_aria=
MB=${DL_BENCH_MB:-128} RATE=${DL_BENCH_RATE:-20m}
T=$(mktemp -d /tmp/dsv41-dl-bench.XXXXXX)
chmod 755 "$T"
cleanup() {
    [ -n "${hubpid:-}" ] && kill "$hubpid" 2>/dev/null
    [ -f "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid")" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
REPO=0xSero/DeepSeek-V4.1-Flash-Spark
C=$("$root/tests/hub/mkrepo.sh" "$T/hub" "$MB" 1)
REV=$T/hub/revs/$C
HP=$((30000 + RANDOM % 10000)) NP=$((40000 + RANDOM % 10000))
mkdir -p "$T/ngx"
cat > "$T/nginx.conf" <<EOF
user root;
pid $T/nginx.pid;
error_log $T/nginx.err;
worker_processes 2; # the "CDN" is not what is measured: one process on two shared cores is
# its own limit below the cap
events { worker_connections 1024; }
http {
    log_format c '\$connection \$status \$body_bytes_sent \$request_time';
    access_log $T/nginx.log c;
    client_body_temp_path $T/ngx; proxy_temp_path $T/ngx; fastcgi_temp_path $T/ngx;
    uwsgi_temp_path $T/ngx; scgi_temp_path $T/ngx;
    server { listen 127.0.0.1:$NP; root $T/hub/revs; location / { limit_rate $RATE; } }
}
EOF
nginx -c "$T/nginx.conf" -p "$T" || { echo "nginx would not start" >&2; exit 1; }
"$SIM" hub --root "$T/hub" --repo "$REPO" --port "$HP" --cdn "http://127.0.0.1:$NP" > "$T/hub.log" 2>&1 &
hubpid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$HP/_stats" && break; sleep 0.05; done
H=http://127.0.0.1:$HP

# every file of the revision through the hub's resolve URL (302 to nginx)
files=$(cd "$REV" && find . -type f | sed 's|^\./||' | sort)
bytes=$(cd "$REV" && du -cb $files | tail -1 | cut -f1)
for f in $files; do echo "$H/$REPO/resolve/$C/$f"; echo "  out=$f"; done > "$T/aria2.list"
conns() { awk '{print $1}' "$T/nginx.log" | sort -u | wc -l; }
# wall seconds and CPU seconds (user+sys of the command and its children) of a command
run_timed() { # outvar_wall outvar_cpu command...
    local __w=$1 __c=$2
    shift 2
    local t0 t1 c
    t0=$(date +%s.%N)
    c=$( { "$@" > "$T/run.log" 2>&1; times; } | tail -1 |
        awk '{gsub(/[ms]/, " "); split($0, a, " "); print a[1] * 60 + a[2] + a[3] * 60 + a[4]}')
    t1=$(date +%s.%N)
    printf -v "$__w" '%s' "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
    printf -v "$__c" '%s' "$c"
}
# the peak of the filesystem's used bytes (above the start) while a command runs
peak_of() { # outvar command...
    local __p=$1
    shift
    local base
    base=$(df -B1 --output=used "$T" | tail -1)
    ( while :; do df -B1 --output=used "$T" | tail -1; sleep 0.05; done ) > "$T/df.log" &
    local mon=$!
    "$@" > "$T/run.log" 2>&1
    kill $mon 2>/dev/null
    wait $mon 2>/dev/null
    printf -v "$__p" '%s' "$(sort -n "$T/df.log" | tail -1 | awk -v b="$base" '{print $1 - b}')"
}
gb() { awk -v b="$1" 'BEGIN {printf "%.2f", b / 1e9}'; }
mbs() { awk -v b="$bytes" -v t="$1" 'BEGIN {printf "%.0f", b / t / 1048576}'; }

echo "== download: $(gb "$bytes") GB in $(echo $files | wc -w) files, each connection capped at $RATE/s (nginx limit_rate)"
sync
: > "$T/nginx.log"
run_timed w_top c_top env HF_ENDPOINT="$H" HF_TOKEN= HF_TOKEN_PATH=/nonexistent HOME="$T" \
    "$TOP" download --dir "$T/top" --progress 0
n_top=$(conns)
cp "$T/nginx.log" "$T/nginx-top.log"
ok_top=$(cd "$T/top" && sha256sum -c --quiet sha256-manifest.txt > /dev/null 2>&1 && echo verified || echo FAILED)
rm -rf "$T/top"
sync
: > "$T/nginx.log"
if [ -n "$have_aria" ]; then
    run_timed w_aria c_aria aria2c -x16 -s16 --file-allocation=none --console-log-level=error \
        --summary-interval=0 -d "$T/aria" -i "$T/aria2.list"
    n_aria=$(conns)
    rm -rf "$T/aria"
fi
sync
: > "$T/nginx.log"
urls=()
for f in $files; do urls+=(-o "$T/curl/$f" "$H/$REPO/resolve/$C/$f"); done
mkdir -p "$T/curl"
run_timed w_curl c_curl curl -sfL --create-dirs "${urls[@]}"
n_curl=$(conns)
run_timed w_sum c_sum sh -c "cd '$T/curl' && find . -type f -print0 | xargs -0 sha256sum > /dev/null"
rm -rf "$T/curl"
# 16 plain readers beside it: 16 curls at once, each to /dev/null, the same bytes in all
# through the same nginx and its cap (on two cores shared with the reader nginx delivers
# each connection 16-19 MiB/s of its 20 under load: the cap is a ceiling no client reaches)
head -c $((bytes / 16)) /dev/urandom > "$T/hub/revs/plain.bin"
cat "$T/hub/revs/plain.bin" > /dev/null
run_timed w_plain c_plain sh -c "seq 16 | xargs -P 16 -I{} curl -sf --max-time 300 -o /dev/null \
    'http://127.0.0.1:$NP/plain.bin'"
rm -f "$T/hub/revs/plain.bin"
cap=$(( ${RATE%m} * 16 ))
printf '%-44s %6s MiB/s  %5.1f s  (the cap: %s MiB/s)\n' "16 curl readers at once, to /dev/null" \
    "$(mbs "$w_plain")" "$w_plain" "$cap"
printf '%-44s %6s MiB/s  %5.1f s  %3d connections opened  (%s)\n' "single curl (sequential, one connection)" \
    "$(mbs "$w_curl")" "$w_curl" "$n_curl" "no hashing"
if [ -n "$have_aria" ]; then
    printf '%-44s %6s MiB/s  %5.1f s  %3d connections opened  (%s)\n' "aria2c -x16 -s16" "$(mbs "$w_aria")" \
        "$w_aria" "$n_aria" "no hashing"
else
    printf '%-44s %6s\n' "aria2c -x16 -s16" "n/a (not installed here)"
fi
printf '%-44s %6s MiB/s  %5.1f s  %3d connections opened  (%s)\n' "dsv41-top download (16 connections)" \
    "$(mbs "$w_top")" "$w_top" "$n_top" "hashed, $ok_top"
r_aria=n/a s_aria=n/a
if [ -n "$have_aria" ]; then
    r_aria=$(awk -v a="$w_aria" -v b="$w_top" 'BEGIN {printf "%.2f", a / b}')
    s_aria=$(awk -v b="$bytes" -v t="$w_aria" -v c="$cap" 'BEGIN {printf "%.2f", b / t / 1048576 / c}')
fi
r_curl=$(awk -v a="$w_curl" -v b="$w_top" 'BEGIN {printf "%.2f", a / b}')
s_cap=$(awk -v b="$bytes" -v t="$w_top" -v c="$cap" 'BEGIN {printf "%.2f", b / t / 1048576 / c}')
printf '%-44s %s of the aggregate cap (goal >= 0.85: %s), %s of the 16 plain readers, aria2c %s\n' \
    "dsv41-top's share of the cap" "$s_cap" "$(awk -v r="$s_cap" 'BEGIN {print (r >= 0.85) ? "met" : "NOT met"}')" \
    "$(awk -v a="$w_plain" -v b="$w_top" 'BEGIN {printf "%.2f", a / b}')" \
    "$s_aria"
# what the server delivered: each range request of ours (>= 1 MiB) as nginx's log has it, its
# bytes over its time; under the load of the same cores it stays below its limit_rate
printf '%-44s %s MiB/s of the %s MiB/s limit_rate per connection\n' "  nginx's own rate per request (median)" \
    "$(awk '$2 == 206 && $3 >= 1048576 && $4 > 0 { print $3 / $4 / 1048576 }' "$T/nginx-top.log" | sort -n |
        awk '{ a[NR] = $1 } END { if (NR) printf "%.1f", a[int((NR + 1) / 2)]; else printf "n/a" }')" "${RATE%m}"
printf '%-44s %s x aria2c (goal >= 1.15: %s), %s x curl (goal >= 8: %s)\n' "dsv41-top's speed" \
    "$r_aria" "$([ "$r_aria" = n/a ] && echo n/a || awk -v r="$r_aria" 'BEGIN {print (r >= 1.15) ? "met" : "NOT met"}')" "$r_curl" \
    "$(awk -v r="$r_curl" 'BEGIN {print (r >= 8) ? "met" : "NOT met"}')"

echo "== download: CPU per GB fetched and hashed"
cpu_gb() { awk -v c="$1" -v b="$bytes" 'BEGIN {printf "%.2f", c / (b / 1e9)}'; }
printf '%-44s %6s CPU s/GB  (curl %s + sha256sum %s)\n' "curl, then sha256sum" \
    "$(cpu_gb "$(awk -v a="$c_curl" -v b="$c_sum" 'BEGIN {print a + b}')")" "$(cpu_gb "$c_curl")" \
    "$(cpu_gb "$c_sum")"
printf '%-44s %6s CPU s/GB\n' "aria2c (no hashing)" "$([ -n "$have_aria" ] && cpu_gb "$c_aria" || echo n/a)"
printf '%-44s %6s CPU s/GB  goal <= 3: %s\n' "dsv41-top download (hashed as it lands)" "$(cpu_gb "$c_top")" \
    "$(awk -v c="$(cpu_gb "$c_top")" 'BEGIN {print (c <= 3) ? "met" : "NOT met"}')"

[ -n "$have_aria" ] || exit 0 # the script era's peak needs it
echo "== download: peak disk, the same checkpoint"
sync
peak_of p_top env HF_ENDPOINT="$H" HF_TOKEN= HF_TOKEN_PATH=/nonexistent HOME="$T" \
    "$TOP" download --dir "$T/top" --progress 0
rm -rf "$T/top"
sync
# the script era: the parts as the hub has them, then reassemble.sh's cat
# (parts deleted only once both shards are checked)
script_era() {
    aria2c -x16 -s16 --file-allocation=none --console-log-level=error --summary-interval=0 \
        -d "$T/se" -i "$T/aria2.list" || return 1
    cd "$T/se" || return 1
    for s in $(ls ./*.part[0-9]* | sed 's/\.part[0-9]*$//' | sort -u); do cat "$s".part* > "$s"; done
    sync
}
peak_of p_se script_era
rm -rf "$T/se"
final=$(( bytes - $(cd "$REV" && du -cb ./*.part[0-9]* | tail -1 | cut -f1) +
    $(cd "$REV" && du -cb ./*.part[0-9]* | tail -1 | cut -f1) ))
printf '%-44s %6s GB   (the checkpoint: %s GB)\n' "script era: parts + rebuilt shards" "$(gb "$p_se")" "$(gb "$final")"
printf '%-44s %6s GB   goal = the checkpoint: %s\n' "dsv41-top download (shards written in place)" \
    "$(gb "$p_top")" "$(awk -v p="$p_top" -v f="$final" 'BEGIN {print (p <= f * 1.02) ? "met" : "NOT met"}')"
