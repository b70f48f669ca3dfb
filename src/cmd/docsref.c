#include "docsref.h"

#include <stddef.h>

/* Besides these, every setting (dsv41-top docs settings) is read from the
 * environment by dsv41-top. */
const struct docsref_env DOCSREF_ENV[] = {
    {"DSV41_CONFIG", REF_TOP,
     "the config file to read instead of $XDG_CONFIG_HOME/dsv41-top/config (--config beats it)"},
    {"XDG_CONFIG_HOME", REF_TOP, "where the config file is looked for (default ~/.config)"},
    {"HOME", REF_TOP, "the home of ~ in settings and of the default config and STATE_DIR"},
    {"PATH", REF_TOP, "where nvidia-smi, docker or podman and rdma are found on the head"},
    {"NO_COLOR", REF_TOP, "set and not empty: the console without colour, as --no-colour"},
    {"SSH_AUTH_SOCK", REF_TOP, "the ssh agent, tried before the key files for every node"},
    {"DOCKER_HOST", REF_TOP | REF_GUARD,
     "docker's API socket (unix:///...), when RUNTIME_SOCKET (WORKER_RUNTIME_SOCKET) names none"},
    {"CONTAINER_HOST", REF_TOP | REF_GUARD,
     "podman's API socket (unix:///...), when RUNTIME_SOCKET (WORKER_RUNTIME_SOCKET) names none"},
    {"XDG_RUNTIME_DIR", REF_TOP | REF_GUARD,
     "where a rootless podman's socket is (podman/podman.sock under it)"},
    {"DSV41_NVML_LIB", REF_TOP, "the NVML library to load (default libnvidia-ml.so.1)"},
    {"PI_CODING_AGENT_DIR", REF_TOP,
     "pi --check: Pi's configuration directory (default ~/.pi/agent), as Pi reads it"},
    {"DSV41_PI_DIR", REF_TOP,
     "where the Pi files (install.sh, the provider, the extension) are, instead of "
     "PREFIX/share/dsv41-top/pi or the checkout's pi/"},
    {"DSV41_GUARD_UNIT", REF_GUARD | REF_TOP,
     "set by dsv41-guard.service: the guard says its unit in --status and its hints"},
    {"DSV41_VERIFY_IO", REF_TOP | REF_VERIFY | REF_XFER,
     "read or map: how verify's bytes reach the hash, instead of the way it measures as cheaper "
     "on this machine (read() or mmap; verify prints which)"},
    {"SSH_CONNECTION", REF_XFER, "--listen ssh: the address this ssh session came in on"},
    {NULL, 0, NULL}};

const struct docsref_file DOCSREF_FILES[] = {
    {"$XDG_CONFIG_HOME/dsv41-top/config", REF_TOP,
     "the settings, KEY=VALUE lines (read; dsv41-top config shows them)"},
    {"STATE_DIR/api_key", REF_TOP,
     "the API key rank 0 requires (API_KEY_FILE), mode 0600; made once by launch, rotated by "
     "key --rotate"},
    {"STATE_DIR/dsv41-rN.env", REF_TOP,
     "rank N's environment file on its node (mode 0600; launch), the key never in it"},
    {"STATE_DIR/plans/", REF_TOP, "the EXL3 plan as the ranks' container sees it (launch)"},
    {"STATE_DIR/budget.json", REF_TOP,
     "what the ranks really took at past launches (graphs, KV), which the next budget starts "
     "from"},
    {"STATE_DIR/bin/", REF_TOP,
     "the static helpers (dsv41-guard, dsv41-verify, dsv41-xfer) pushed to a worker"},
    {"STATE_DIR/memguard.log", REF_GUARD, "the memory guard's log: warnings, FIRED, its kills"},
    {"STATE_DIR/guard.HOST.lock", REF_GUARD,
     "one guard per node (HOST: its hostname): the holder's PID, start time and boot"},
    {"STATE_DIR/guard.HOST.heartbeat", REF_GUARD,
     "the guard's last sample, rewritten each second (guard --status reads it)"},
    {"STATE_DIR/console.log", REF_TOP,
     "what the console's own code writes to stderr while the screen is up"},
    {"STATE_DIR/bench/", REF_TOP,
     "bench results, bench-DATE.json (b, or bench without --out; the jobs tab shows the "
     "newest)"},
    {"STATE_DIR/bench/history.jsonl", REF_TOP,
     "every bench run of this deployment: time, label, image, digest, vLLM's version, the "
     "configuration's hash, the figures (bench --history)"},
    {"STATE_DIR/bench/baseline.json", REF_TOP,
     "the accepted image's bench, which a newer run of the same configuration is held to "
     "(ACCEPT_BENCH_TOL)"},
    {"STATE_DIR/gates/", REF_TOP, "the console's gates evidence, gates-DATE.json (g)"},
    {"STATE_DIR/accept/", REF_TOP,
     "accept's history: accepted (the accepted image), baseline (a link to the run whose "
     "evidence is the baseline), images.tsv (image ids and the references they were pulled "
     "by: the console names a rank's image by it), and TIME-DIGEST12/ per run: report.md, "
     "report.json, gates.json, bench.json, drift.tsv"},
    {"STATE_DIR/incidents/", REF_TOP,
     "the evidence kept when a guard fired, the engine wedged or a rank exited (console, "
     "watch)"},
    {"STATE_DIR/supervise.tsv", REF_TOP,
     "what the supervisor did (SUPERVISE=1 in watch): a line per relaunch, stop or give-up, "
     "with its cause (status, the exporter)"},
    {"STATE_DIR/copy-progress", REF_TOP,
     "a running copy-to-peer's bytes landed and to land, rewritten each second (the "
     "exporter)"},
    {"UNIT_DIR/dsv41-guard.service", REF_TOP,
     "the guard's systemd unit on every node (launch --install-units, doctor --fix)"},
    {"MODEL_DIR/sha256-manifest.txt", REF_TOP,
     "the checkpoint's sha256 manifest, from the repository (download; verify, assemble and "
     "copy-to-peer check against it)"},
    {"MODEL_DIR/exl3/", REF_TOP,
     "the checkpoint's EXL3 banks and plans (PLAN_NAME under exl3/plan/), as downloaded"},
    {"MODEL_DIR/.dsv41-download.json", REF_TOP,
     "what download fetched and verified, with the hub's sums (resume, copy-to-peer)"},
    {"MODEL_DIR/.dsv41-download.lock", REF_TOP, "one download per directory"},
    {"MODEL_DIR/.dsv41-assemble.json", REF_TOP, "the shards assemble rebuilt (resume)"},
    {"WORKER_MODEL_DIR/.dsv41-copy.live", REF_XFER,
     "the ranges of a copy that landed, each second (resume after a kill)"},
    {"WORKER_MODEL_DIR/.dsv41-copy.state", REF_XFER,
     "the ranges that reached the disk, every 5 s (resume after a power cut)"},
    {"WORKER_MODEL_DIR/.dsv41-copy.lock", REF_XFER, "one copy per directory"},
    {"gates-DATE.json", REF_TOP, "gates' evidence in the current directory (--out FILE)"},
    {NULL, 0, NULL}};
