#!/bin/bash
# The console on the head test host, driven through tmux: real sshd to the
# worker, real podman ranks running the simulator. Screens are read with
# capture-pane; keys are sent with send-keys. Needs hosts.sh up.
set -u
. "$(dirname "$0")/../it/lib.sh"
require_hosts

T=dsv41-console-$$
W=120 H=40
INJECT=$MODEL_SKELETON/inject.log
FAST="EXTRA_ENV=DSV41_SIM_BOOT_MS=1500 DSV41_SIM_LOG_FILE=/model/inject.log"
SCREEN=""
model_skeleton
rm -f "$INJECT"
on_host head podman rm -f -a -t 0 >/dev/null 2>&1
on_host worker podman rm -f -a -t 0 >/dev/null 2>&1
stop_test_guards
rm -rf "$IT_DIR/head/state" "$IT_DIR/worker/state"
mkdir -p "$IT_DIR/head/state" "$IT_DIR/worker/state"

# the console's command line, as a script tmux can run
cat > "$IT_DIR/console.sh" <<EOF
#!/bin/bash
DSV41_IT_SLOT="$IT_SLOT"
. "$IT_ROOT/tests/it/lib.sh"
BIN="$BIN"
top_head TERM=tmux-256color LANG=C.UTF-8 "$FAST" "\$@"
echo "console exited rc=\$?"
sleep 600
EOF
chmod +x "$IT_DIR/console.sh"

cleanup() {
    tm kill-server 2>/dev/null
    top_head stop >/dev/null 2>&1
}
trap cleanup EXIT

. "$(dirname "$0")/tmux.sh"
start_console() { # args...
    new_session "$IT_DIR/console.sh $*"
}
row() { printf '%s\n' "$SCREEN" | sed -n "$1p"; }
# An X10 mouse report: ESC [ M, then button, column and row (1-based), each
# + 32. Buttons: 0 left press, 3 release, 64 wheel up, 65 wheel down.
mouse() { # button x y
    key -l "$(printf '\033[M%b%b%b' "\\x$(printf %x $((32 + $1)))" "\\x$(printf %x $((32 + $2)))" \
        "\\x$(printf %x $((32 + $3)))")"
}
# The 1-based screen row of the first line starting with text.
row_of() { printf '%s\n' "$SCREEN" | grep -n "^$1" | head -1 | cut -d: -f1; }
# Row 1 is the header or one of its banners, nothing a log wrote.
header_on_row1() {
    row 1 | grep -Eq "^ (dsv41-top|MEMORY GUARD FIRED|ENGINE WEDGED|ALARM)" && return 0
    echo "    row 1: $(row 1)" >&2
    return 1
}
# Waits until row N shows text (up to N tenths of a second).
row_shows() { # row text tenths
    local i
    for i in $(seq "$3"); do
        screen
        case $(row "$1") in *"$2"*) return 0 ;; esac
        sleep 0.1
    done
    echo "    row $1 never showed: $2; it shows: $(row "$1")" >&2
    return 1
}

# --- the panes, before anything runs ---------------------------------------------
start_console --mouse --interval 0.5
check "starts: the header" wait_for "dsv41-top | 2 nodes"
check "nodes: both reachable over ssh" wait_for "worker up"
check "nodes: the head" contains "$SCREEN" "head up"
check "nodes: memory with a gauge" contains "$SCREEN" "avail "
check "nodes: GPU from nvidia-smi, memory n/a on a GB10" wait_for "mem n/a"
check "fabric: the head's port and GID index" wait_for "rocep1s0f0/1 ACTIVE"
check "fabric: the worker's GID index 5" contains "$SCREEN" "gid 5"
check "fabric: error counters" contains "$SCREEN" "err "
check "guard: the console guards the head" wait_for "guard ok"
check "server: down before launch" contains "$SCREEN" "down:"
check "status line: the keys" contains "$SCREEN" "s start"
check "layout: the header on the first row" eval 'row 1 | grep -q "^ dsv41-top"'

