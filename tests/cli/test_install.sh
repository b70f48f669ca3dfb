#!/bin/bash
# make install into a DESTDIR as a packager runs it, then what an operator
# finds there: the binary's --help and --version, the man page through man,
# the bash and zsh completions loaded by the shells, the systemd units
# checked by systemd-analyze; then make uninstall leaves nothing behind.
# (CI runs this in a fresh clone, so a file the install needs but git does
# not hold fails here.)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
T=$(mktemp -d /tmp/dsv41-install-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
P=/usr/local
D=$T/dest
cd "$root" || exit 2

out=$(env -u MAKEFLAGS -u MAKELEVEL make -s install DESTDIR="$D" PREFIX=$P 2>&1)
check "make install DESTDIR: exit 0" test $? = 0 || echo "$out" | tail -20
for f in bin/dsv41-top bin/dsv41-guard bin/dsv41-verify bin/dsv41-xfer \
         share/man/man1/dsv41-top.1 share/bash-completion/completions/dsv41-top \
         share/zsh/site-functions/_dsv41-top share/dsv41-top/pi/install.sh \
         share/dsv41-top/themes/light.theme share/dsv41-top/systemd/dsv41-guard.service; do
    check "installed: $f" test -e "$D$P/$f"
done
bin=$D$P/bin/dsv41-top
check "the installed binary's modes: 0755" test "$(stat -c %a "$bin")" = 755
out=$("$bin" --help 2>&1)
check "installed: --help lists the commands" grep -q '^  copy-to-peer' <<< "$out"
ver=$("$bin" --version)
rev=$(git describe --always --dirty --abbrev=12 2>/dev/null)
check "installed: --version names the version and the revision ($ver)" \
    grep -qx "dsv41-top [0-9.]* ($rev)" <<< "$ver"
text=$(MANWIDTH=80 man -l "$D$P/share/man/man1/dsv41-top.1" 2>&1 | col -b)
check "man -l: the page renders, with launch's options" grep -q -- '--dry-run' <<< "$text"
check "man -l: the settings" grep -q 'MEMGUARD_GIB' <<< "$text"
got=$(bash -c '. "$1" && complete -p dsv41-top' _ "$D$P/share/bash-completion/completions/dsv41-top" 2>&1)
check "bash: complete -p dsv41-top" grep -q 'complete -F _dsv41_top dsv41-top' <<< "$got"
got=$(zsh -fc 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2/zcd"; print -r -- ${_comps[dsv41-top]}' \
      _ "$D$P/share/zsh/site-functions" "$T" 2>&1)
check "zsh: compinit binds _dsv41-top" test "$got" = _dsv41-top
# the units are templates (launch --install-units fills them in per node):
# filled in as it would be for an operator, systemd accepts them
units=$(ls "$D$P/share/dsv41-top/systemd/"*.service 2>/dev/null)
check "unit templates installed ($(echo $units | wc -w))" test -n "$units"
check "units: ExecStart names @BINDIR@/dsv41-top" grep -q '^ExecStart=@BINDIR@/dsv41-top ' $units
mkdir -p "$D/etc/systemd/system" "$D/var/lib/op"
for u in $units; do
    sed -e "s|@BINDIR@|$D$P/bin|g" -e 's|@USER@|root|g' -e 's|@CONFIG@|/etc/dsv41-top.conf|g' \
        -e 's|@STATE_DIR@|/var/lib/op|g' "$u" > "$D/etc/systemd/system/$(basename "$u")"
done
left=$(grep -l '@[A-Z_]*@' "$D"/etc/systemd/system/*.service)
check "units: every placeholder is one the installer knows ($left)" test -z "$left"
# (the binary named by its place in DESTDIR: systemd-analyze checks that it is there)
out=$(systemd-analyze verify "$D"/etc/systemd/system/*.service 2>&1)
rc=$?
check "systemd-analyze verify: the filled-in units are valid (rc $rc)" eval '[ $rc = 0 ] && [ -z "$out" ]' ||
    printf "%s\n" "$out" | sed "s/^/    | /"
rm -rf "$D/etc" "$D/var"
# the installed binary finds its themes and Pi files beside it (../share)
out=$(env HOME=$T "$bin" pi 2>&1)
check "installed: pi names the installed Pi files" grep -q "$D$P/share/dsv41-top/pi" <<< "$out"

out=$(env -u MAKEFLAGS -u MAKELEVEL make -s uninstall DESTDIR="$D" PREFIX=$P 2>&1)
check "make uninstall: exit 0" test $? = 0 || echo "$out"
left=$(find "$D" -type f | sed "s|^$D||")
check "make uninstall: no file left ($(echo $left))" test -z "$left"
left=$(find "$D$P" -name '*dsv41*' 2>/dev/null)
check "make uninstall: our folders gone" test -z "$left"
# a DESTDIR with a blank in it, as a packager's may have: one path, nothing astray
S="$T/pack dir"
out=$(env -u MAKEFLAGS -u MAKELEVEL make -s install DESTDIR="$S" PREFIX=$P 2>&1); rc=$?
check "make install DESTDIR='$S': exit 0, every file under it, nothing beside it" eval \
    '[ $rc = 0 ] && [ -x "$S$P/bin/dsv41-top" ] && [ -e "$S$P/share/man/man8/dsv41-guard.8" ] && [ ! -e "$T/pack" ]' ||
    printf '%s\n' "$out" | tail -5
out=$(env -u MAKEFLAGS -u MAKELEVEL make -s uninstall DESTDIR="$S" PREFIX=$P 2>&1); rc=$?
check "make uninstall DESTDIR='$S': nothing of it left" eval '[ $rc = 0 ] && [ -z "$(find "$S" -type f)" ]'
summary
