#!/bin/bash
# valgrind (memcheck) on `status` across both test hosts and on the console's
# first screens (under tmux, then quit with q): no invalid read or write, no
# use of uninitialised memory, no definite leak. The plain build only: the
# sanitizer builds cannot run under valgrind. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts

case $BIN in
*build-thread* | *build-address*)
    echo "ok   - valgrind runs on the plain build only (this pass: $BIN)"
    echo "1 passed, 0 failed"
    exit 0
    ;;
esac
VG=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --child-silent-after-fork=yes --trace-children=no)
LOG=$IT_DIR/valgrind

# --- status ---------------------------------------------------------------------
# shellcheck disable=SC2046
on_host head env $(head_env) "${VG[@]}" --log-file="$LOG.status" "$BIN" status > "$LOG.status.out" 2>&1
rc=$?
check "status under valgrind: ran (exit 0 or 1, not valgrind's 99)" eval '[ $rc -eq 0 ] || [ $rc -eq 1 ]'
check "status under valgrind: it reached the worker" grep -q "worker" "$LOG.status.out"
check "status under valgrind: no errors" grep -q "ERROR SUMMARY: 0 errors" "$LOG.status"
grep -q "ERROR SUMMARY: 0 errors" "$LOG.status" || sed -n '1,60p' "$LOG.status" | sed 's/^/    | /'

# --- the console's first screens ------------------------------------------------
T=dsv41-vg-$$
tm() { tmux -L "$T" "$@"; }
cat > "$IT_DIR/vgconsole.sh" <<EOF
#!/bin/bash
. "$IT_ROOT/tests/it/lib.sh"
on_host head env \$(head_env) TERM=tmux-256color LANG=C.UTF-8 ${VG[*]} --log-file=$LOG.console "$BIN"
echo "console exited rc=\$?"
sleep 600
EOF
chmod +x "$IT_DIR/vgconsole.sh"
tm new-session -d -x 120 -y 40 "$IT_DIR/vgconsole.sh"
shown=0
for _ in $(seq 120); do
    tm capture-pane -p 2>/dev/null | grep -q "worker" && { shown=1; break; }
    sleep 1
done
check "console under valgrind: its screen shows both nodes" [ $shown -eq 1 ]
sleep 5 # a few refreshes
tm send-keys q
for _ in $(seq 120); do
    tm capture-pane -p 2>/dev/null | grep -q "console exited rc=" && break
    sleep 1
done
screen=$(tm capture-pane -p 2>/dev/null)
tm kill-server 2>/dev/null
check "console under valgrind: quit with q, exit 0" contains "$screen" "console exited rc=0"
check "console under valgrind: no errors" grep -q "ERROR SUMMARY: 0 errors" "$LOG.console"
grep -q "ERROR SUMMARY: 0 errors" "$LOG.console" || sed -n '1,80p' "$LOG.console" | sed 's/^/    | /'
stop_test_guards
summary
