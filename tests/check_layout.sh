#!/bin/bash
# The include direction of src/'s folders: a file includes headers of its own
# folder and of lower layers only, never of a higher one or of a sibling on
# its own layer. util <- {config, ssh, container} <- nodes <- {guard, serve, verify} <-
# {download, deploy} <- {transfer, accept, live} <- {tui, ops} <- cmd <- src/main.c. Every source folder is known
# here (a new one must be given its layer), and every header name is unique.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
declare -A LAYER=(
    [src/util]=0 [src/config]=1 [src/ssh]=1 [src/container]=1 [src/nodes]=2
    [src/guard]=3 [src/serve]=3 [src/verify]=3
    [src/download]=4 [src/deploy]=4 [src/transfer]=5 [src/accept]=5 [src/live]=5 [tui]=6 [src/ops]=6 [src/cmd]=7 [src]=8
)
fail=0
bad() { echo "FAIL - $1"; fail=1; }

# where each header lives, by name
declare -A HOME_OF=()
while IFS= read -r h; do
    n=$(basename "$h")
    d=$(dirname "$h")
    [ -z "${LAYER[$d]+x}" ] && { bad "$d has no layer in tests/check_layout.sh"; continue; }
    [ -n "${HOME_OF[$n]+x}" ] && bad "header $n in both ${HOME_OF[$n]} and $d"
    HOME_OF[$n]=$d
done < <(find src tui -name '*.h' | sort)
for d in $(find src tui -name '*.c' -printf '%h\n' | sort -u); do
    [ -z "${LAYER[$d]+x}" ] && bad "$d has no layer in tests/check_layout.sh"
done

n=0
while IFS= read -r f; do
    d=$(dirname "$f")
    [ -z "${LAYER[$d]+x}" ] && continue
    while IFS= read -r inc; do
        # made by the build (build/gen: the version, the drift windows), below every layer
        [ "$inc" = version.h ] && continue
        [ "$inc" = drift_windows.h ] && continue
        to=${HOME_OF[$inc]:-}
        [ -z "$to" ] && { bad "$f includes \"$inc\", which is no header of src/ or tui/"; continue; }
        n=$((n + 1))
        [ "$to" = "$d" ] && continue
        if [ "${LAYER[$to]}" -gt "${LAYER[$d]}" ]; then
            bad "$f ($d, layer ${LAYER[$d]}) includes $inc from $to, a higher layer (${LAYER[$to]})"
        elif [ "${LAYER[$to]}" -eq "${LAYER[$d]}" ]; then
            bad "$f ($d) includes $inc from $to, a sibling on the same layer"
        fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find src tui -name '*.c' -o -name '*.h' | sort)
[ $fail -eq 0 ] && echo "ok   - $n includes inside src/ and tui/, all downward or within a folder"

# (the static helpers are linked from their folder's archive and util's
# alone - the Makefile's rules - so a helper that needs more fails to link)
exit $fail
