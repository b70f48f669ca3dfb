#!/bin/bash
# The GPU through NVML (src/nodes/nvml.c) with the stand-in library where no
# driver is: its lines are what nvidia-smi printed on the H200 and what a
# GB10 prints (the fixtures), and `status` takes its GPU from NVML without
# starting nvidia-smi, which stays the fallback when the library does not
# open. The real library was checked on the device tool's H200
# (tests/bench/device_nvml.sh; the captures are in tests/fixtures/nvidia-smi).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/it/lib.sh"
TOP=${DSV41_BIN:-$root/build/dsv41-top}
PROBE=$root/build/tests/nvml-probe
LIB=$root/build/tests/libnvml-standin.so
FIX=$root/tests/fixtures/nvidia-smi
T=$(mktemp -d /tmp/dsv41-nvml-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T XDG_CONFIG_HOME=$T
unset WORKER WORKERS
probe() { DSV41_NVML_LIB=$LIB DSV41_NVML_STANDIN=$1 "$PROBE" --csv; }

out=$(probe h200); rc=$?
check "h200: the GPU line is the one the real library gave on the H200 under load" \
    eval '[ $rc = 0 ] && [ "$(printf "%s\n" "$out" | head -1)" = "$(head -1 "$FIX/h200-nvml-load.csv")" ]'
check "h200: the compute process as nvidia-smi names it" \
    eval 'printf "%s\n" "$out" | grep -qxE "GPU-f0f9f763-1b99-6737-76cb-3fd72b1216d3, [0-9]+, $PROBE, 8710"'
check "h200: the driver's version from nvmlSystemGetDriverVersion (alike's where sysfs has none)" \
    eval 'printf "%s\n" "$out" | grep -A1 -x "== driver" | tail -1 | grep -qx 580.159.04'
out=$(probe gb10); rc=$?
check "gb10: memory and the power limit [N/A], as the GB10 fixture" \
    eval '[ $rc = 0 ] && [ "$(printf "%s\n" "$out" | head -1)" = "$(cat "$FIX/gb10-query-gpu.csv")" ]'
check "gb10: a process without a memory figure reads [N/A]" \
    eval 'printf "%s\n" "$out" | grep -qE "^GPU-5a1c3e2f-[-0-9a-f]+, [0-9]+, .*, \[N/A\]$"'
out=$(probe many)
check "more processes than the first call has room for: all 100" \
    [ "$(printf "%s\n" "$out" | grep -c '^GPU-')" = 100 ]
out=$(probe down 2>&1); rc=$?
check "no driver loaded: said, exit 2" eval '[ $rc = 2 ] && contains "$out" "nvmlInit: Driver Not Loaded"'
out=$(DSV41_NVML_LIB=$T/none.so "$PROBE" --csv 2>&1); rc=$?
check "no library: said, exit 2" eval '[ $rc = 2 ] && contains "$out" "none.so: cannot open shared object file"'

# status: NVML in the process, no nvidia-smi started; a stand-in nvidia-smi
# on PATH says when it runs and prints the H200's capture
mkdir -p "$T/bin"
cat > "$T/bin/nvidia-smi" <<EOS
#!/bin/sh
echo "\$*" >> "$T/smi-ran"
case "\$1" in --query-gpu=*) cat "$FIX/h200-smi-idle.csv" ;; esac
EOS
chmod 0755 "$T/bin/nvidia-smi"
export PATH=$T/bin:$PATH
js=$(DSV41_NVML_LIB=$LIB DSV41_NVML_STANDIN=h200 "$TOP" --set STATE_DIR="$T/s" status --json 2>/dev/null)
check "status: the GPU through NVML" eval \
    'jq_is "$js" ".nodes[0].gpu[0].util_pct" 100 && jq_is "$js" ".nodes[0].gpu[0].mem_used_mib" 8719 && jq_is "$js" ".nodes[0].gpu[0].procs[0].used_mib" 8710'
# (the nodes-alike check may still ask nvidia-smi for the driver version
# where sysfs has none: once per status, not per sample)
check "status: nvidia-smi not started for the GPU sample" eval \
    '! grep -qE -- "--query-gpu=index|--query-compute-apps" "$T/smi-ran" 2>/dev/null'
js=$(DSV41_NVML_LIB=$T/none.so "$TOP" --set STATE_DIR="$T/s" status --json 2>/dev/null)
check "status without the library: nvidia-smi, as before" eval \
    'jq_is "$js" ".nodes[0].gpu[0].power_w" 80.64 && [ -s "$T/smi-ran" ]'
js=$(DSV41_NVML_LIB=$LIB DSV41_NVML_STANDIN=gb10 "$TOP" --set STATE_DIR="$T/s" status --json 2>/dev/null)
check "status on a GB10: memory n/a, not 0" eval \
    'jq_is "$js" ".nodes[0].gpu[0].mem_used_mib" null && jq_is "$js" ".nodes[0].gpu[0].temp_c" 48'
summary
