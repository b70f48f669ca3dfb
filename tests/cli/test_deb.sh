#!/bin/bash
# make deb as an operator of DGX OS runs it: the package built (Debian's
# hardening flags), lintian clean at every level but its argued overrides,
# its Depends the runtime libraries only; then installed, used and removed
# with the real dpkg, in a podman container whose root is this machine's own
# (copy-on write: the dpkg database, the libraries the Depends name), so the
# machine itself is never touched. dpkg -r must leave nothing of it.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
T=$(mktemp -d /tmp/dsv41-deb-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$root" || exit 1

# the operator's path installs nothing of the tests: make deps names the
# compiler, pkg-config and the -dev packages of the libraries, nothing else
pkgs=$(env -u MAKEFLAGS -u MAKELEVEL make -n --no-print-directory deps | grep -o 'for p in [^;]*;' | sed 's/for p in //; s/;$//')
echo "    make deps: $pkgs"
build_pkgs_only() {
    [ -n "$pkgs" ] || return 1
    for p in $pkgs; do
        case $p in build-essential | pkg-config | *-dev) ;; *) echo "    not a build package: $p"; return 1 ;; esac
    done
    ! grep -Eq "cmocka|fuse" <<< "$pkgs"
}
check "make deps: the build's packages only (no podman, nginx, sshd, node, clang, valgrind, cmocka)" build_pkgs_only

out=$(env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory deb 2>&1); rc=$?
deb=$(printf '%s\n' "$out" | grep '\.deb$' | tail -1)
check "make deb: exit 0, the package named" eval '[ $rc = 0 ] && [ -f "$deb" ]'
[ -f "$deb" ] || { printf '%s\n' "$out" | tail -20; summary; exit 1; }
cp "$deb" "$T/"
deb=$T/$(basename "$deb")
info=$(dpkg-deb -f "$deb" Package Version Architecture Depends)
printf '%s\n' "$info" | sed 's/^/    /'
check "control: dsv41-top, the Makefile's version, this machine's architecture" eval \
    'grep -qx "Package: dsv41-top" <<< "$info" && grep -qx "Version: $(sed -n "s/^VERSION := //p" Makefile)" <<< "$info" &&
     grep -qx "Architecture: $(dpkg --print-architecture)" <<< "$info"'
depends=$(dpkg-deb -f "$deb" Depends)
runtime_libs() {
    for l in libc6 libssh2-1 libcurl4 libncursesw6 libibverbs1 libssl3 libcjson1 libmicrohttpd12; do
        grep -q "\b$l\b" <<< "$depends" || { echo "    no $l"; return 1; }
    done
}
# (libmicrohttpd is the exporter's: a runtime library since #31, no test's alone)
check "Depends: the runtime libraries (libc6, libssh2-1, libcurl4, libncursesw6, libibverbs1, libssl3, libcjson1, libmicrohttpd12)" runtime_libs
check "Depends: nothing of the tests or the build (no -dev, podman, nginx, node, cmocka, prometheus)" eval \
    '! grep -Eq -- "-dev\b|podman|nginx|node|cmocka|prometheus|clang|valgrind" <<< "$depends"'
files=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
all_files() {
    for f in /usr/bin/dsv41-top /usr/bin/dsv41-guard /usr/bin/dsv41-verify /usr/bin/dsv41-xfer \
              /usr/share/man/man1/dsv41-top.1.gz /usr/share/man/man8/dsv41-guard.8.gz \
              /usr/share/man/man1/dsv41-verify.1.gz /usr/share/man/man1/dsv41-xfer.1.gz \
              /usr/share/bash-completion/completions/dsv41-top /usr/share/zsh/vendor-completions/_dsv41-top \
              /usr/share/dsv41-top/systemd/dsv41-guard.service /usr/share/dsv41-top/pi/install.sh \
              /usr/share/dsv41-top/pi/pi-check.mjs /usr/share/dsv41-top/themes/dark.theme \
              /usr/share/doc/dsv41-top/copyright; do
        grep -qx "$f" <<< "$files" || { echo "    missing $f"; return 1; }
    done
}
check "the package: the four programs, four man pages, completions, units, Pi files, themes" all_files
check "the package: nothing of the tests (no simulator, no test programs)" eval '! grep -Eq "sim|/tests/" <<< "$files"'

