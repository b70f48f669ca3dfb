#!/bin/bash
# pi/install.sh BASE_URL: connects the Pi coding agent to the DeepSeek-V4.1-Flash
# deployment (dsv41-top). Installs Pi with npm when `pi` is not on PATH, then
# adds or replaces only the dsv41-sparks provider in Pi's models.json, appends
# the model to settings.json's enabledModels when that list is in use
# (SET_DEFAULT=1: the startup model too) and installs the dsv41-sparks.ts
# extension. The edits are pi-config.mjs's, run with node (Pi's runtime).
#
#   pi/install.sh http://spark-head:8000/v1
#   export DSV41_API_KEY="$(ssh spark-head 'cat ~/.dsv41-two-sparks/api_key')"
#   pi --model dsv41-sparks/deepseek-v4.1-flash
#
# pi/install.sh --check [--timeout SEC]: where Pi runs, with node alone (no
# dsv41-top needed): Pi on PATH, the provider, the extension, the key in the
# environment, the endpoint, one request sent as Pi sends it; PASS/FAIL each
# (pi-check.mjs). Exit 0 all passed, 1 one failed, 2 usage.
#
# Environment: PI_CODING_AGENT_DIR (default ~/.pi/agent), KEY_ENV (the
# variable Pi reads the key from, default DSV41_API_KEY; the key itself is
# never written), SET_DEFAULT=1, PI_PACKAGE (default
# @earendil-works/pi-coding-agent).
set -u
here=$(cd "$(dirname "$0")" && pwd)
PKG=${PI_PACKAGE:-@earendil-works/pi-coding-agent}
NEED_NODE=22.19.0 # what Pi 1.x needs
die() { echo "pi/install.sh: $*" >&2; exit 2; }

# version a >= version b (x.y.z)
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

case ${1:-} in
    -h | --help)
        sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    --check)
        shift
        command -v node > /dev/null 2>&1 || die "node is not installed: Pi needs Node.js >= $NEED_NODE"
        nv=$(node --version 2> /dev/null | sed 's/^v//')
        # fetch, and redirects that never carry the key to another host
        version_ge "${nv:-0}" "18.17.0" || die "node $nv is too old for the check (>= 18.17; Pi itself needs >= $NEED_NODE)"
        exec node "$here/pi-check.mjs" "$@"
        ;;
    "") die "give the head's API URL, e.g.: pi/install.sh http://spark-head:8000/v1" ;;
esac


if ! command -v node > /dev/null 2>&1; then
    die "node is not installed: Pi needs Node.js >= $NEED_NODE (https://nodejs.org, or your package manager's nodejs 22)"
fi
nv=$(node --version 2> /dev/null | sed 's/^v//')
if ! command -v pi > /dev/null 2>&1; then
    version_ge "${nv:-0}" "$NEED_NODE" ||
        die "node $nv is too old for Pi 1.x, which needs >= $NEED_NODE: install a newer Node.js first (nothing was changed)"
    command -v npm > /dev/null 2>&1 || die "npm is not installed: it comes with Node.js >= $NEED_NODE"
    echo "installing Pi: npm install -g $PKG"
    npm install -g "$PKG" || die "npm could not install $PKG (see above); nothing else was changed"
    command -v pi > /dev/null 2>&1 || die "npm installed $PKG but 'pi' is not on PATH: add $(npm prefix -g)/bin to PATH"
fi
version_ge "${nv:-0}" "18.0.0" || die "node $nv is too old to edit Pi's configuration (>= 18 needed)"
exec node "$here/pi-config.mjs" "$1"
