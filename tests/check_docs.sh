#!/bin/bash
# The words and the code cannot drift: the commands, keys and settings tables
# (README.md, docs/tui.md, docs/config.md) are what the program prints
# (dsv41-top docs ...); every message and page that names a "dsv41-top
# COMMAND --option" names one that exists; every
# option a command's parser compares is in its documentation and every
# documented option in its parser; every command answers --help from its
# table; the man page renders without warnings; the bash and zsh completions
# load. --fix rewrites the tables instead of failing on them.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
fix=0
[ "${1:-}" = --fix ] && { fix=1; shift; }
bin=${1:-$root/build/dsv41-top}
cd "$root" || exit 2
fail=0
ok() { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }
docs() { env -i PATH=/usr/bin:/bin HOME=/nonexistent DSV41_CONFIG=/dev/null "$bin" docs "$1"; }

# ---- the generated sections, each in the page an operator looks for it in
declare -A SEC_FILE=([commands]=README.md [keys]=docs/tui.md [settings]=docs/config.md
                     [exits]=docs/operating.md [files]=docs/operating.md
                     [environment]=docs/config.md [install]=README.md [options]=docs/tui.md
                     [testmap]=docs/testmap.md)
for sec in commands keys settings exits files environment install options testmap; do
    page=${SEC_FILE[$sec]}
    if [ $sec = install ]; then # from the Makefile's own lists
        want=$(env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory -C "$root" install-table)
    elif [ $sec = testmap ]; then # from the includes and the test scripts
        want=$(bash tests/test_map.sh)
    else
        want=$(docs "$sec")
    fi
    have=$(sed -n "/<!-- $sec:begin -->/,/<!-- $sec:end -->/p" "$page" | sed '1d;$d')
    if ! grep -q "<!-- $sec:begin -->" "$page"; then
        bad "$page has no <!-- $sec:begin --> section"
    elif [ "$want" = "$have" ]; then
        ok "$page's $sec section is what the program or the Makefile prints"
    elif [ $fix = 1 ]; then
        tmp=$(mktemp)
        printf '%s\n' "$want" > "$tmp.body"
        awk -v sec="$sec" -v body="$tmp.body" '
            $0 == "<!-- " sec ":begin -->" { print; while ((getline l < body) > 0) print l; skip = 1; next }
            $0 == "<!-- " sec ":end -->" { skip = 0 }
            !skip { print }' "$page" > "$tmp" && mv "$tmp" "$page"
        rm -f "$tmp.body"
        ok "$page's $sec section rewritten"
    else
        bad "$page's $sec section differs from what the program or the Makefile prints (make readme rewrites it):"
        diff <(printf '%s\n' "$have") <(printf '%s\n' "$want") | head -20
    fi
done

# ---- parsers against the documentation, per source file
# the commands whose parsers live in each file
declare -A FILE_CMDS=(
    [src/cmd/deploy_cmd.c]="launch stop restart logs" [src/cmd/serve_cmd.c]="smoke bench gates"
    [src/cmd/guard_cmd.c]=guard [src/cmd/verify_cmd.c]=verify [src/cmd/download_cmd.c]=download
    [src/cmd/assemble_cmd.c]=assemble [src/cmd/peer_cmd.c]=copy-to-peer [src/cmd/pi_cmd.c]=pi
    [src/cmd/watch_cmd.c]=watch [src/cmd/exporter_cmd.c]=exporter [src/cmd/incidents_cmd.c]=incidents [src/cmd/doctor.c]=doctor
    [src/cmd/config_cmd.c]=config [src/cmd/status_cmd.c]=status [tui/console.c]=console
    [src/cmd/key_cmd.c]=key
    [src/main.c]=main
    [src/guard/guardctl.c]=dsv41-guard [src/verify/verifyd.c]=dsv41-verify
    [src/transfer/xferd.c]=dsv41-xfer
)
flags=$(docs flags)
[ -n "$flags" ] || bad "'dsv41-top docs flags' printed nothing"
for f in "${!FILE_CMDS[@]}"; do
    documented=$(for c in ${FILE_CMDS[$f]}; do awk -v c="$c" '$1 == c { print $2 }' <<< "$flags"; done | sort -u)
    # what the parser compares: strcmp(x, "--flag") and getopt's {"flag", ...}
    parsed=$( { grep -o 'strcmp([^,]*, "-[-a-z]*")' "$f" | grep -o '"-[-a-z]*"' | tr -d '"'
                grep -o '{"[a-z][-a-z]*", *\(no\|required\|optional\)_argument' "$f" |
                    sed 's/{"\([^"]*\)".*/--\1/'; } | sort -u)
    for p in $parsed; do
        case $p in --help | -h | -) continue ;; esac
        grep -qx -- "$p" <<< "$documented" || bad "$f parses $p, which ${FILE_CMDS[$f]}'s documentation does not name"
    done
    for d in $documented; do
        case $d in --help | -h) continue ;; esac
        # a short alias is parsed through its long name (getopt) or itself
        grep -q -- "\"$d\"\|{\"${d#--}\"\|'${d#-}'" "$f" ||
            bad "${FILE_CMDS[$f]}'s documentation names $d, which $f does not parse"
    done