# --- help overlay ----------------------------------------------------------------
key '?'
# 40 rows do not hold every key: the overlay pages
check "help: the key table, page 1" wait_for "dsv41-top keys 1/2 (Space: more, any other key closes)"
check "help: lists stop" contains "$SCREEN" "stop the deployment (asks first)"
key Space
check "help: Space shows the rest" wait_for "dsv41-top keys 2/2 (last page"
check "help: down to the last key" contains "$SCREEN" "redraw the screen"
key x
check "help: closes on a key" gone_within "any other key closes" 20

# --- start -> serving ------------------------------------------------------------
key s
check "start: a launch job" wait_for "launch  running"
check "start: the API comes up" wait_for "API up" 600
check "server: healthy with the model" wait_for "healthy: "
check "logs: rank 0's log followed" wait_for "log r0 head"
check "logs: rank 0 startup lines" wait_for "Application startup"
check "logs: rank 1 on the worker" wait_for "headless rank 1 ready"
check "launch job: done" wait_for "launch  done"
check "guard: both nodes guarded after launch" eval \
    '[ "$(printf "%s\n" "$SCREEN" | grep -o "guard ok" | wc -l)" -ge 2 ]'

# --- smoke -----------------------------------------------------------------------
key t
check "smoke: runs as a job" wait_for "smoke   "
check "smoke: passes" wait_for "smoke   done" 600
check "server: the metrics after traffic" wait_for "running 0 waiting 0"

# --- P: connecting Pi from a laptop ------------------------------------------------
key P
check "pi: P shows the lines to connect Pi" wait_for "Connect Pi from a laptop"
check "pi: the install command and the pi command" eval \
    'contains "$SCREEN" "install.sh\" http://" && contains "$SCREEN" "pi --model dsv41-sparks/deepseek-v4.1-flash"'
check "pi: the key fetched with ssh, never shown" eval \
    'contains "$SCREEN" "export DSV41_API_KEY=" && ! grep -qF "$(cat "$IT_DIR/head/state/api_key")" <<< "$SCREEN"'
key x
check "pi: any key closes it" gone_within "Connect Pi from a laptop" 30

# --- verify the checkpoint ---------------------------------------------------------
key v
check "verify: runs as a job and passes" wait_for "verify  done" 100
check "verify: both nodes, the worker last" wait_for "worker: 2 of 2 file(s) OK" 20
key p
# a failed copy's own words are on the jobs tab: shown when it fails
job_words() { # job
    key 3
    sleep 1
    screen
    printf '%s\n' "$SCREEN" | sed 's/^/    jobs| /' >&2
    key 1
}
check "copy: runs as a job and ends verified" eval 'wait_for "copy    done" 200 || { job_words copy; false; }'
check "copy: its result line" wait_for "worker: EXL3 bank files" 20

# --- the mouse wheel scrolls a log, and only a log ------------------------------
screen
frow=$(row_of "fabric (RoCE)")
mouse 64 6 $((frow + 1))
check "wheel: over the fabric pane no log scrolls" eval '! wait_for PAUSED 10 2>/dev/null'
lrow=$(row_of "log r0 head")
mouse 64 6 $((lrow + 2))
check "wheel: up over rank 0's log pauses it" wait_for "PAUSED"
mouse 65 6 $((lrow + 2))
mouse 65 6 $((lrow + 2)) # twice: a line or two may arrive meanwhile
check "wheel: down to the newest line follows again" gone_within "PAUSED" 20

# --- focus and zoom ---------------------------------------------------------------
key 1
key z
check "zoom: the focused log fills the screen" wait_for "log r0 head"
check "zoom: the other panes are gone" gone_within "fabric (RoCE)" 20
key z
check "zoom: z again gives the panes back" wait_for "fabric (RoCE)"
key Tab
key z
check "focus: Tab moved to the worker's log (zoomed now)" wait_for "log r1 worker"
check "focus: the head's log is not shown" gone_within "log r0 head" 20
key z
wait_for "fabric (RoCE)" >/dev/null
key BTab

