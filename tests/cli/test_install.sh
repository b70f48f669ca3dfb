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
         share/dsv41-top/themes/light.theme lib/systemd/system/dsv41-guard.service; do
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
# the units name the installed binary, and systemd accepts them
units=$(ls "$D$P/lib/systemd/system/"*.service 2>/dev/null)
check "units installed" test -n "$units"
check "units: @BINDIR@ replaced by $P/bin" bash -c '! grep -l @BINDIR@ "$@"' _ $units
check "units: ExecStart is the installed binary" grep -q "^ExecStart=$P/bin/dsv41-top " $units
# systemd-analyze looks the ExecStart binary up on this machine's root: it is given a
# root that holds the installed tree
out=$(systemd-analyze verify --root="$D" $(sed "s|^$D||" <<< "$units") 2>&1)
rc=$?
check "systemd-analyze verify: the units are valid (rc $rc)" test $rc = 0 || echo "$out"
# the installed binary finds its themes and Pi files beside it (../share)
out=$(env HOME=$T "$bin" pi 2>&1)
check "installed: pi names the installed Pi files" grep -q "$D$P/share/dsv41-top/pi" <<< "$out"

out=$(env -u MAKEFLAGS -u MAKELEVEL make -s uninstall DESTDIR="$D" PREFIX=$P 2>&1)
check "make uninstall: exit 0" test $? = 0 || echo "$out"
left=$(find "$D" -type f | sed "s|^$D||")
check "make uninstall: no file left ($(echo $left))" test -z "$left"
left=$(find "$D$P" -name '*dsv41*' 2>/dev/null)
check "make uninstall: our folders gone" test -z "$left"
summary
