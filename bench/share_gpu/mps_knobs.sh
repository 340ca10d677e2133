#!/usr/bin/env bash
# mps_knobs.sh: the deployment knobs of the device share hand-off under MPS, in one run
# (docs/benchmarks-gpu.md, "MPS deployment knobs"): for each knob setting, the rows that decide
# the two goals (p99 <= 50 us at 8 readers; producer slowed <= 2 %) with zerohop_share_gpu_bench.
#
#   base     no knob: ipc-spin and floor-spin at 1/4/8, ipc at 8, the producer alone (the call's reference)
#   sm25     reader processes at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 (the producer keeps 100)
#   pin      producer and every reader process on a CPU of its own (8-reader rows, the producer alone)
#   sm10     readers at 10 %
#   blocks   reader kernel at most 132 blocks (one per SM) instead of 2 per SM
#   prio     reader processes at CUDA_MPS_CLIENT_PRIORITY=1 (below normal)
#   prodprio the producer's stream at the device's highest stream priority (--producer-priority)
#   base2    ipc-spin at 8 and the producer alone again (drift of the GPU's clock state over the run)
#   rows     the per-row reader kernel of the older figures (--reader-kernel rows: a block per row, an
#            atomicAdd per warp): ipc-spin at 1/8, floor-spin at 8
#   fused    the same with both planes in one launch (--reader-kernel fused)
#   gpuwait  the doorbell prototype: reader work queued on the GPU before the frame, released by a word
#            the producer's stream writes (ipc-gpuwait at 1/4/8, floor-gpuwait at 8)
#   timing   ipc-spin and ipc-gpuwait at 1/8 with GPU events around the reader's kernel
#   after    ipc-spin at 1/8 and the producer alone with the producer's next kernel enqueued BEFORE commit
#            (--commit-after-next): readers' kernels wait for it instead of running beside it
#   grid132  reader kernel at most 132 blocks of 256 threads (8 readers fill the GPU's thread slots
#            once): ipc-spin at 1/8, floor-spin at 8, the producer alone
#   grid66   the same at 66 blocks (8 readers take half the GPU's thread slots)
#   next     ipc-spin and ipc-gpuwait at 8 and the producer alone with the producer's next kernel
#            (--producer-next-kernel) whatever NEXT_KERNEL says
#   nomps    (MPS stopped) ipc-spin at 8 readers at 25 %: what the SM limit does without MPS
#   nompswait (MPS stopped) ipc-spin, ipc-gpuwait and floor-spin at 1 reader: the queued wait between
#            time-sliced contexts
# Every setting but rows and fused uses the bench's default reader kernel (reduce: summed per block).
# Every setting runs with --producer-next-kernel unless NEXT_KERNEL=0 (the plain measure: the readers
# alone on the GPU). Settings run in this order; one is started only while the call has used less than
# BUDGET_S seconds, so the call ends in time and the first settings matter most.
#
# Usage (GPU machine, repository root, through the device tool; .deps carries GoogleTest):
#   run(carry: [".deps"], command: "CUDA_ARCHS=90 bench/share_gpu/mps_knobs.sh")
# Environment: OUT (default $BUILD_DIR/out; results: mps-knobs.md, mps-knobs.log), BUILD_DIR (default
#   build-mps-knobs), CUDA_ARCHS, FRAMES (default 150), BUDGET_S (default 150), NEXT_KERNEL (default 1),
#   SETTINGS (names above to run, space-separated; default all; nomps is "nomps"),
#   BENCH (a prebuilt zerohop_share_gpu_bench used when the build fails, e.g. one carried along).
# Exit status: 0 all settings ran, 1 a benchmark failed or settings were skipped, 2 SETTINGS names an
# unknown setting, 3 no binary.
set -uo pipefail
cd "$(dirname "$0")/../.."

BUILD_DIR=${BUILD_DIR:-build-mps-knobs}
OUT=${OUT:-$BUILD_DIR/out}
FRAMES=${FRAMES:-150}
BUDGET_S=${BUDGET_S:-150}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec > >(tee "$OUT/mps-knobs.log") 2>&1
MD="$OUT/mps-knobs.md"
status=0
known_settings="base sm25 pin sm10 blocks prio prodprio base2 rows fused gpuwait timing next after grid132 grid66 nomps nompswait"
SETTINGS=${SETTINGS:-$known_settings}
for s in $SETTINGS; do  # a misspelt name would otherwise run nothing and pass
  [[ " $known_settings " == *" $s "* ]] || { echo "FAIL: SETTINGS names '$s'; the settings are: $known_settings"; exit 2; }