# --- bench and gates run as jobs, and a running job can be cancelled ---------------
key b
check "bench: runs as a job" wait_for "bench   running" 100
key c
check "cancel: asks first" wait_for "Cancel the running bench job? (y/N)"
key y
check "cancel: the bench job is cancelled" wait_for "bench   cancelled" 100
key g
check "gates: runs as a job" wait_for "gates   running" 100
key c
wait_for "(y/N)" >/dev/null
key y
check "cancel: the gates job is cancelled" wait_for "gates   cancelled" 100

# --- search in the log -----------------------------------------------------------
key 2
check "tab 2: the logs fill the screen" wait_for "log r1 worker"
key /
key -l "startup"
key Enter
check "search: pauses the log at the match" wait_for "PAUSED"
key f
check "follow: back to the newest line" gone_within "PAUSED" 20
key e
check "next error: none in a clean log says so" wait_for "no older match"
key 1

# --- the worker's log across its sshd's restart: the followed log (through the
# worker's engine socket, lib.sh's WORKER_RUNTIME_SOCKET) is asked again on the new
# session, and lines the rank writes after it show ----------------------------------
say_r1() { on_host worker podman exec dsv41-r1 sh -c "echo $1 > /proc/1/fd/1"; }
key 2
wait_for "log r1 worker" >/dev/null
say_r1 BEFORE-SSHD-RESTART
check "worker's log: a line its rank writes shows" wait_for "BEFORE-SSHD-RESTART" 100
"$IT_ROOT/tests/it/hosts.sh" stop-sshd worker
"$IT_ROOT/tests/it/hosts.sh" start-sshd worker
say_r1 AFTER-SSHD-RESTART
check "worker's log: a line written after its sshd restarted shows" wait_for "AFTER-SSHD-RESTART" 300 ||
    { screen; printf '%s\n' "$SCREEN" | tail -12 | sed 's/^/#   /'; }
key 1

# --- a rank restart re-attaches, hostile log bytes stay inert --------------------
{
    seq -f 'flood line %g' 1 10000
    head -c 1048576 /dev/zero | tr '\0' 'x'; printf '\n'
    printf 'ESC-CLEAR\033[2J\033[H clear-and-home\n'
    printf 'TITLE \033]0;evil-title\007 after-title\n'
    printf 'COLOUR \033[31;1mred\033[0m plain \033[5;10H moved\n'
    printf 'BADUTF8 \xff\xfe\xc0\xaf end\n'
    printf 'BIDI \xe2\x80\xaereversed\n'
    printf 'END-OF-INJECTION\n'
} > "$INJECT"
key R
check "restart: asks first" wait_for "Restart the deployment"
key y
check "restart: the log re-attaches to the new rank" wait_for "END-OF-INJECTION" 900
screen
# (a banner may hold row 1 for a moment: a guard restarted with the ranks)
check "injection: the header still on row 1" header_on_row1
check "injection: no log text on the last row" eval \
    '[ -n "$(row $H | tr -d " ")" ] && ! row $H | grep -Eq "flood|xxxx|clear-and-home|moved|after-title|BADUTF8|BIDI|END-OF"'
# a message (restart done, the guard retaken) holds the status line for 15 s;
# after it the key hints must be back on the last row, untouched by the log
check "injection: the status line still on the last row" row_shows $H "s start" 250
check "injection: no title set by the log" eval '[ "$(tm display -p -t "$T" "#{pane_title}")" != "evil-title" ]'
key 2
check "injection: the flood is in the log" wait_for "flood line 10000" 100
key /
key -l "after-title"
key Enter
check "injection: the OSC line shows as text" wait_for "TITLE  after-title"
key /
key -l "BADUTF8"
key Enter
check "injection: invalid UTF-8 as '?'" wait_for "BADUTF8 ???? end"
check "injection: responsive after 10,000 lines and a 1 MB line" eval 'key 3; wait_for "messages" 20'
key 1

