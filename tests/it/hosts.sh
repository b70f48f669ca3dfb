#!/bin/bash
# Builds (up) or removes (down) the two test hosts: network namespaces head
# and worker joined by a veth pair named like a Spark's fabric port, sshd in
# the worker with throwaway keys, per-host podman storage, the simulator
# image in both, and podman's API service on the head. `down` removes
# everything, also after a failed run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# useradd and userdel refuse to run while another holds /etc/passwd's lock:
# sets of hosts built side by side take turns
accounts() { # useradd|userdel args...
    flock /run/dsv41-it-accounts.lock "$@"
}

down() {
    set +e
    for h in $HOSTS; do
        [ -f "$IT_DIR/$h/containers.conf" ] || continue
        # the containers only: the images and layers go with the folder below
        # (a prune per host was ~0.2 s of CPU, three per job, forty jobs a run)
        on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1
    done
    stop_sshd worker
    stop_sshd worker2
    # the worker account whose login shell is fish (an alias of root: podman)
    grep -q "^$FISH_USER:" /etc/passwd && accounts userdel -f "$FISH_USER" >/dev/null 2>&1
    for ns in $(for h in $HOSTS; do echo "$NS_PREFIX$h"; done); do
        if ip netns list | grep -qw "$ns"; then
            # anything still inside (a stray simulator) goes with it
            for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
            ip netns del "$ns"
        fi
    done
    # podman's overlay mounts must go before the files
    grep " $IT_DIR/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null
    rm -rf "$IT_DIR"
    set -e
}

storage_conf() { # host
    local d=$IT_DIR/$1
    mkdir -p "$d/storage" "$d/run" "$d/tmp" "$d/state"
    cat > "$d/storage.conf" <<EOC
[storage]
driver = "overlay"
graphroot = "$d/storage"
runroot = "$d/run"
EOC
    cat > "$d/containers.conf" <<EOC
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"
tmp_dir = "$d/tmp"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOC
    # the test registry on the head (test_accept starts it) speaks plain HTTP
    cat > "$d/registries.conf" <<EOC
[[registry]]
location = "$HEAD_IP:5000"
insecure = true
EOC
}

# A rootfs shaped like the real image's: the simulator as `vllm` (it takes
# `vllm serve ...` as vLLM does) and a /bin/sh (rank 0 reads its key file
# through it), with the libraries they link; imported as an image: no
# registry, no base image, no entrypoint.
build_image() {
    local rootfs=$IT_DIR/rootfs bin lib
    rm -rf "$rootfs"
    mkdir -p "$rootfs/usr/local/bin" "$rootfs/bin" "$rootfs/tmp" "$rootfs/model" "$rootfs/etc"
    cp "$SIM" "$rootfs/usr/local/bin/dsv41-sim"
    ln -s dsv41-sim "$rootfs/usr/local/bin/vllm"
    cp /bin/dash "$rootfs/bin/sh"
    for bin in "$SIM" /bin/dash; do
        for lib in $(ldd "$bin" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}'); do
            mkdir -p "$rootfs$(dirname "$lib")"
            cp -L "$lib" "$rootfs$lib"
        done
    done
    echo "root:x:0:0:root:/root:/bin/sh" > "$rootfs/etc/passwd"
    tar -C "$rootfs" -c . > "$IT_DIR/rootfs.tar"
    for h in $HOSTS; do
        on_host "$h" podman import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
            "$IT_DIR/rootfs.tar" "$SIM_IMAGE" >"$IT_DIR/import.log" 2>&1 ||
            { cat "$IT_DIR/import.log" >&2; return 1; }
    done
}

