#!/bin/bash
# The hub's own JS client (@huggingface/hub, npm) against dsv41-sim's hub on
# loopback: the simulator speaks the protocol the download is written to.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
TMPL=dsv41-hubclient
. "$root/tests/hub/lib.sh"
if (cd "$root/tests/hub" && npm ci --no-audit --no-fund --loglevel=error > "$T/npm.log" 2>&1); then
    start_hub --page 5
    out=$(cd "$root/tests/hub" && node client.mjs "http://127.0.0.1:$HP" "$REPO" "$REV" 2>&1); rc=$?
    printf '%s\n' "$out"
    check "@huggingface/hub lists and downloads from the simulator (our CDN)" [ $rc -eq 0 ]
else
    cat "$T/npm.log"
    not_ok "npm ci: @huggingface/hub could not be installed"
fi
summary