# --- stop with confirmation --------------------------------------------------------
key S
check "stop: asks first" wait_for "remove the ranks on every node? (y/N)"
key n
check "stop: 'n' cancels" wait_for "cancelled"
check "stop: the ranks still run" eval '[ -n "$(on_host head podman ps -q --filter name=dsv41-r0)" ]'
key S
wait_for "(y/N)" >/dev/null
key y
check "stop: a stop job" wait_for "stop    done" 600
check "stop: the API goes down" wait_for "API down" 300
check "stop: the ranks are gone" eval '[ -z "$(on_host head podman ps -aq --filter name=dsv41-r0)" ]'

# --- the memory guards -----------------------------------------------------------
LOCK=$IT_DIR/head/state/guard.spark-head.lock
check "guard: with no daemon the console holds the head's lock" \
    eval 'for i in $(seq 150); do grep -q console "$LOCK" && break; sleep 0.1; done; grep -q console "$LOCK"'
key s
check "relaunch: the API is up again" wait_for "API up" 600
check "guard: launch asked the console to let go; a daemon guards the head" \
    eval 'sleep 1; ! grep -q console "$LOCK" && top_head guard --status >/dev/null'
check "guard: the console still runs" wait_for "guard ok"
top_head guard --stop >/dev/null 2>&1
check "guard: the console guards the head again once the daemon is gone" \
    eval 'for i in $(seq 150); do grep -q console "$LOCK" && break; sleep 0.1; done; grep -q console "$LOCK"'
key q
check "guard: on quit with ranks running, a daemon takes over" \
    wait_for "handing the memory guard over to a daemon"
check "guard: the head is guarded after the console exits" eval 'sleep 1; top_head guard --status >/dev/null'
# a guard that fires on the worker: the console stops the head's rank too
start_console --interval 0.5
wait_for "API up" 300 >/dev/null
G=$IT_DIR/worker/state/bin/dsv41-guard
# a hung guard (stopped, heartbeat ageing) where ranks run is an alarm
GP=$(head -1 "$IT_DIR/worker/state/guard.spark-worker.lock" | cut -d' ' -f1)
kill -STOP "$GP"
check "guard hangs: a stale heartbeat raises the alarm" wait_for "ALARM: worker has ranks but its memory guard is STALE" 300
kill -CONT "$GP"
check "guard hangs: the alarm ends with fresh heartbeats" gone_within "ALARM: worker has ranks" 100
check "guard hangs: the console says the guard is back" wait_for "memory guard is back" 50
on_host worker "$G" --state-dir "$IT_DIR/worker/state" --stop >/dev/null 2>&1
on_host worker "$G" --state-dir "$IT_DIR/worker/state" --runtime podman --ranks 2 --floor 100000 \
    --proc-root /proc --daemon >/dev/null 2>&1
check "guard fires: the banner says where" wait_for "MEMORY GUARD FIRED on worker" 300
key 3
check "guard fires: the console says it stops the other ranks" wait_for "stopping the ranks on the other nodes" 100
key 1
check "guard fires: the head's rank is gone" eval \
    'for i in $(seq 300); do [ -z "$(ct_ids head all)" ] && break; sleep 0.1; done; [ -z "$(ct_ids head all)" ]'
on_host worker "$G" --state-dir "$IT_DIR/worker/state" --stop >/dev/null 2>&1
check "guard fires: the stop job ends" wait_for "stop    done" 600

# --- resize ----------------------------------------------------------------------
tm resize-window -t "$T" -x 70 -y 20
check "resize: too small says so" wait_for "terminal too small: 70x20"
tm resize-window -t "$T" -x 100 -y 30
check "resize: back to the panes" wait_for "fabric (RoCE)"
screen
check "resize: the header on row 1, the status line on row 30" eval \
    'header_on_row1 && [ -n "$(row 30 | tr -d " ")" ] && [ -z "$(row 31)" ]'

# --- quit ------------------------------------------------------------------------
key q
check "quit: the console exits cleanly" wait_for "console exited rc=0"
check "quit: no console process left" eval '[ -z "$(pgrep_in_ns head "dsv41-top --interval")" ]'

