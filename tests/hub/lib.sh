# Shared by tests/hub/*.sh: a synthetic revision in a hub root, dsv41-sim's
# hub and nginx on loopback, the download as the tests run it. Sourced after
# `root` is set; TMPL names the temporary directory. Everything started is
# killed by cleanup on exit.
set -u
. "$root/tests/it/lib.sh"
SIM=${DSV41_SIM:-$root/build/dsv41-sim}
TOP=${DSV41_BIN:-$root/build/dsv41-top}
T=$(mktemp -d "/tmp/${TMPL:-dsv41-dl}.XXXXXX")
chmod 755 "$T"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    [ -f "$T/nginx.pid" ] && kill "$(cat "$T/nginx.pid")" 2>/dev/null
    mountpoint -q "$T/small" && umount "$T/small"
    rm -rf "$T"
}
trap cleanup EXIT
REPO=0xSero/DeepSeek-V4.1-Flash-Spark
HUB=$T/hub
C1=$("$root/tests/hub/mkrepo.sh" "$HUB" 32 1)
REV=$HUB/revs/$C1
. "$root/tests/hub/expect_dir.sh"
lfs_bytes() { (cd "$REV" && find . -name '*.safetensors*' -printf '%s\n' | awk '{s+=$1} END {print s}'); }

HP=$(test_ports)
start_hub() { # extra args...; DSV41_HUB_FAULTS from the environment
    stop_hub
    "$SIM" hub --root "$HUB" --repo "$REPO" --port "$HP" "$@" > "$T/hub.log" 2>&1 &
    HUBPID=$!
    PIDS+=("$HUBPID")
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$HP/_stats" && return 0; sleep 0.05; done
    cat "$T/hub.log" >&2
    return 1
}
stop_hub() {
    [ -n "${HUBPID:-}" ] || return 0
    kill "$HUBPID" 2>/dev/null
    wait "$HUBPID" 2>/dev/null
    HUBPID=
}
stat_of() { curl -s "http://127.0.0.1:$HP/_stats" | jq -r ".$1"; }
NP=$((HP + 1))
start_nginx() { # limit_rate
    cat > "$T/nginx.conf" <<EOF
user root;
pid $T/nginx.pid;
error_log $T/nginx.err;
events { worker_connections 512; }
http {
    log_format bytes '\$request_uri \$status \$body_bytes_sent "\$http_authorization"';
    access_log $T/nginx.log bytes;
    client_body_temp_path $T/nginx-tmp;
    proxy_temp_path $T/nginx-tmp;
    fastcgi_temp_path $T/nginx-tmp;
    uwsgi_temp_path $T/nginx-tmp;
    scgi_temp_path $T/nginx-tmp;
    server {
        listen 127.0.0.1:$NP;
        root $HUB/revs;
        location / { limit_rate ${1:-0}; }
    }
}
EOF
    mkdir -p "$T/nginx-tmp"
    nginx -c "$T/nginx.conf" -p "$T" || return 1
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$NP/" && return 0; sleep 0.05; done
    return 1
}
nginx_bytes() { awk '$2 == 206 || $2 == 200 {s+=$3} END {print s+0}' "$T/nginx.log"; }
DL() { # dir args...
    local d=$1
    shift
    env HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN= HF_TOKEN_PATH=/nonexistent HOME="$T" \
        "$TOP" download --dir "$d" "$@"
}
# Waits (10 s at most) until the download of pid says, in its log, that the
# transfers start: it takes Ctrl-C from there (interrupt_catch comes before
# that line). Before it (the hub's listing) a SIGINT ends it as by default,
# which says nothing about how the program handles it; the handler being
# installed (SigCgt, from main() on) is not enough: under TSan in a loaded CI
# the listing outlasted the caller's sleep (exit 130).
transferring() { # pid log
    for _ in $(seq 200); do
        grep -q "^download: .* connections$" "$2" 2>/dev/null && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# In the background, as the process itself: $! is dsv41-top's own PID.
DL_BG() { # log dir args...
    local log=$1 d=$2
    shift 2
    (exec env HF_ENDPOINT="http://127.0.0.1:$HP" HF_TOKEN= HF_TOKEN_PATH=/nonexistent \
        HOME="$T" "$TOP" download --dir "$d" "$@" > "$log" 2>&1) &
}

