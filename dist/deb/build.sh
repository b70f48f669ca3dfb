#!/bin/bash
# dist/deb/build.sh ARCH BUILD VERSION STRIP: packs BUILD/root (what
# `make install DESTDIR=BUILD/root PREFIX=/usr` put there) into
# BUILD/dsv41-top_VERSION_ARCH.deb, as Debian's policy wants a binary
# package: binaries stripped (STRIP, the target's strip), man pages and the
# changelog compressed (gzip -9n), the copyright, lintian's overrides each
# with its reason, md5sums, Depends from dpkg-shlibdeps (the shared
# libraries the binaries link: the runtime packages only), owned by root.
# `make deb` runs it.
set -euo pipefail
arch=$1 build=$2 version=$3 strip=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$build/root
out=$build/dsv41-top_${version}_$arch.deb
[ -x "$root/usr/bin/dsv41-top" ] || { echo "dist/deb/build.sh: $root has no usr/bin/dsv41-top (make deb runs make install first)" >&2; exit 2; }

# the binaries, stripped of what a package does not ship (debug info, notes)
for b in "$root"/usr/bin/*; do
    "$strip" --strip-unneeded --remove-section=.comment --remove-section=.note "$b"
done
# man pages compressed, reproducibly
find "$root/usr/share/man" -type f ! -name '*.gz' -exec gzip -9nf {} +
doc=$root/usr/share/doc/dsv41-top
install -d -m 0755 "$doc" "$root/usr/share/lintian/overrides"
install -m 0644 "$here/copyright" "$doc/copyright"
install -m 0644 "$here/lintian-overrides" "$root/usr/share/lintian/overrides/dsv41-top"
# the changelog of a native package: this version, from the source's last commit date
date=$(cd "$here/../.." && git log -1 --format=%cD 2>/dev/null || date -R)
rev=$(cd "$here/../.." && git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
printf 'dsv41-top (%s) unstable; urgency=medium\n\n  * Built from revision %s.\n\n -- %s  %s\n' \
    "$version" "$rev" "$(sed -n 's/^Maintainer: //p' "$here/control.in")" "$date" |
    gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

# Depends: what dpkg-shlibdeps finds the binaries need (it wants a
# debian/control beside it; nothing of it is read for a plain -O)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
printf 'Source: dsv41-top\n\nPackage: dsv41-top\nArchitecture: %s\n' "$arch" > "$work/debian/control"
bins=("$(cd "$root" && pwd)"/usr/bin/*) # absolute: dpkg-shlibdeps runs in $work
depends=$(cd "$work" && dpkg-shlibdeps -O "${bins[@]}" 2>"$work/shlibdeps.err" | sed -n 's/^shlibs:Depends=//p') || true
if [ -z "$depends" ]; then
    echo "dist/deb/build.sh: dpkg-shlibdeps found no dependencies:" >&2
    cat "$work/shlibdeps.err" >&2
    exit 1
fi

install -d -m 0755 "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
    -e "s/@SIZE@/$size/" "$here/control.in" > "$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
    xargs -0 md5sum > DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" > /dev/null
echo "$out"
