#!/bin/bash
# Node 22 and the real Pi from npm into tests/pi/node_modules, once: the
# install is kept while package-lock.json stays the same. Prints the bin
# directory to put first on PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
stamp=$here/node_modules/.dsv41-lock.sha256
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ ! -x "$here/node_modules/.bin/pi" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$want" > "$stamp"
fi
echo "$here/node_modules/.bin"