done
[ $fail = 0 ] && ok "every parser's options are documented, every documented option parsed"
# docs/cmd.md's table of where each command is: the files whose parsers were just checked
for f in "${!FILE_CMDS[@]}"; do
    for c in ${FILE_CMDS[$f]}; do
        case $c in main | console | dsv41-*) continue ;; esac
        grep -q "^| .*\`$c\`.* | \`$f\`" docs/cmd.md || bad "docs/cmd.md does not say $c is in $f"
    done
done

# ---- --help of every command, from its table, with no configuration at all
n=0
for c in $(awk '$1 != "main" && $1 != "console" && $1 !~ /^dsv41-/ { print $1 }' <<< "$flags" | sort -u) \
         $(env -i PATH=/usr/bin:/bin "$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
    out=$(env -i PATH=/usr/bin:/bin HOME=/nonexistent DSV41_CONFIG=/nonexistent/x "$bin" "$c" --help 2>&1)
    rc=$?
    first=$(head -1 <<< "$out")
    if [ $rc != 0 ] || [ "$first" = "${first#usage: dsv41-top $c }" ] && [ "$first" != "usage: dsv41-top $c" ]; then
        bad "'dsv41-top $c --help' (rc $rc) begins: $first"
    fi
    n=$((n + 1))
done
[ $fail = 0 ] && ok "--help of $n commands, each its own usage"
out=$("$bin" launch --no-such-option 2>&1); rc=$?
[ $rc = 2 ] && grep -q "unknown option '--no-such-option'" <<< "$out" &&
    ok "an undocumented option is refused, named (rc 2)" || bad "launch --no-such-option: rc $rc: $out"

# ---- the fixes messages and pages name: "run dsv41-top doctor --fix" must name
# a command that exists and an option it documents (tests/cmd_refs.awk says how
# a reference is read). The table: every documented option (docs flags), every
# command (--help), the main options that take a value.
refs=$(mktemp)
{
    sed 's/^/flag /' <<< "$flags"
    env -i PATH=/usr/bin:/bin "$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print "cmd " $1 }'
    env -i PATH=/usr/bin:/bin "$bin" --help |
        sed -n 's/^ *\(-[a-z], \)\{0,1\}\(--[a-z-]*\) [A-Z].*/\1 \2/p' | tr -d ',' | xargs -n1 | sed 's/^/arg /'
} > "$refs.table"
for kind in messages pages; do
    if [ $kind = messages ]; then
        find src tui -name '*.[ch]' | sort | xargs awk -f tests/c_strings.awk
    else
        awk -f tests/md_code.awk README.md docs/*.md src/*/README.md tui/README.md
    fi | grep 'dsv41-top' > "$refs.$kind"
    if out=$(awk -f tests/cmd_refs.awk "$refs.table" "$refs.$kind"); then
        ok "the $kind name commands and options that exist ($(tail -1 <<< "$out"))"
    else
        bad "the $kind name commands or options that do not exist:"
        sed '$d' <<< "$out"
    fi
done
rm -f "$refs" "$refs".*

# ---- docs/operating.md's "whole set at a glance" has every command
cmds=$(env -i PATH=/usr/bin:/bin "$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
glance=$(sed -n '/^```$/,/^```$/p' docs/operating.md | head -60)
missing=$(for c in $cmds; do grep -q "^dsv41-top $c\b" <<< "$glance" || echo "$c"; done)
[ -z "$missing" ] && ok "docs/operating.md's block names every command" ||
    bad "docs/operating.md's block lacks:" $missing

# ---- the environment and the files: every variable the code reads is a
# setting or in 'docs environment'; every STATE_DIR/... and .dsv41-... a page
# or a message names is in 'docs files' (a file of ours that no table lists
# is one an operator cannot look up)
envs=$(docs environment | awk -F'`' 'NR > 2 { print $2 }')
sets=$(docs settings | awk -F'`' 'NR > 2 { print $2 }')
# DSV41_XFER_TEST_FLIP: the copy tests' fault injection, not an operator's
missing=$(grep -rhoE 'getenv\("[A-Za-z_0-9]+"\)' src tui | sed 's/getenv("\(.*\)")/\1/' | sort -u |
          grep -vxF -e DSV41_XFER_TEST_FLIP $(printf -- '-e %s ' $envs $sets))
[ -z "$missing" ] && ok "every variable the code reads is documented (docs environment, settings)" ||
    bad "variables the code reads that no table documents: $missing"
files=$(docs files | awk -F'`' 'NR > 2 { print $2 }')
named=$( { awk -f tests/md_code.awk README.md docs/*.md src/*/README.md tui/README.md
           find src tui -name '*.[ch]' | sort | xargs awk -f tests/c_strings.awk; } |
         grep -oE '(STATE_DIR|MODEL_DIR)/[A-Za-z0-9_.<>-]+/?|\.dsv41-[a-z]+\.[a-z]+' | sort -u)
unknown=
for n in $named; do
    n=${n%.}; n=${n%/}
    case $n in STATE_DIR | MODEL_DIR) continue ;; esac
    # a name stands for a table entry by its last part (.dsv41-copy.live,
    # bench for STATE_DIR/bench/), HOST and <host> the same word
    base=${n##*/}; base=${base//<hostname>/HOST}; base=${base//<host>/HOST}
    grep -qE -- "(^|/)${base//./\\.}(/|\$)" <<< "$files" || unknown="$unknown $n"
done
[ -z "$unknown" ] && ok "every file of ours a page or a message names is in 'docs files' ($(wc -w <<< "$named") names)" ||
    bad "files named in pages or messages that 'docs files' does not list:$unknown"

# ---- the man page and the completions
man=$(mktemp -d)
docs man > "$man/dsv41-top.1"
warn=$(groff -ww -z -man "$man/dsv41-top.1" 2>&1)
[ -z "$warn" ] && ok "the man page renders without a warning" || bad "groff: $warn"
text=$(MANWIDTH=80 man -l "$man/dsv41-top.1" 2>/dev/null | col -b)
for s in COMMANDS "CONSOLE KEYS" SETTINGS "CONSOLE OPTIONS" ENVIRONMENT "EXIT STATUS" FILES; do
    grep -q "^$s" <<< "$text" || bad "the man page has no $s section"
done
# the static helpers' own pages
for p in dsv41-guard.8 dsv41-verify.1 dsv41-xfer.1; do
    env -i PATH=/usr/bin:/bin HOME=/nonexistent DSV41_CONFIG=/dev/null "$bin" docs man "${p%.*}" > "$man/$p"
    warn=$(groff -ww -z -man "$man/$p" 2>&1)
    htext=$(MANWIDTH=80 man -l "$man/$p" 2>/dev/null | col -b)
    if [ -n "$warn" ]; then
        bad "$p: groff: $warn"
    elif ! grep -q "^SYNOPSIS" <<< "$htext" || ! grep -q "^EXIT STATUS" <<< "$htext" ||
         ! grep -q "^FILES" <<< "$htext" || ! grep -q -- "--dir\|--state-dir" <<< "$htext"; then
        bad "$p lacks a section or its options"
    else
        ok "$p renders without a warning, with its options, exit statuses and files"
    fi
done
for c in launch copy-to-peer status; do
    grep -q "^   $c" <<< "$text" || bad "the man page has no $c"
done
grep -q 'STOP_TIMEOUT\|MEMGUARD_GIB' <<< "$text" && ok "the man page has its sections, commands and settings" ||
    bad "the man page has no settings"
docs bash > "$man/dsv41-top.bash"
got=$(bash -c '. "$1" && complete -p dsv41-top && COMP_WORDS=(dsv41-top cop) COMP_CWORD=1 && _dsv41_top &&
               echo "reply=${COMPREPLY[*]}" && COMP_WORDS=(dsv41-top logs --t) COMP_CWORD=2 && _dsv41_top &&
               echo "reply=${COMPREPLY[*]}" && COMP_WORDS=(dsv41-top logs "") COMP_CWORD=2 && _dsv41_top &&
               echo "reply=${COMPREPLY[*]}"' _ "$man/dsv41-top.bash" 2>&1)
grep -q 'complete -F _dsv41_top dsv41-top' <<< "$got" && grep -qx 'reply=copy-to-peer' <<< "$got" &&
    grep -qx 'reply=--tail' <<< "$got" && grep -qx 'reply=r0 r1' <<< "$got" &&
    ok "bash completion: loads, completes a command, an option and a rank" || bad "bash completion: $got"
docs zsh > "$man/_dsv41-top"
if command -v zsh >/dev/null; then
    got=$(zsh -fc 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$1/zcompdump"; print -r -- ${_comps[dsv41-top]}' _ "$man" 2>&1)
    zsh -n "$man/_dsv41-top" && [ "$got" = _dsv41-top ] && ok "zsh completion: parses, compinit binds it" ||
        bad "zsh completion: $got"
else
    bad "zsh is not installed (make test-deps installs it)"
fi
rm -rf "$man"
exit $fail
