#!/bin/bash
# The map from each module of src/ and tui/ to the tests that exercise it,
# generated so that it cannot drift (docs/testmap.md is this output;
# tests/check_docs.sh fails when they differ, make readme rewrites it):
#   unit      - the cmocka tests that include the module's header;
#   commands  - the test scripts that run a command (dsv41-top CMD,
#               top_head CMD, $TOP CMD, ... ; the console for tui/ scripts)
#               whose source reaches the module through includes, followed
#               transitively (docs/cmd.md says where each command is).
# A module neither reaches is listed as untested.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

# every file's direct includes of our headers
declare -A INC
for f in $(find src tui -name '*.[ch]' | sort); do
    INC[$f]=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | tr '\n' ' ')
done
# where each header is, and the sources that implement it: a .c file
# implements its namesake header, else the first header of its own folder it
# includes (dlhash.c implements dlrun.h, guardcg.c guard.h) - but not the
# command table's (commands.h, cmdtab.h), which every command includes
declare -A HDR IMPL
for h in $(find src tui -name '*.h'); do HDR[$(basename "$h")]=$h; done
for c in $(find src tui -name '*.c'); do
    d=$(dirname "$c") b=$(basename "$c" .c)
    if [ -n "${HDR[$b.h]:-}" ]; then
        IMPL[$b.h]="${IMPL[$b.h]:-} $c"
        continue
    fi
    for h in ${INC[$c]}; do
        case $h in commands.h | cmdtab.h) continue ;; esac
        if [ -n "${HDR[$h]:-}" ] && [ "${HDR[$h]%/*}" = "$d" ]; then
            IMPL[$h]="${IMPL[$h]:-} $c"
            break
        fi
    done
done

# the modules a file reaches, transitively: its headers' sources, theirs,
# ... (once per file: REACH caches it)
declare -A REACH
reach() {
    if [ -z "${REACH[$1]:-}" ]; then
        local -A seen=()
        local todo=("$1") f h c
        while [ ${#todo[@]} -gt 0 ]; do
            f=${todo[0]}; todo=("${todo[@]:1}")
            [ -n "${seen[$f]:-}" ] && continue
            seen[$f]=1
            for h in ${INC[$f]:-}; do
                [ -n "${HDR[$h]:-}" ] && todo+=("${HDR[$h]}")
                for c in ${IMPL[$h]:-}; do todo+=("$c"); done
            done
        done
        REACH[$1]=$(printf '%s\n' "${!seen[@]}" | grep '\.c$' | tr '\n' ' ')
    fi
    echo "${REACH[$1]}"
}

# command -> its source file, from docs/cmd.md's checked table
declare -A CMD_FILE
while IFS='|' read -r _ cmds file _; do
    f=$(grep -o '`[^`]*\.c`' <<< "$file" | head -1 | tr -d '`')
    [ -n "$f" ] || continue
    for c in $(grep -o '`[a-z-]*`' <<< "$cmds" | tr -d '`'); do CMD_FILE[$c]=$f; done
done < <(grep '^| `' docs/cmd.md)

# each script's commands; the console for tui/ and demo scripts
declare -A USES # module -> "script script ..."
for s in $(find tests -path tests/unit -prune -o -path '*/node_modules' -prune -o -name 'test_*.sh' -print | sort) \
         tests/check_docs.sh; do
    name=${s#tests/}
    cmds=$(awk '{
        for (i = 1; i <= NF; i++) {
            t = $i; sub(/.*\(/, "", t) # out=$(top_head ...
            if (t ~ /^(top_head|top_worker|"?\$TOP"?|"?\$BIN"?|dsv41-top|"?\$\{?DSV41_BIN|"?\$bin"?)/) {
                for (j = i + 1; j <= NF; j++) {
                    w = $j; gsub(/^"|"$/, "", w)
                    if (w == "--config" || w == "--set" || w == "-s") { j++; continue }
                    if (w ~ /^[A-Z_]+=/ || w ~ /^-/) continue
                    print w; break
                }
            }
        }
    }' "$s" | sort -u)
    files=
    for c in $cmds; do [ -n "${CMD_FILE[$c]:-}" ] && files="$files ${CMD_FILE[$c]}"; done
    # the console for tui/ and demo scripts; the static helpers where a
    # script runs them or the command that pushes them
    case $name in tui/* | demo/*) files="$files tui/console.c" ;; esac
    # main and the command table run every command (not followed further:
    # through them every module is reachable)
    [ -n "$files" ] && for m in src/main.c src/cmd/cmdtab.c; do USES[$m]="${USES[$m]:-} $name"; done
    grep -q 'dsv41-guard\| launch' "$s" && files="$files src/guard/guardd.c"
    grep -q 'dsv41-verify\|verify --node\|verify --all' "$s" && files="$files src/verify/verifyd.c"
    grep -q 'dsv41-xfer\|copy-to-peer\|--to-workers' "$s" && files="$files src/transfer/xferd.c"
    for f in $(printf '%s\n' $files | sort -u); do
        reach "$f" > /dev/null # fills the cache in this shell, not a subshell's
        for m in ${REACH[$f]}; do USES[$m]="${USES[$m]:-} $name"; done
    done
done

echo "| module | unit tests | test scripts that reach it |"
echo "|---|---|---|"
untested=
for c in $(find src tui -name '*.c' | sort); do
    b=$(basename "$c" .c)
    units=$(grep -l "#include \"$b.h\"" tests/unit/test_*.c 2>/dev/null | xargs -r -n1 basename | sed 's/\.c$//' | tr '\n' ' ')
    units=${units% }
    scripts=$(printf '%s\n' ${USES[$c]:-} | sort -u | grep -v '^$')
    n=$(grep -c . <<< "$scripts")
    [ -z "$units" ] && [ "$n" = 0 ] && untested="$untested \`$c\`"
    shown=$(head -3 <<< "$scripts" | tr '\n' ' ' | sed 's/ *$//')
    [ "$n" -gt 3 ] && shown="$shown (+$((n - 3)))"
    echo "| \`$c\` | ${units:-none} | ${shown:-none} |"
done
echo
echo "Untested:${untested:- none}"