# --- three nodes: a column each ---------------------------------------------------
start_console WORKERS=worker,worker2 --interval 0.5
check "3 nodes: the header counts them" wait_for "dsv41-top | 3 nodes"
check "3 nodes: worker2's column" wait_for "worker2 up"
check "3 nodes: worker2 in the fabric pane" wait_for "worker2  rocep"
key Tab
key r
check "3 nodes: r shows rank 2 in the focused log pane" wait_for "log r2 worker2"
key q
wait_for "console exited" >/dev/null

# --- mouse: a click focuses a pane ------------------------------------------------
start_console --mouse --interval 0.5
wait_for "fabric (RoCE)" >/dev/null
screen
frow=$(row_of "fabric (RoCE)")
mouse 0 6 $((frow + 1)) # press
mouse 3 6 $((frow + 1)) # release
sleep 0.3
key z
check "mouse: a click on the fabric pane focuses it (z zooms it)" gone_within "log r0 head" 30
check "mouse: the zoomed pane is the fabric" wait_for "fabric (RoCE)"
key q
wait_for "console exited" >/dev/null

# --- the checkpoint download: its pane, d starts it, c cancels, d resumes ----------
# dsv41-sim's hub in the head's namespace, each connection held to 100 kB/s
# (~850 kB/s over the download's connections: 43 MB last ~50 s) so that the
# cancel lands while it runs; into a directory of its own.
DLD=$IT_DIR/dl-model
HUBROOT=$IT_DIR/hub
on_jobs_tab() { # text [tenths]: shown on the jobs tab (then back to the overview)
    local r
    key 3
    wait_for "$1" "${2:-50}"
    r=$?
    key 1
    return $r
}
rm -rf "$DLD" "$HUBROOT"
mkdir -p "$DLD"
HC=$("$IT_ROOT/tests/hub/mkrepo.sh" "$HUBROOT" 8 1)
HUBP=$(test_ports)
# (a run at 150 kB/s was done before the cancel on a quiet machine)
on_host head env DSV41_HUB_FAULTS=rate=100000 "$SIM" hub --root "$HUBROOT" \
    --repo 0xSero/DeepSeek-V4.1-Flash-Spark --port "$HUBP" > "$IT_DIR/hub.log" 2>&1 &
HUBPID=$!
start_console HF_ENDPOINT=http://127.0.0.1:$HUBP HF_TOKEN_PATH=/nonexistent MODEL_DIR=$DLD \
    --interval 0.5
check "download: no pane before there is a download" eval 'wait_for "fabric (RoCE)" && case $SCREEN in *"download "*) false ;; esac'
key d
check "download: d asks first" wait_for "Download the checkpoint from the hub into MODEL_DIR? (y/N)"
key y
check "download: the pane, running, with the commit" wait_for "download running (pid" 100
check "download: the commit it pinned" wait_for "@ ${HC:0:12}" 20
check "download: the bar and the rate" wait_for " MB/s  ETA " 100
check "download: a job in the jobs tab" on_jobs_tab "download running"
# cancelled early, so that most of it is left for the resume, where the rest is checked
key c
wait_for "Cancel the running download job? (y/N)" >/dev/null
key y
check "cancel: the job is cancelled" on_jobs_tab "download cancelled" 100
check "cancel: the pane says it is unfinished and resumable" wait_for "download unfinished: d resumes it" 50
check "cancel: stopped, no rate" contains "$SCREEN" "stopped"
# the resume paced slower still (the hub started again): what is left lasts many
# of the pane's refreshes however much landed before the cancel, so a file
# verified while it runs is on the screen long enough to be seen
kill "$HUBPID" 2>/dev/null
wait "$HUBPID" 2>/dev/null
on_host head env DSV41_HUB_FAULTS=rate=40000 "$SIM" hub --root "$HUBROOT" \
    --repo 0xSero/DeepSeek-V4.1-Flash-Spark --port "$HUBP" > "$IT_DIR/hub.log" 2>&1 &
