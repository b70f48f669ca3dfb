#!/bin/bash
# Packs what the download and verify benches need on the device tool's host
# (a GPU machine with no -dev packages, no nginx, and another distribution)
# into .dev/bundle.tar.xz (git-ignored through .git/info/exclude; `carry` it):
# dsv41-top, dsv41-sim, nginx, curl and openssl with every library they load
# and this machine's own dynamic loader, each started through that loader by
# a wrapper in bundle/bin, so that the host's libc does not matter; and the
# static dsv41-verify. On the host:
#   tar -xJf .dev/bundle.tar.xz -C /tmp && PATH=/tmp/bundle/bin:$PATH \
#   DSV41_BIN=/tmp/bundle/bin/dsv41-top DSV41_SIM_BIN=/tmp/bundle/bin/dsv41-sim \
#   bash tests/bench/download.sh
#   DSV41_VERIFY=/tmp/bundle/real/dsv41-verify bash tests/bench/device_verify.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
b=$(mktemp -d /tmp/dsv41-bundle.XXXXXX)
trap 'rm -rf "$b"' EXIT
mkdir -p "$b/bundle/lib" "$b/bundle/real" "$b/bundle/bin" .dev
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo /.dev/ >> .git/info/exclude
for p in build/dsv41-top build/dsv41-sim "$(command -v nginx)" "$(command -v curl)" "$(command -v openssl)"; do
    cp -L "$p" "$b/bundle/real/"
    ldd "$p" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }' | xargs -I{} cp -Ln {} "$b/bundle/lib/"
    n=$(basename "$p")
    printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")/..\nexec "$d/lib/ld-linux-x86-64.so.2" --library-path "$d/lib" "$d/real/%s" "$@"\n' \
        "$n" > "$b/bundle/bin/$n"
    chmod +x "$b/bundle/bin/$n"
done
cp build/dsv41-verify "$b/bundle/real/"
tar -C "$b" -cJf .dev/bundle.tar.xz bundle
echo ".dev/bundle.tar.xz: $(du -h .dev/bundle.tar.xz | cut -f1)"
