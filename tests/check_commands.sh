#!/bin/bash
# Nothing reaches a shell unquoted: a command for a node is a shcmd (a fixed
# script of string literals and its values as parameters), quoted in
# src/util/shcmd.c alone; children start through src/util/child.c (posix_spawn, no
# shell); nothing else builds a command line. A grep over src/ and tui/,
# and a compile that must fail when a value is passed as script text.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
fail=0
bad() { echo "FAIL - $1"; shift; printf '    %s\n' "$@"; fail=1; }
ok() { echo "ok   - $1"; }

# every C file of the program, but the one place allowed each time
files() { find src tui -name '*.c' -o -name '*.h' | sort; }
grep_except() { # pattern allowed-file...
    local pat=$1 f hits=()
    shift
    while IFS= read -r f; do
        for a in "$@"; do [ "$f" = "$a" ] && continue 2; done
        while IFS= read -r l; do hits+=("$f:$l"); done < <(grep -nE "$pat" "$f")
    done < <(files)
    printf '%s\n' "${hits[@]}"
}

# guardctl.c forks to detach the guard daemon (no exec)
h=$(grep_except '\b(popen|system|execl|execlp|execle|execv|execvp|execve)\(|\bfork\(' src/guard/guardctl.c)
[ -z "$h" ] && ok "no popen, system, exec or fork outside child.c's posix_spawn" ||
    bad "a child started another way (use child_spawn or node_run)" "$h"
h=$(grep_except 'posix_spawn' src/util/child.c src/util/shcmd.h)
[ -z "$h" ] && ok "posix_spawn in child.c alone" || bad "posix_spawn outside child.c" "$h"
h=$(grep_except 'shell_quote|strv_join_shell|shcmd_quote(_rsync)?\(' src/util/shcmd.c src/util/shcmd.h src/transfer/peer.c)
[ -z "$h" ] && ok "quoting in shcmd.c alone (peer.c: rsync's -e words through it)" ||
    bad "quoting outside shcmd.c" "$h"
h=$(grep_except 'shcmd_script_literal_' src/util/shcmd.c src/util/shcmd.h)
[ -z "$h" ] && ok "scripts only through the shcmd_script macro (string literals)" ||
    bad "a script built around the macro" "$h"
# the container's own /bin/sh is an argv of the rank (deploy.c), not a command line
h=$(grep_except '"(/bin/)?sh",|"sh -c|/bin/sh -c|exec sh ' src/util/shcmd.c src/util/shcmd.h src/deploy/deploy.c src/deploy/deploy.h)
[ -z "$h" ] && ok "sh -c in shcmd.c alone" || bad "a shell started outside shcmd.c" "$h"
# raw command strings reach ssh only from the node layer (and the sampler's stream)
h=$(grep_except '\b(sshio_run|sshio_stream_open|ssh_chan_new)\(' \
    src/nodes/node.c src/nodes/sampler.c src/ssh/sshio.c src/ssh/sshio_calls.c src/ssh/sshio.h src/ssh/ssh.c src/ssh/ssh.h)
[ -z "$h" ] && ok "command strings reach ssh only through node.c" ||
    bad "a command string handed to ssh directly" "$h"
# a format that builds a command: a %s next to a shell word, in a buffer
h=$(grep_except '(buf_printf|snprintf)\([^,]*(cmd|script)[^,]*, *"[^"]*%s' src/util/shcmd.c)
[ -z "$h" ] && ok "no command formatted with %s" || bad "a command formatted with %s" "$h"

# the macro takes string literals only: a value as script text does not compile
tmp=$(mktemp -d)
cat > "$tmp/t.c" <<'EOF'
#include "shcmd.h"
void f(struct shcmd *c, const char *value) { shcmd_script(c, value); }
EOF
if ${CC:-cc} -std=c17 -Isrc/util -c -o "$tmp/t.o" "$tmp/t.c" 2>"$tmp/err"; then
    bad "shcmd_script(c, value) compiled: a value could become script text"
else
    ok "shcmd_script(c, value) does not compile"
fi
cat > "$tmp/t.c" <<'EOF'
#include "shcmd.h"
void f(struct shcmd *c) { shcmd_script(c, "echo \"$1\""); }
EOF
${CC:-cc} -std=c17 -Isrc/util -c -o "$tmp/t.o" "$tmp/t.c" && ok "shcmd_script(c, \"literal\") compiles" ||
    bad "shcmd_script with a literal does not compile"
rm -rf "$tmp"
exit $fail
