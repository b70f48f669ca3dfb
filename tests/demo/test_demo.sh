#!/bin/bash
# make demo as a new operator runs it, on a tmux screen: both nodes shown,
# s starts the deployment, t's smoke test passes, q quits - and then nothing
# of the demo is left: no namespace, no sshd, no simulator, no container, no
# test-host folder. Runs with the test hosts down (make test runs it after
# the integration tests); it brings them up and down itself, as make demo does.
# Not in tests/tui or tests/it: tests/it/run.sh runs every test_*.sh there with
# the hosts up.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
# a set of test hosts of its own (slot 9: tests/run.sh uses 1-4), so that
# hosts someone left up - a bench, a make demo by hand - neither stop this
# test nor are torn down by it
export DSV41_IT_SLOT=9
. "$root/tests/it/lib.sh"
T=dsv41-demo-$$
W=140 H=45
SCREEN=""
. "$root/tests/tui/tmux.sh"
trap 'tm kill-server 2>/dev/null; "$root/tests/it/hosts.sh" down >/dev/null 2>&1' EXIT

if ip netns list | grep -q "^$NS_PREFIX"; then
    echo "FAIL - the test hosts are up: test_demo brings them up itself (tests/it/hosts.sh down)"
    exit 1
fi
cd "$root" || exit 2
# the simulators, guards and consoles running before the demo (someone else's) are not its leftovers
# (pgrep warns that the alternation is longer than a process name: it still matches)
ours() { pgrep -a -x -r R,S,D,T,t,I 'dsv41-sim|dsv41-guard|dsv41-top|vllm' 2>/dev/null; }
before=$(ours)
new_session "env -u MAKEFLAGS -u MAKELEVEL DSV41_IT_SLOT=$IT_SLOT make demo; echo \"demo exited rc=\$?\"; sleep 600"
check "demo: the console's header, both nodes" wait_for "dsv41-top | 2 nodes" 1800
check "demo: the worker reached over ssh" wait_for "worker up" 600
check "demo: the title says what it is" wait_for "demo: simulated head + worker"
key s
check "demo: s starts the deployment, the API comes up" wait_for "API up" 1200
check "demo: the launch job ends" wait_for "launch  done" 600
# DEMO_CAPTURE=FILE keeps the screen of a running deployment (the README's picture)
[ -n "${DEMO_CAPTURE:-}" ] && sleep 5 && tm capture-pane -p -t "$T" > "$DEMO_CAPTURE"
key t
check "demo: t's smoke test passes" wait_for "smoke   done" 900
key q
check "demo: q quits, and make demo says what it stopped" \
    wait_for "demo: everything it started is stopped" 900
check "demo: make demo exits 0" wait_for "demo exited rc=0" 100

# nothing of it left running
left=$(ip netns list | grep "^$NS_PREFIX")
check "after: no namespace left ($left)" test -z "$left"
# (an exited guard not reaped yet by the machine's init is gone: states R, S, D, T, I only)
left=$(ours | grep -vxF -- "${before:-^}")
check "after: no simulator, guard or console left ($left)" test -z "$left"
left=$(pgrep -af "sshd.*$IT_DIR")
check "after: no test sshd left ($left)" test -z "$left"
check "after: the test hosts' folder is gone" test ! -e "$IT_DIR"
left=$(podman ps -a --format '{{.Names}}' 2>/dev/null | grep '^dsv41-r')
check "after: no rank container in the machine's podman ($left)" test -z "$left"
left=$(grep " $IT_DIR/" /proc/mounts)
check "after: no mount under the test hosts' folder" test -z "$left"
summary
