#!/bin/bash
# dsv41-guard.service on the test hosts, where systemd is not PID 1: status
# says n/a for both nodes, doctor --fix says so and guards them with
# `guard --daemon`. Then a stand-in systemctl on the worker's PATH (it
# answers "running", records its argv, and its start runs the unit's
# ExecStart= as systemd would, with the unit's DSV41_GUARD_UNIT) takes the
# remote install path: the unit lands in UNIT_DIR over sftp, is enabled and
# started, its guard holds the worker's lock, status shows the unit, and
# `stop` leaves that guard running. Needs hosts.sh up.
set -u
. "$(dirname "$0")/lib.sh"
require_hosts
U=$IT_DIR/units
FAKE=$IT_DIR/bin/systemctl
WSTATE=$IT_DIR/worker/state
cleanup() {
    rm -f "$FAKE"
    stop_test_guards
    rm -rf "$U"
}
trap cleanup EXIT
mkdir -p "$U"

out=$(top_head status 2>&1)
check "status: head's unit n/a" eval 'printf "%s" "$out" | grep -A12 "^head" | grep -q "unit    dsv41-guard.service n/a (no systemd"'
check "status: worker's unit n/a" eval 'printf "%s" "$out" | grep -A12 "^worker" | grep -q "unit    dsv41-guard.service n/a (no systemd"'
js=$(top_head status --json 2>/dev/null)
check "status --json: the worker's unit, systemd false" jq_is "$js" '.nodes[1].guard.unit.systemd' false

out=$(top_head UNIT_DIR="$U" doctor --fix 2>&1)
check "doctor --fix: the head has no systemd" contains "$out" "head: no systemd runs this node"
check "doctor --fix: the worker has no systemd" contains "$out" "worker: no systemd runs this node"
check "doctor --fix: falls back to guard --daemon" contains "$out" "worker: falling back: the memory guard as \`guard --daemon\`"
check "doctor --fix: the worker guarded" contains "$out" "worker: memory guard up"
check "doctor --fix: no unit written" eval '[ -z "$(ls -A "$U")" ]'

# the stand-in systemctl, for the worker only (sshd puts IT_DIR/bin first)
cat > "$FAKE" <<EOC
#!/bin/sh
echo "\$*" >> "$U/argv"
case \$1 in
is-system-running) echo running ;;
is-enabled) [ -e "$U/enabled" ] && echo enabled || echo disabled ;;
is-active) [ -e "$U/active" ] && echo active || echo inactive ;;
enable) touch "$U/enabled" ;;
daemon-reload) ;;
start|restart)
    line=\$(sed -n 's/^ExecStart=//p' "$U/\$2")
    eval "set -- \$line"
    DSV41_GUARD_UNIT=\$2 setsid "\$@" </dev/null >>"$U/guard.out" 2>&1 &
    touch "$U/active" ;;
*) exit 1 ;;
esac
EOC
chmod 0755 "$FAKE"
out=$(top_head status 2>&1)
check "status: the worker's unit not enabled, warned" contains "$out" "worker: dsv41-guard.service is disabled, inactive"

out=$(top_head UNIT_DIR="$U" doctor --fix 2>&1)
check "doctor --fix: installed on the worker" contains "$out" "worker: dsv41-guard.service enabled and running as root"
check "doctor --fix: the head still falls back" contains "$out" "head: no systemd runs this node"
f=$U/dsv41-guard.service
check "the unit file landed in UNIT_DIR" [ -f "$f" ]
check "the unit: the worker's static guard with its STATE_DIR" grep -q "^ExecStart=$WSTATE/bin/dsv41-guard \"--state-dir\" \"$WSTATE\" \"--runtime\" \"podman\"" "$f"
check "the unit: User= the ssh account, no DSV41_CONFIG setting, comments as written" eval "grep -qx User=root '$f' && ! grep -q ^Environment=DSV41_CONFIG '$f' && grep -q '@CONFIG@' '$f'"
check "the unit: STATE_DIR for the mount" grep -qx "RequiresMountsFor=$WSTATE" "$f"
check "the unit: mode 0644" [ "$(stat -c %a "$f")" = 644 ]
check "no temporary unit left in STATE_DIR" [ ! -e "$WSTATE/dsv41-guard.service.new" ]
argv=$(cat "$U/argv")
check "systemctl: daemon-reload, enable, restart" eval 'printf "%s\n" "$argv" | grep -qx daemon-reload && printf "%s\n" "$argv" | grep -qx "enable dsv41-guard.service" && printf "%s\n" "$argv" | grep -qx "restart dsv41-guard.service"'
check "the unit's guard holds the worker's lock" grep -q systemd "$WSTATE/guard.spark-worker.lock"

out=$(top_head status 2>&1)
check "status: the worker's unit enabled, active" eval 'printf "%s" "$out" | grep -A12 "^worker" | grep -q "unit    dsv41-guard.service enabled, active"'
js=$(top_head status --json 2>/dev/null)
check "status --json: the worker's unit active" jq_is "$js" '.nodes[1].guard.unit.active' active

out=$(top_head stop 2>&1)
check "stop: the unit's guard stays" contains "$out" "runs under systemd (dsv41-guard.service) and stays"
pid=$(cut -d' ' -f1 "$WSTATE/guard.spark-worker.lock")
check "stop: the unit's guard still runs" kill -0 "$pid"

# installed again unchanged: started, not restarted
: > "$U/argv"
out=$(top_head UNIT_DIR="$U" doctor --fix 2>&1)
check "doctor --fix again: fine" contains "$out" "worker: dsv41-guard.service enabled and running"
check "doctor --fix again: no daemon-reload for the same file" eval '! grep -qx daemon-reload "$U/argv"'
summary
