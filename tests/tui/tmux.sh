# Driving a program on a tmux screen, for the console's tests: the caller sets
# T (the session and server name), W and H (its size) and reads SCREEN.
# A private tmux server: other tmux users on the machine cannot disturb it.
tm() { tmux -L "$T" "$@"; }
# Starts a session running a command. Killing the last session makes the
# server exit, and a new-session racing that exit fails ("server exited
# unexpectedly"): try again until a server takes it.
new_session() { # command
    local i
    tm kill-session -t "$T" 2>/dev/null
    for i in $(seq 50); do
        tm new-session -d -s "$T" -x $W -y $H "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "    tmux would not start a session" >&2
    return 1
}
screen() { SCREEN=$(tm capture-pane -p -t "$T" 2>/dev/null); }
# Waits until the screen shows text (up to N tenths of a second).
wait_for() { # text [tenths]
    local i
    for i in $(seq "${2:-200}"); do
        screen
        case $SCREEN in *"$1"*) return 0 ;; esac
        sleep 0.1
    done
    echo "    screen never showed: $1" >&2
    printf '%s\n' "$SCREEN" | sed 's/^/    | /' >&2
    return 1
}
# Waits until the screen no longer shows text.
gone_within() { # text tenths
    local i
    for i in $(seq "$2"); do
        screen
        case $SCREEN in *"$1"*) sleep 0.1 ;; *) return 0 ;; esac
    done
    return 1
}
key() { tm send-keys -t "$T" "$@"; }
