#!/usr/bin/env bash
# gpu-handoff-probe.sh: builds and runs bench/textures/handoff_probe.cpp on the GPU machine: a CUDA
# producer's frame handed to a CUDA reader, and to a Vulkan renderer three ways (the host waits; the
# reader's CUDA context signals the renderer's semaphore; the renderer's copy submitted before the frame
# and the producer signalling its semaphore). Issue 39's 1.1x, without the share around it.
# Usage, from the repository root, through the device tool:
#   run(carry: [".deps", ".gl"], command: "scripts/gpu-handoff-probe.sh [--frames N --rounds R]")
# Needs .deps/vulkan-headers and .gl/*.deb (the Vulkan loader) as scripts/gpu-texture-check.sh says.
# Output: the probe's table, also in $OUT/handoff.txt where OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvidia-smi >/dev/null && nvidia-smi -L || { echo "no NVIDIA GPU here"; exit 77; }
if ! ldconfig -p | grep -q 'libvulkan\.so\.1'; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
if [[ -z "${VK_DRIVER_FILES:-}" && -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
vulkan_lib=$(ldconfig -p | awk '/libvulkan\.so\.1 /{print $NF; exit}')
cuda=${CUDA_HOME:-/usr/local/cuda}
out=${OUT:-/tmp}
mkdir -p "$out"
g++ -std=c++20 -O2 -o /tmp/zerohop_handoff_probe bench/textures/handoff_probe.cpp -I"$cuda/include" \
  -I.deps/vulkan-headers -L"$cuda/lib64/stubs" -lcuda "$vulkan_lib" -lpthread
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
/tmp/zerohop_handoff_probe "$@" | tee "$out/handoff.txt"