# SHLVL=1 in each session: bash then counts itself a nested shell and skips
# ~/.bashrc for a command run over ssh (Debian's bash sources it for sshd's
# top-level shells). The test worker logs in as this machine's root, whose
# .bashrc runs `pyenv init` with no interactive guard: ~0.8 s of CPU for every
# exec, most of make test's load with several slots at once (a Spark's account
# has Ubuntu's .bashrc, which returns at once when not interactive). What a
# costly login shell does to us is #32's to measure, not every test's to pay.
sshd_conf() { # host address
    cat > "$IT_DIR/sshd_config.$1" <<EOC
ListenAddress $2
Port 22
HostKey $IT_DIR/ssh_host_ecdsa_key
HostKey $IT_DIR/ssh_host_ed25519_key
PidFile $IT_DIR/sshd.$1.pid
AuthorizedKeysFile $IT_DIR/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
SetEnv SHLVL=1 PATH=$IT_DIR/bin:/usr/sbin:/usr/bin:/sbin:/bin CONTAINERS_CONF=$IT_DIR/$1/containers.conf CONTAINERS_STORAGE_CONF=$IT_DIR/$1/storage.conf CONTAINERS_REGISTRIES_CONF=$IT_DIR/$1/registries.conf
EOC
}

up() {
    down >/dev/null 2>&1 || true
    mkdir -p "$IT_DIR/home/.ssh" "$IT_DIR/bin"
    chmod 700 "$IT_DIR/home/.ssh"
    # one L2 segment: a bridge on the head named like a Spark's fabric port,
    # a veth to each worker whose end carries the same name
    for h in $HOSTS; do ip netns add "$NS_PREFIX$h"; ip -n "$NS_PREFIX$h" link set lo up; done
    ip -n "$NS_HEAD" link add "$FABRIC_IF" type bridge
    ip -n "$NS_HEAD" addr add "$HEAD_IP/24" dev "$FABRIC_IF"
    ip -n "$NS_HEAD" link set "$FABRIC_IF" up
    local i=0 h ip
    for h in worker worker2; do
        i=$((i + 1))
        [ "$h" = worker ] && ip=$WORKER_IP || ip=$WORKER2_IP
        ip link add "port$i" netns "$NS_HEAD" type veth peer name "$FABRIC_IF" netns "$NS_PREFIX$h"
        ip -n "$NS_HEAD" link set "port$i" master "$FABRIC_IF" up
        ip -n "$NS_PREFIX$h" addr add "$ip/24" dev "$FABRIC_IF"
        ip -n "$NS_PREFIX$h" link set "$FABRIC_IF" up
    done
    for h in $HOSTS; do storage_conf "$h"; done

    # throwaway keys: the worker's host keys (it offers ECDSA too, known_hosts
    # holds ed25519 only: what `ssh` stores on first contact), our user key,
    # a wrong user key
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/ssh_host_ed25519_key" -C it-host
    ssh-keygen -q -t ecdsa -N '' -f "$IT_DIR/ssh_host_ecdsa_key" -C it-host
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/other_host_key" -C it-other
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/home/.ssh/id_ed25519" -C it-user
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/wrong_user_key" -C it-wrong
    cp "$IT_DIR/home/.ssh/id_ed25519.pub" "$IT_DIR/authorized_keys"
    chmod 600 "$IT_DIR/authorized_keys"
    local pub
    pub=$(cut -d' ' -f1,2 "$IT_DIR/ssh_host_ed25519_key.pub")
    printf '%s %s\n%s %s\n' "$WORKER_IP" "$pub" "$WORKER2_IP" "$pub" > "$IT_DIR/known_hosts"
    # more hosts through Include, as an operator's conf.d would: the worker
    # reached as an account whose shell is fish, and through a jump host
    mkdir -p "$IT_DIR/ssh_config.d"
    cat > "$IT_DIR/ssh_config.d/first-contact.conf" <<EOC
Host worker-fish
    HostName $WORKER_IP
    User $FISH_USER
    IdentityFile $IT_DIR/home/.ssh/id_ed25519
Host worker-jump
    HostName $WORKER_IP
    ProxyJump worker2
# OpenSSH's ProxyJump runs \`ssh -F this-file -W ... worker2\`: no -o options,
# and ~ is the passwd home, not \$HOME (dsv41-top reads this file too)
Host worker2
    UserKnownHostsFile $IT_DIR/known_hosts
Match originalhost worker-jump
    User root
    IdentityFile $IT_DIR/home/.ssh/id_ed25519
EOC
    accounts useradd -o -u 0 -g 0 -M -d "$IT_DIR/fishhome" -s /usr/bin/fish -p '*' "$FISH_USER"
    mkdir -p "$IT_DIR/fishhome"
    cat > "$IT_DIR/ssh_config" <<EOC
Include $IT_DIR/ssh_config.d/*.conf
Host worker
    HostName $WORKER_IP
    User root
    IdentityFile $IT_DIR/home/.ssh/id_ed25519
Host worker2
    HostName $WORKER2_IP
    User root
    IdentityFile $IT_DIR/home/.ssh/id_ed25519
EOC
    # GB10-shaped nvidia-smi for the worker: the GPU fields a Spark reports,
    # [N/A] for memory; garbage when the test asks for it.
    cat > "$IT_DIR/bin/nvidia-smi" <<EOC
#!/bin/sh
if [ -e "$IT_DIR/smi-garbage" ]; then printf '\\001\\377garbage, , ,\\n'; exit 0; fi
case "\$*" in
*compute-apps*) cat "$IT_ROOT/tests/fixtures/nvidia-smi/gb10-compute-apps.csv" ;;
*) cat "$IT_ROOT/tests/fixtures/nvidia-smi/gb10-query-gpu.csv" ;;
esac
EOC
    chmod +x "$IT_DIR/bin/nvidia-smi"
    mkdir -p /run/sshd
    sshd_conf worker "$WORKER_IP"
    sshd_conf worker2 "$WORKER2_IP"
    start_sshd worker
    start_sshd worker2
    build_image
    start_engine head
    start_engine worker
}

# podman's API service for a host, on the socket head_env's RUNTIME_SOCKET
# (the head's) or WORKER_RUNTIME_SOCKET (the worker's, reached through its
# sshd) names: the console, status and the guard ask it instead of the CLI,
# as on a node whose podman.socket is enabled. `down` takes it with the namespace.
start_engine() { # host
    local h=$1 s=$IT_DIR/$1/podman.sock
    rm -f "$s"
    on_host "$h" podman system service --time=0 "unix://$s" </dev/null >"$IT_DIR/$h/engine.log" 2>&1 &
    for _ in $(seq 100); do
        [ -S "$s" ] && curl -sf --unix-socket "$s" -o /dev/null http://d/_ping && return 0
        sleep 0.1
    done
    echo "podman's API service on $h did not start: $(cat "$IT_DIR/$h/engine.log")" >&2
    return 1
}

start_sshd() { # host (default worker)
    local h=${1:-worker}
    rm -f "$IT_DIR/sshd.$h.pid"
    nsenter --net="/run/netns/$NS_PREFIX$h" unshare --uts sh -c \
        "hostname spark-$h; exec /usr/sbin/sshd -f $IT_DIR/sshd_config.$h -E $IT_DIR/sshd.$h.log"
    for _ in $(seq 50); do [ -s "$IT_DIR/sshd.$h.pid" ] && return 0; sleep 0.1; done
    echo "sshd on $h did not start: $(cat "$IT_DIR/sshd.$h.log")" >&2
    return 1
}

stop_sshd() { # host (default worker): the listener and every session it forked
    local p left
    for _ in $(seq 50); do
        left=
        for p in $(ip netns pids "$NS_PREFIX${1:-worker}" 2>/dev/null); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] && { kill -9 "$p" 2>/dev/null; left=1; }
        done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
}

case ${1:-} in
up) up ;;
down) down ;;
start-sshd) start_sshd "${2:-worker}" ;;
stop-sshd) stop_sshd "${2:-worker}" ;;
*) echo "usage: $0 up|down|start-sshd|stop-sshd" >&2; exit 2 ;;
esac
