#!/bin/bash
# NVML beside nvidia-smi on a machine with an NVIDIA driver (the device
# tool's H200 host): the same fields at the same moment, idle and while
# gpu-load keeps the GPU busy with a compute process, and what one sample
# costs each way. Writes the NVML captures into $OUT (fixtures).
set -u
out=${OUT:-/tmp/dsv41-device}
mkdir -p "$out"
exec > >(tee "$out/device_nvml.txt") 2>&1
cc=${CC:-gcc}
echo "== driver: $(cat /sys/module/nvidia/version 2>&1), $(nproc) cores"
$cc -O2 -std=c17 -D_GNU_SOURCE -Isrc/util -Isrc/container -Isrc/nodes -o /tmp/nvml-probe tests/nvml/nvml_probe.c \
    src/nodes/nvml.c src/nodes/probe.c src/util/buf.c src/util/text.c -lm -pthread || exit 1
$cc -O2 -std=c17 -D_GNU_SOURCE -o /tmp/gpu-load tests/nvml/gpu_load.c || exit 1
echo "######## idle"
/tmp/nvml-probe --samples 2000 --smi-runs 10
/tmp/nvml-probe --csv > "$out/h200-nvml-idle.csv"
nvidia-smi --query-gpu=index,name,uuid,utilization.gpu,temperature.gpu,power.draw,power.limit,memory.total,memory.used,memory.free,clocks.sm --format=csv,noheader,nounits > "$out/h200-smi-idle.csv"
echo "######## under load (gpu-load: 8 GiB held, memsets on the SMs)"
/tmp/gpu-load 40 8192 &
load=$!
sleep 6
/tmp/nvml-probe --samples 2000 --smi-runs 10
/tmp/nvml-probe --csv > "$out/h200-nvml-load.csv"
nvidia-smi --query-gpu=index,name,uuid,utilization.gpu,temperature.gpu,power.draw,power.limit,memory.total,memory.used,memory.free,clocks.sm --format=csv,noheader,nounits > "$out/h200-smi-load.csv"
nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits >> "$out/h200-smi-load.csv"
kill $load 2>/dev/null
wait $load 2>/dev/null
echo "== done"