# lintian at every level; an override is fine only with its reason beside it
lint=$(lintian -I --pedantic --show-overrides "$deb" 2>&1 | grep -v 'running with root privileges'); lrc=$?
printf '%s\n' "$lint" | grep -v '^N:' | sed 's/^/    /'
check "lintian: no error, warning, info or pedantic tag" eval '! grep -Eq "^[EWIP]:" <<< "$lint"'
check "lintian: each override says why (a comment above it)" eval \
    'awk "/^#/ { why = 1; next } /^[a-z]/ { if (!why) exit 1; next } { why = 0 }" dist/deb/lintian-overrides'
check "lintian: the overrides are used (O: lines), so none is stale" eval \
    '[ "$(grep -c "^O:" <<< "$lint")" -eq "$(grep -c "^dsv41-top:" dist/deb/lintian-overrides)" ]'

# installed, used and removed by the real dpkg on this machine's root, copy-on-write
script='set -u
fail() { echo "FAIL: $*"; exit 1; }
[ ! -e /usr/bin/dsv41-top ] || fail "dsv41-top is installed here already"
dpkg -i /pkg/*.deb > /tmp/dpkg-i.log 2>&1 || { cat /tmp/dpkg-i.log; fail "dpkg -i"; }
echo "installed: $(dpkg-query -W -f="\${Package} \${Version} \${Status}" dsv41-top)"
echo "version: $(dsv41-top --version)"
dsv41-guard --help > /dev/null || fail "dsv41-guard --help"
dsv41-verify --help > /dev/null || fail "dsv41-verify --help"
dsv41-xfer --help > /dev/null || fail "dsv41-xfer --help"
echo "man: $(man -w dsv41-top) $(man -w 8 dsv41-guard)"
man -P cat dsv41-guard 2>/dev/null | grep -q "EXIT STATUS" || fail "man dsv41-guard has no EXIT STATUS"
echo "pi: $(dsv41-top pi --url http://h:8000 | grep -o "scp -r [^ ]*")"
dpkg -L dsv41-top | sort > /tmp/listed
dpkg -r dsv41-top > /tmp/dpkg-r.log 2>&1 || { cat /tmp/dpkg-r.log; fail "dpkg -r"; }
echo "after dpkg -r: $(dpkg-query -W -f="\${Status}" dsv41-top 2>&1)"
left=$(while read -r f; do case $f in /usr|/usr/bin|/usr/share|/usr/share/man|/usr/share/man/man?|/usr/share/doc|/usr/share/lintian|/usr/share/lintian/overrides|/usr/share/bash-completion|/usr/share/bash-completion/completions|/usr/share/zsh|/usr/share/zsh/vendor-completions|/.) continue ;; esac; [ -e "$f" ] && echo "$f"; done < /tmp/listed)
[ -z "$left" ] || fail "left after dpkg -r: $left"
echo "removed: nothing left of $(wc -l < /tmp/listed) paths"'
got=$(timeout 300 podman run --rm --net=none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
      -v "$T:/pkg:ro" --rootfs /:O /bin/bash -c "$script" 2>&1); rc=$?
printf '%s\n' "$got" | sed 's/^/    /'
check "dpkg -i: installed, its Depends met by Debian 12's packages" eval '[ $rc = 0 ] && contains "$got" "install ok installed"'
check "installed: dsv41-top --version, the helpers' --help, man dsv41-top and dsv41-guard(8)" eval \
    'contains "$got" "version: dsv41-top $(sed -n "s/^VERSION := //p" Makefile)" && contains "$got" "/usr/share/man/man8/dsv41-guard.8.gz"'
check "installed: dsv41-top pi finds the Pi files in /usr/share/dsv41-top/pi" contains "$got" "scp -r h:/usr/share/dsv41-top/pi"
check "dpkg -r: nothing of it left, dpkg knows it no more" eval \
    '[ $rc = 0 ] && contains "$got" "removed: nothing left" && grep -Eq "after dpkg -r: (dpkg-query: no packages|unknown ok not-installed|deinstall ok config-files)" <<< "$got"'
check "this machine untouched (no /usr/bin/dsv41-top here)" eval '[ ! -e /usr/bin/dsv41-top ] || dpkg -S /usr/bin/dsv41-top >/dev/null 2>&1'
summary
