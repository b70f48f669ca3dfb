#!/bin/bash
# Builds (up) or removes (down) the two test hosts: network namespaces head
# and worker joined by a veth pair named like a Spark's fabric port, sshd in
# the worker with throwaway keys, per-host podman storage, and the simulator
# image in both. `down` removes everything, also after a failed run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

down() {
    set +e
    for h in head worker; do
        [ -f "$IT_DIR/$h/containers.conf" ] || continue
        on_host "$h" podman rm -f -a -t 0 >/dev/null 2>&1
        on_host "$h" podman system prune -a -f >/dev/null 2>&1
    done
    [ -f "$IT_DIR/sshd.pid" ] && kill "$(cat "$IT_DIR/sshd.pid")" 2>/dev/null
    stop_sshd
    for ns in "$NS_HEAD" "$NS_WORKER"; do
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
}

# A rootfs with the simulator and the libraries it links, imported as an
# image: no registry, no base image.
build_image() {
    local rootfs=$IT_DIR/rootfs
    rm -rf "$rootfs"
    mkdir -p "$rootfs/usr/local/bin" "$rootfs/tmp" "$rootfs/model" "$rootfs/etc"
    cp "$SIM" "$rootfs/usr/local/bin/dsv41-sim"
    for lib in $(ldd "$SIM" | awk '/=>/ {print $3} /^\t\/lib/ {print $1}'); do
        mkdir -p "$rootfs$(dirname "$lib")"
        cp -L "$lib" "$rootfs$lib"
    done
    echo "root:x:0:0:root:/root:/bin/sh" > "$rootfs/etc/passwd"
    tar -C "$rootfs" -c . > "$IT_DIR/rootfs.tar"
    for h in head worker; do
        on_host "$h" podman import --change 'ENTRYPOINT ["/usr/local/bin/dsv41-sim"]' \
            "$IT_DIR/rootfs.tar" "$SIM_IMAGE" >"$IT_DIR/import.log" 2>&1 ||
            { cat "$IT_DIR/import.log" >&2; return 1; }
    done
}

up() {
    down >/dev/null 2>&1 || true
    mkdir -p "$IT_DIR/home/.ssh" "$IT_DIR/bin"
    chmod 700 "$IT_DIR/home/.ssh"
    ip netns add "$NS_HEAD"
    ip netns add "$NS_WORKER"
    ip link add "$FABRIC_IF" netns "$NS_HEAD" type veth peer name "$FABRIC_IF" netns "$NS_WORKER"
    ip -n "$NS_HEAD" addr add "$HEAD_IP/24" dev "$FABRIC_IF"
    ip -n "$NS_WORKER" addr add "$WORKER_IP/24" dev "$FABRIC_IF"
    for ns in "$NS_HEAD" "$NS_WORKER"; do
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "$FABRIC_IF" up
    done
    storage_conf head
    storage_conf worker

    # throwaway keys: the worker's host key, our user key, a wrong user key
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/ssh_host_ed25519_key" -C it-host
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/other_host_key" -C it-other
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/home/.ssh/id_ed25519" -C it-user
    ssh-keygen -q -t ed25519 -N '' -f "$IT_DIR/wrong_user_key" -C it-wrong
    cp "$IT_DIR/home/.ssh/id_ed25519.pub" "$IT_DIR/authorized_keys"
    chmod 600 "$IT_DIR/authorized_keys"
    echo "$WORKER_IP $(cut -d' ' -f1,2 "$IT_DIR/ssh_host_ed25519_key.pub")" > "$IT_DIR/known_hosts"
    cat > "$IT_DIR/ssh_config" <<EOC
Host worker
    HostName $WORKER_IP
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
    cat > "$IT_DIR/sshd_config" <<EOC
ListenAddress $WORKER_IP
Port 22
HostKey $IT_DIR/ssh_host_ed25519_key
PidFile $IT_DIR/sshd.pid
AuthorizedKeysFile $IT_DIR/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
SetEnv PATH=$IT_DIR/bin:/usr/sbin:/usr/bin:/sbin:/bin CONTAINERS_CONF=$IT_DIR/worker/containers.conf CONTAINERS_STORAGE_CONF=$IT_DIR/worker/storage.conf
EOC
    start_sshd
    build_image
}

start_sshd() {
    rm -f "$IT_DIR/sshd.pid"
    nsenter --net="/run/netns/$NS_WORKER" unshare --uts sh -c \
        "hostname spark-worker; exec /usr/sbin/sshd -f $IT_DIR/sshd_config -E $IT_DIR/sshd.log"
    for _ in $(seq 50); do [ -s "$IT_DIR/sshd.pid" ] && return 0; sleep 0.1; done
    echo "sshd did not start: $(cat "$IT_DIR/sshd.log")" >&2
    return 1
}

stop_sshd() { # kills the listener and every session it forked
    local p left
    for _ in $(seq 50); do
        left=
        for p in $(ip netns pids "$NS_WORKER" 2>/dev/null); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sshd ] && { kill -9 "$p" 2>/dev/null; left=1; }
        done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
}

case ${1:-} in
up) up ;;
down) down ;;
start-sshd) start_sshd ;;
stop-sshd) stop_sshd ;;
*) echo "usage: $0 up|down|start-sshd|stop-sshd" >&2; exit 2 ;;
esac
