#!/bin/bash
# dist/systemd's units as `make install` fills them in (@BINDIR@ and the
# rest), checked by systemd-analyze verify (no warning at all); the options
# that install them; and here, where systemd is not PID 1, `doctor --fix`
# saying so and guarding this node with `guard --daemon` instead, and
# `status` showing the unit as n/a.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
TOP=${DSV41_BIN:-$root/build/dsv41-top}
BINDIR=$(cd "$(dirname "$TOP")" && pwd)
T=$(mktemp -d /tmp/dsv41-units-test.XXXXXX)
trap '"$TOP" guard --stop >/dev/null 2>&1; rm -rf "$T"' EXIT
export HOME=$T XDG_CONFIG_HOME=$T/.config STATE_DIR=$T/state RUNTIME=podman

check "systemd-analyze is installed (make test-deps: systemd)" command -v systemd-analyze
for u in "$root"/dist/systemd/*.service; do
    n=$(basename "$u")
    sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@USER@|$(id -un)|g" -e "s|@CONFIG@|$T/config|g" \
        -e "s|@STATE_DIR@|$T/state|g" "$u" > "$T/$n"
    check "$n: every placeholder filled in" eval "! grep -q '@[A-Z_]*@' '$T/$n'"
    said=$(systemd-analyze verify "$T/$n" 2>&1); rc=$?
    check "$n: systemd-analyze verify passes, silent" eval '[ $rc = 0 ] && [ -z "$said" ]'
    [ -z "$said" ] || printf '%s\n' "$said"
done
# the verifier does complain, so the silence above means something
sed 's/^Restart=always/Restart=allways/' "$T/dsv41-guard.service" > "$T/bad.service"
said=$(systemd-analyze verify "$T/bad.service" 2>&1)
check "systemd-analyze verify catches a bad value" contains "$said" "allways"
check "the guard unit runs the foreground guard" grep -qx "ExecStart=$BINDIR/dsv41-top guard" "$T/dsv41-guard.service"
check "the guard unit: Restart=always, OOMScoreAdjust=-1000" eval "grep -qx Restart=always '$T/dsv41-guard.service' && grep -qx OOMScoreAdjust=-1000 '$T/dsv41-guard.service'"
check "the guard unit: CAP_SYS_NICE, no RestrictRealtime (the sampling thread's SCHED_RR)" eval \
    "grep -q '^AmbientCapabilities=.*CAP_SYS_NICE' '$T/dsv41-guard.service' && ! grep -q '^RestrictRealtime=' '$T/dsv41-guard.service'"
check "the guard unit: no PrivateTmp/ProtectHome (STATE_DIR)" eval "! grep -Eq '^(PrivateTmp|ProtectHome)=' '$T/dsv41-guard.service'"

# watch --unit: the watch unit filled in for this head, as systemd takes it
out=$(WORKER=spark2 HF_TOKEN=hf_secret_in_env "$TOP" watch --unit 2> "$T/unit.err"); rc=$?
printf '%s\n' "$out" > "$T/dsv41-watch.service"
check "watch --unit: exit 0, every placeholder filled in" eval '[ $rc = 0 ] && ! grep -q "@[A-Z_]*@" "$T/dsv41-watch.service"'
check "watch --unit: runs this binary's watch as this account" eval \
    'grep -qx "ExecStart=$BINDIR/dsv41-top watch" "$T/dsv41-watch.service" && grep -qx "User=$(id -un)" "$T/dsv41-watch.service"'
check "watch --unit: the settings from the environment, never a secret" eval \
    'grep -qx "Environment=\"WORKER=spark2\"" "$T/dsv41-watch.service" && ! grep -q hf_secret_in_env "$T/dsv41-watch.service"'
said=$(systemd-analyze verify "$T/dsv41-watch.service" 2>&1); rc=$?
check "watch --unit: systemd-analyze verify passes, silent" eval '[ $rc = 0 ] && [ -z "$said" ]'
[ -z "$said" ] || printf '%s\n' "$said"
out=$(EXTRA_ENV='HF_TOKEN=hf_in_extra_env NCCL_DEBUG=INFO' EXTRA='--x $HOME' "$TOP" watch --unit 2>/dev/null); rc=$?
check "watch --unit: nothing of launch's EXTRA_ENV or EXTRA (a token's place)" eval \
    '[ $rc = 0 ] && ! grep -q "hf_in_extra_env\|EXTRA" <<< "$out"'
out=$(HF_ENDPOINT='https://me:pass@hub.example' "$TOP" watch --unit 2>&1); rc=$?
check "watch --unit: a URL with a password refused, named, nothing printed of it" eval \
    '[ $rc = 1 ] && contains "$out" "HF_ENDPOINT holds a URL with a password" && ! contains "$out" "me:pass"'
out=$("$TOP" watch --unit --bogus 2>&1); rc=$?
check "watch --unit --bogus: usage, exit 2" eval '[ $rc = 2 ] && contains "$out" "usage:"'

out=$("$TOP" launch --help); rc=$?
check "launch --help: --install-units" eval '[ $rc = 0 ] && contains "$out" "--install-units"'
out=$("$TOP" doctor --help); rc=$?
check "doctor --help: --fix" eval '[ $rc = 0 ] && contains "$out" "--fix"'
out=$("$TOP" doctor --bogus 2>&1); rc=$?
check "doctor --bogus: usage, exit 2" eval '[ $rc = 2 ] && contains "$out" "usage:"'

if [ "$(systemctl is-system-running 2>/dev/null)" = offline ]; then
    out=$("$TOP" doctor 2>&1)
    check "doctor: the unit n/a here, no systemd" contains "$out" "dsv41-guard.service: n/a (no systemd"
    out=$("$TOP" doctor --fix 2>&1)
    check "doctor --fix: says there is no systemd" contains "$out" "head: no systemd runs this node"
    check "doctor --fix: falls back to guard --daemon" contains "$out" "falling back: the memory guard as \`guard --daemon\`"
    check "doctor --fix: the daemon guard is up" "$TOP" guard --status
    check "doctor --fix: no unit file written" eval "[ ! -e /etc/systemd/system/dsv41-guard.service ] || ! grep -q '$T' /etc/systemd/system/dsv41-guard.service"
    out=$("$TOP" status 2>&1)
    check "status: the unit n/a" contains "$out" "unit    dsv41-guard.service n/a (no systemd"
    u=$("$TOP" status --json 2>/dev/null | jq -c '.nodes[0].guard.unit | [.systemd, .enabled, .active]')
    check "status --json: unit systemd false, enabled and active null" [ "$u" = '[false,null,null]' ]
    "$TOP" guard --stop >/dev/null
else
    echo "skip: systemd runs this machine; the no-systemd path is checked in tests/it/test_units.sh"
fi
summary