HUBPID=$!
for _ in $(seq 100); do on_host head curl -sf -o /dev/null "http://127.0.0.1:$HUBP/_stats" && break; sleep 0.1; done
key d
check "resume: d says it resumes" wait_for "Resume the download of the checkpoint" 50
key y
check "resume: running again" wait_for "download running (pid" 100
check "download: a split shard written in place" wait_for "in place from 3 parts" 1200
check "resume: files verified as they land" wait_for "verified  model-0000" 600
check "resume: the pane goes when every file is verified" gone_within "download running (pid" 1800
check "resume: the job ends done" on_jobs_tab "download done"
check "resume: the files are the hub's" eval '(cd "$DLD" && sha256sum -c --quiet sha256-manifest.txt) && cmp -s "$DLD/config.json" "$HUBROOT/revs/$HC/config.json"'
key q
wait_for "console exited" >/dev/null
kill "$HUBPID" 2>/dev/null
wait "$HUBPID" 2>/dev/null

# --- read-only, ASCII, no colour --------------------------------------------------
start_console --readonly --ascii --no-color
check "readonly: starts" wait_for "read-only"
key s
check "readonly: start refused" wait_for "read-only console (--readonly)"
check "ascii: no braille or block glyphs" eval '! printf "%s" "$SCREEN" | grep -q "[⣿▏░█]"'
key q
check "readonly: quits" wait_for "console exited rc=0"

# --- over ssh, as `ssh -t head dsv41-top` from a laptop ---------------------------
mkdir -p "$IT_DIR/worker/state-ssh"
new_session "$(printf '%q ' nsenter --net=/run/netns/$NS_HEAD \
    ssh -t -F "$IT_DIR/ssh_config" -o UserKnownHostsFile="$IT_DIR/known_hosts" -o BatchMode=yes \
    worker "env TERM=tmux-256color LANG=C.UTF-8 STATE_DIR=$IT_DIR/worker/state-ssh $BIN --readonly --title over-ssh; echo ssh-console-exit \$?"); sleep 600"
check "over ssh: the console draws through a remote pty" wait_for "over-ssh |"
check "over ssh: the node it runs on" wait_for "avail "
tm resize-window -t "$T" -x 70 -y 20
check "over ssh: a resize reaches it (SIGWINCH through ssh)" wait_for "terminal too small: 70x20"
tm resize-window -t "$T" -x $W -y $H
check "over ssh: and back" wait_for "over-ssh |"
key q
check "over ssh: quits cleanly" wait_for "ssh-console-exit 0"

# --- a malformed theme names its file and line ----------------------------------
mkdir -p "$IT_DIR/home/.config/dsv41-top/themes"
printf 'normal = default, default\ntitle = purple, default\n' > "$IT_DIR/home/.config/dsv41-top/themes/broken.theme"
start_console --theme broken
check "theme: a bad line is named" wait_for "broken.theme:2: 'purple' is not a colour"
check "theme: the console refuses to start" wait_for "console exited rc=2"
start_console --theme light
check "theme: another theme starts" wait_for "dsv41-top | 2 nodes"
key T
check "theme: T cycles to the next theme" wait_for "theme mono"
key q
wait_for "console exited" >/dev/null

# --- console.log cannot be written: the engine's messages never reach the screen -------
mv "$IT_DIR/head/state/console.log" "$IT_DIR/head/state/console.log.kept" 2>/dev/null
mkdir -p "$IT_DIR/head/state/console.log" # a directory: open() fails
start_console
wait_for "dsv41-top | 2 nodes" >/dev/null
key 3
check "console.log unwritable: said in the messages, not drawn over" wait_for "cannot write $IT_DIR/head/state/console.log"
key q
wait_for "console exited" >/dev/null
rmdir "$IT_DIR/head/state/console.log"
mv "$IT_DIR/head/state/console.log.kept" "$IT_DIR/head/state/console.log" 2>/dev/null

summary