done
wanted() { [[ " $SETTINGS " == *" $1 "* ]]; }
step() { echo; echo "==== $* ($(date -u +%H:%M:%S), ${SECONDS}s)"; }

step "configure + build zerohop_share_gpu_bench"
cfg=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZEROHOP_WITH_MEDIA=OFF -DZEROHOP_WITH_CUDA=ON
     -DZEROHOP_REQUIRE_NVJPEG=ON -DZEROHOP_BUILD_TESTS=ON -DZEROHOP_BUILD_BENCHMARKS=ON)
[[ -f .deps/googletest/CMakeLists.txt ]] && cfg+=(-DZEROHOP_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
[[ -n "${CUDA_ARCHS:-}" ]] && cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
bin=$BUILD_DIR/bench/share_gpu/zerohop_share_gpu_bench
if cmake "${cfg[@]}" >"$OUT/build.txt" 2>&1 && cmake --build "$BUILD_DIR" -j "$(nproc)" --target zerohop_share_gpu_bench \
    >>"$OUT/build.txt" 2>&1; then
  echo "built $bin"
elif [[ -n "${BENCH:-}" && -x "${BENCH}" ]]; then
  grep -m5 -E 'error|FAILED' "$OUT/build.txt"
  echo "NOTE: build failed; using the prebuilt $BENCH"
  bin=$BENCH
else
  tail -20 "$OUT/build.txt"
  echo "FAIL: build"
  exit 3
fi

# name, arguments
common=(--frames "$FRAMES" --out "$MD")
[[ "${NEXT_KERNEL:-1}" != 0 ]] && common+=(--producer-next-kernel)
all=ipc-spin,floor-spin,ipc@8,producer
settings=(
  "base|--paths $all"
  "sm25|--paths ipc-spin,floor-spin@8,ipc@8 --reader-sm-percent 25"
  "pin|--paths ipc-spin@8,floor-spin@8,ipc@8,producer --pin"
  "sm10|--paths ipc-spin,floor-spin@8,ipc@8 --reader-sm-percent 10"
  "blocks|--paths ipc-spin@1+8,floor-spin@8 --read-blocks 132"
  "prio|--paths ipc-spin@8 --reader-env CUDA_MPS_CLIENT_PRIORITY=1"
  "prodprio|--paths ipc-spin@8,producer --producer-priority"
  "base2|--paths ipc-spin@8,producer"
  "rows|--paths ipc-spin@1+8,floor-spin@8 --reader-kernel rows"
  "fused|--paths ipc-spin@1+8,floor-spin@8 --reader-kernel fused"
  "gpuwait|--paths ipc-gpuwait@1+4+8,floor-gpuwait@8"
  "timing|--paths ipc-spin@1+8,ipc-gpuwait@1+8 --reader-timing"
  "next|--paths ipc-spin@8,ipc-gpuwait@8,producer --producer-next-kernel"
  "after|--paths ipc-spin@1+8,producer --producer-next-kernel --commit-after-next"
  "grid132|--paths ipc-spin@1+8,floor-spin@8,producer --read-blocks 132"
  "grid66|--paths ipc-spin@1+8,floor-spin@8,producer --read-blocks 66"
)
bench() {  # label, arguments...
  local label=$1
  shift
  if ((SECONDS > BUDGET_S)); then
    echo "SKIPPED: $label (${SECONDS}s used, budget ${BUDGET_S}s)"
    status=1
    return
  fi
  step "$label: $*"
  # shellcheck disable=SC2068
  timeout $((90 * FRAMES / 150 + 30)) "$bin" "${common[@]}" --label "$label" $@ || { echo "FAIL: $label"; status=1; }
}

step "MPS: nvidia-cuda-mps-control -d (private pipe/log directory)"
if ! command -v nvidia-cuda-mps-control >/dev/null; then echo "FAIL: no nvidia-cuda-mps-control"; exit 1; fi
# shellcheck source=scripts/mps-private.sh
source scripts/mps-private.sh
if mps_private_start; then
  for s in "${settings[@]}"; do
    wanted "${s%%|*}" || continue
    # shellcheck disable=SC2086
    bench "with MPS, ${s%%|*}" ${s#*|}
  done
  mps_private_stop
else
  echo "FAIL: nvidia-cuda-mps-control -d"
  status=1
fi
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
wanted nomps && bench "without MPS, sm25" --paths ipc-spin@8 --reader-sm-percent 25
wanted nompswait && bench "without MPS, gpuwait" --paths ipc-spin@1,ipc-gpuwait@1,floor-spin@1

step "done (status $status)"
exit $status
