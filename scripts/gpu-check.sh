#!/usr/bin/env bash
# gpu-check.sh: build the GPU stage and the device-memory share ring, run their tests (ctest label
# gpu) and their benchmarks (and the share benchmark again under MPS when the machine has it), in one go.
#
# Usage (from anywhere; it works in the repository root):
#   scripts/gpu-check.sh [--no-bench] [--no-sanitize]
#
#   On the GPU machine, through the device tool (GoogleTest and nv-codec-headers carried in .deps/:
#   .deps/googletest, .deps/ffnvcodec = a copy of Debian's /usr/include/ffnvcodec; H200 only):
#     run(carry: [".deps"], command: "CUDA_ARCHS=90 scripts/gpu-check.sh")
#   Tests only, no benchmarks, no memcheck, no MPS pass: MPS=0 scripts/gpu-check.sh --no-bench --no-sanitize
#   Here (no GPU): scripts/gpu-check.sh   builds, runs the tests (they skip, saying why) and says so.
#   nvJPEG only, short: GPU_BENCH=0 SHARE_BENCH=0 MPS=0 scripts/gpu-check.sh --no-sanitize
#
# .deps/ (git-ignored, carried to the GPU machine, which has no Debian libraries) is recreated with:
#   .deps/googletest  a copy of Debian's /usr/src/googletest
#   .deps/ffnvcodec   a copy of Debian's /usr/include/ffnvcodec (libffmpeg-nvenc-dev)
#   .deps/debs        (cd .deps/debs && apt-get download libturbojpeg0 libturbojpeg0-dev libjpeg62-turbo
#                     libjpeg62-turbo-dev): this script unpacks them into $BUILD_DIR/turbojpeg (dpkg -x, or
#                     ar + tar) for the nvJPEG tests and benchmark, which compare with libjpeg-turbo
#   .deps/nvjpeg      the nvidia-nvjpeg wheel's contents (scripts/install-deps.sh); only needed where the
#                     CUDA toolkit lacks nvjpeg.h (the GPU machine's toolkit has it)
#
# Environment:
#   OUT         where results go (the device tool sets it; default: $BUILD_DIR/out). Four files:
#               gpu-check.log (everything), ctest-gpu.xml (JUnit), gpu-bench.md (ingest benchmark),
#               nvdec-bench.md (NVDEC H.264 decode benchmark),
#               share-gpu-bench.md (share hand-off benchmark: without MPS, then with MPS if available)
#   BUILD_DIR   build directory (default: build-gpu-check)
#   GTEST_DIR   GoogleTest sources (default: .deps/googletest, else /usr/src/googletest, else installed GTest)
#   CUDA_ARCHS  CMAKE_CUDA_ARCHITECTURES (default: the project's list, 75..90+PTX)
#   JOBS        build parallelism (default: nproc)
#   BENCH_ARGS  extra zerohop_gpu_bench arguments (default: --iterations 500)
#   GPU_BENCH   0 skips zerohop_gpu_bench (the ingest benchmark); the share benchmark still runs
#   SHARE_BENCH_ARGS  extra zerohop_share_gpu_bench arguments (default: --frames 150)
#   SHARE_BENCH 0 skips the share benchmark
#   JPEG_BENCH  0 skips zerohop_gpu_jpeg_bench (MJPEG: nvJPEG backends vs libjpeg-turbo; gpu-jpeg-bench.md)
#   JPEG_BENCH_ARGS   extra zerohop_gpu_jpeg_bench arguments (default: --iterations 200)
#   CAMERAS_BENCH 0 skips zerohop_gpu_cameras_bench (MJPEG cameras per GPU into device rings; cameras-bench.md)
#   CAMERAS_BENCH_ARGS extra zerohop_gpu_cameras_bench arguments (default: its own rows, 10 s each)
#   GPU_TESTS   a ctest -R regex: only those gpu tests (a shorter run; default: every gpu test)
#   LIBRARY     0 skips the library step (install + examples + PyTorch reading the C publisher)
#   NVDEC_BENCH 0 skips zerohop_nvdec_bench
#   MULTI_GPU_BENCH 0 skips zerohop_multi_gpu_bench (reader on the same / another GPU; multi-gpu-bench.md)
#   MULTI_GPU_BENCH_ARGS extra zerohop_multi_gpu_bench arguments (default: --frames 300)
#   DOWNLOAD_BENCH 0 skips zerohop_gpu_download_bench (downloadLast() for VP8 beside NVENC; download-bench.md)
#   MPS         0 skips the MPS pass (default: run it when nvidia-cuda-mps-control exists)
#   BUDGET_S    seconds the whole run may take (default 570, for a runner that allows 600 s a command).
#               A later step (memcheck, a benchmark, the MPS pass) whose usual time no longer fits is left
#               out, said so at the end (not a failure); 0: no budget. Run a left-out part alone with the
#               switches above, e.g. GPU_TESTS=Share GPU_BENCH=0 JPEG_BENCH=0 CAMERAS_BENCH=0 ... .
#
# Exit status: 3 when configure or build failed; 0 when the build passed and the gpu tests passed (or all skipped for lack of a GPU
# on a machine that has none); 1 when anything failed, when zero gpu tests ran, or when a GPU is
# present but tests skipped.
set -uo pipefail
cd "$(dirname "$0")/.."

BENCH=1
SANITIZE=1
for a in "$@"; do
  case "$a" in
    --no-bench) BENCH=0 ;;
    --no-sanitize) SANITIZE=0 ;;
    -h|--help) sed -n '2,/^set -uo pipefail/{/^#/p}' "$0"; exit 0 ;;
    *) echo "unknown argument: $a" >&2; exit 1 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-build-gpu-check}
OUT=${OUT:-$BUILD_DIR/out}
JOBS=${JOBS:-$(nproc)}
BENCH_ARGS=${BENCH_ARGS:---iterations 500}
SHARE_BENCH_ARGS=${SHARE_BENCH_ARGS:---frames 150}  # 1080p60: 21 rows of 2.5 s + 0.5 s warm-up
GPU_BENCH=${GPU_BENCH:-1}
SHARE_BENCH=${SHARE_BENCH:-1}
JPEG_BENCH=${JPEG_BENCH:-1}
JPEG_BENCH_ARGS=${JPEG_BENCH_ARGS:---iterations 100}
CAMERAS_BENCH=${CAMERAS_BENCH:-1}
CAMERAS_BENCH_ARGS=${CAMERAS_BENCH_ARGS:---seconds 5}
MPS=${MPS:-1}
GPU_TESTS=${GPU_TESTS:-}
LIBRARY=${LIBRARY:-1}
NVDEC_BENCH=${NVDEC_BENCH:-1}
MULTI_GPU_BENCH=${MULTI_GPU_BENCH:-1}
MULTI_GPU_BENCH_ARGS=${MULTI_GPU_BENCH_ARGS:-}
DOWNLOAD_BENCH=${DOWNLOAD_BENCH:-1}
BUDGET_S=${BUDGET_S:-570}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG="$OUT/gpu-check.log"
exec > >(tee "$LOG") 2>&1

status=0
fail() { echo "FAIL: $*"; status=1; }
step() { echo; echo "==== $* ($(date -u +%H:%M:%S))"; }
# fits NAME SECONDS: true when a step that usually takes SECONDS still fits in BUDGET_S (SECONDS counts
# from the start of this script); otherwise says so and records NAME for the result line.
left_out=()
fits() {
  local left=$((BUDGET_S - SECONDS))
  if [[ $BUDGET_S -eq 0 || $2 -le $left ]]; then return 0; fi
  echo; echo "==== left out: $1 (usually ~$2 s; $left s left of BUDGET_S=$BUDGET_S)"
  left_out+=("$1")
  return 1
}

step "machine"
uname -a
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total --format=csv || echo "nvidia-smi: not available"
command -v nvcc >/dev/null && nvcc --version | tail -2 || echo "nvcc: not on PATH"
cmake --version | head -1

if [[ -z "${GTEST_DIR:-}" ]]; then
  if [[ -f .deps/googletest/CMakeLists.txt ]]; then GTEST_DIR=$PWD/.deps/googletest
  elif [[ -f /usr/src/googletest/CMakeLists.txt ]]; then GTEST_DIR=/usr/src/googletest
  else GTEST_DIR=""; fi
fi
cfg=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DZEROHOP_WITH_MEDIA=OFF -DZEROHOP_WITH_CUDA=ON -DZEROHOP_REQUIRE_NVJPEG=ON
     -DZEROHOP_BUILD_TESTS=ON -DZEROHOP_BUILD_BENCHMARKS=ON)
[[ -n "$GTEST_DIR" ]] && cfg+=(-DZEROHOP_GTEST_SOURCE_DIR="$GTEST_DIR")
# The Python module is built for the python3 on PATH (the GPU machine's /opt/torch/.venv has pybind11,
# torch and cupy; its /usr/bin/python3 has no pybind11, so the module and its gpu test were skipped).
command -v python3 >/dev/null && cfg+=(-DPython_EXECUTABLE="$(command -v python3)")
[[ -n "${CUDA_ARCHS:-}" ]] && cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
# libjpeg-turbo for the nvJPEG comparison: the system's, else Debian's packages from .deps/debs.
if [[ ! -f /usr/include/turbojpeg.h ]] && compgen -G ".deps/debs/*.deb" >/dev/null; then
  tj_prefix=$PWD/$BUILD_DIR/turbojpeg
  mkdir -p "$tj_prefix"
  for deb in "$PWD"/.deps/debs/*.deb; do
    if command -v dpkg >/dev/null; then dpkg -x "$deb" "$tj_prefix"
    else (cd "$tj_prefix" && ar p "$deb" "$(ar t "$deb" | grep '^data.tar')" | tar -xJf -); fi
  done
  cfg+=(-DZEROHOP_TURBOJPEG_PREFIX="$tj_prefix")
fi

step "configure (gpu-only options)"
if ! cmake "${cfg[@]}"; then fail "configure"; exit 3; fi

step "build"
# Every target of the gpu-only configuration (tests of every label, benchmarks, libzerohop, examples'
# dependencies): a gpu test whose program is missing would show as "Not Run". -k 0 builds what it can,
# so one failing target does not hide the others' results.
if ! cmake --build "$BUILD_DIR" -j "$JOBS" -- -k 0; then
  fail "build (some targets failed; their tests show as Not Run)"
fi
# The Python module's device-mode test (label gpu) exists only when configure found Python + pybind11.
if grep -q zerohop_py_share_device_publisher "$BUILD_DIR/build.ninja" 2>/dev/null; then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target zerohop_python zerohop_py_share_device_publisher || { fail "build (python)"; exit 3; }
fi

step "probe"
"$BUILD_DIR/bench/gpu/zerohop_gpu_bench" --probe
probe_rc=$?
have_gpu=0
[[ $probe_rc -eq 0 ]] && have_gpu=1

step "nvenc probe (the real libnvidia-encode; the H200 has no encoder: docs/nvenc.md)"
"$BUILD_DIR/tests/nvenc/zerohop_nvenc_gpu_test" --gtest_brief=1 | grep -v '^Running main'

step "ctest -L unit (probe)"
ctest --test-dir "$BUILD_DIR" -L unit -R 'GpuProbe|GpuConverterTable|NvdecProbe|NvdecAccessUnits|GpuJpegPlan|GpuPathChoice|GpuPlacement|GpuTopologyText|JpegStrips|Strips/' --output-on-failure || fail "probe and splitter unit tests"

step "ctest -L gpu"
ctest_out=$(mktemp)
ctest --test-dir "$BUILD_DIR" -L gpu ${GPU_TESTS:+-R "$GPU_TESTS"} --output-on-failure --output-junit "$OUT/ctest-gpu.xml" 2>&1 | tee "$ctest_out"
ctest_rc=${PIPESTATUS[0]}
# "100% tests passed, 0 tests failed out of 30" (CMake 3.25) or "100% tests passed out of 30" (4.x)
total=$(sed -n 's/.*tests passed.* out of \([0-9]*\).*/\1/p' "$ctest_out" | tail -1)
skipped=$(grep -cE 'Test +#[0-9]+: .*Skipped' "$ctest_out" || true)
total=${total:-0}
ran=$((total - skipped))
ctest_text=$(cat "$ctest_out")
rm -f "$ctest_out"
echo "gpu tests: $total registered, $ran ran, $skipped skipped"
[[ $ctest_rc -ne 0 ]] && fail "ctest -L gpu (rc $ctest_rc)"
[[ $total -eq 0 ]] && fail "zero gpu tests are registered"
if [[ $have_gpu -eq 1 ]]; then
  [[ $ran -eq 0 ]] && fail "a GPU is present but zero gpu tests ran"
  # The two-GPU tests (TwoGpus.*) skip, saying so, on a machine with one GPU; no other test may.
  gpu_count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  two_gpu_skips=$(grep -cE 'Test +#[0-9]+: TwoGpus\..*Skipped' <<<"$ctest_text" || true)
  if [[ ${gpu_count:-0} -lt 2 && $two_gpu_skips -gt 0 ]]; then
    echo "NOTE: $two_gpu_skips two-GPU tests (TwoGpus.*) skipped: this machine has ${gpu_count:-0} GPU(s)"
    skipped=$((skipped - two_gpu_skips))
  fi
  [[ $skipped -gt 0 ]] && fail "a GPU is present but $skipped gpu tests skipped"
else
  echo "NOTE: no usable GPU here: the gpu tests skipped (see the probe line); nothing ran on a GPU"
fi

if [[ $have_gpu -eq 1 && $LIBRARY -ne 0 ]]; then
  step "library: cmake --install, the examples built against it, device frames from the C publisher"
  prefix=$PWD/$BUILD_DIR/prefix
  run_dir=$(mktemp -d /tmp/zh-gpu-lib-XXXXXX)
  chmod 700 "$run_dir"
  if cmake --install "$BUILD_DIR" --prefix "$prefix" >"$OUT/install.log" 2>&1 &&
     cmake -S examples/c_publisher -B "$BUILD_DIR/ex-c_publisher" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
     cmake --build "$BUILD_DIR/ex-c_publisher" >/dev/null &&
     cmake -S examples/c_reader -B "$BUILD_DIR/ex-c_reader" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
     cmake --build "$BUILD_DIR/ex-c_reader" >/dev/null; then
    XDG_RUNTIME_DIR=$run_dir "$BUILD_DIR/ex-c_publisher/c_publisher" gpucam device 600 >"$OUT/c_publisher.log" 2>&1 &
    pub=$!
    for _ in $(seq 100); do [[ -S $run_dir/zerohop/gpucam.sock ]] && break; sleep 0.1; done
    out=$(XDG_RUNTIME_DIR=$run_dir timeout 30 "$BUILD_DIR/ex-c_reader/c_reader" gpucam 60)
    rc=$?
    echo "$out" | tail -3
    n=$(grep -c ' device, ' <<<"$out" || true)
    echo "C reader: $n of 60 device frames, rc $rc"
    [[ $rc -eq 0 && $n -eq 60 ]] || fail "the C reader did not read 60 device frames from the C publisher"
    if python3 -c 'import torch' 2>/dev/null && ls "$BUILD_DIR"/python/zerohop*.so >/dev/null 2>&1; then
      XDG_RUNTIME_DIR=$run_dir PYTHONPATH=$BUILD_DIR/python timeout 60 python3 - gpucam <<'PY' || fail "PyTorch could not read the C publisher's device frames"
import sys, torch, zerohop
sub = zerohop.Subscriber(sys.argv[1])
ok = 0
for _ in range(30):
    with sub.next(timeout=2.0) as f:
        assert f.memory == "device", f.memory
        t = torch.from_dlpack(f)  # plane 0 in VRAM, zero-copy; torch's stream waits on the slot's event
        first, last = int(t[0, 0].item()), int(t[-1, -1].item())
        assert t.is_cuda and first == f.seq % 256 and last == first, (f.seq, first, last)
        ok += 1
print(f"PyTorch {torch.__version__} read {ok} device frames of the C publisher, every one as written")
PY
    else
      echo "NOTE: no torch or no Python module here: PyTorch did not read the C publisher's frames"
    fi
    wait $pub  # 600 frames at 30 fps (20 s: both readers read meanwhile), then it prints its stats
    tail -1 "$OUT/c_publisher.log"
    grep -q ' 0 bytes copied' "$OUT/c_publisher.log" || fail "the C publisher's device frames were copied (or it failed)"
  else
    fail "install or the examples' build (see $OUT/install.log)"
  fi
  rm -rf "$run_dir"
fi

if [[ $have_gpu -eq 1 && $SANITIZE -eq 1 ]] && command -v compute-sanitizer >/dev/null && fits memcheck 150; then
  step "compute-sanitizer memcheck (conversion pairs, RGBA, scale, signalled ingest)"
  timeout 180 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BUILD_DIR/tests/gpu/zerohop_gpu_test" --gtest_filter='AllPairs/*yuyv_to_nv12:AllPairs/*uyvy_to_i420:AllPairs/*nv12_to_i420:AllPairs/*i420_to_nv12:AllPairs/*rgb24_to_nv12:AllPairs/*bgrx_to_i420:GpuConvert.ReadyEvent*:GpuConvert.WaitsOn*:Formats/GpuToRgba.*:Jobs/GpuScale.*_0:Jobs/GpuScale.*_1:Jobs/GpuScale.*_2:Jobs/GpuScale.*_3:GpuScale.Refuses*:GpuConvert.Signalled*' --gtest_brief=1 \
    > "$BUILD_DIR/memcheck.log" 2>&1
  mc_rc=$?
  tail -5 "$BUILD_DIR/memcheck.log"
  [[ $mc_rc -eq 124 ]] && echo "memcheck: timed out (not a failure)"
  [[ $mc_rc -ne 0 && $mc_rc -ne 124 ]] && fail "compute-sanitizer memcheck (rc $mc_rc)"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $GPU_BENCH -ne 0 ]] && fits "ingest benchmark" 20; then
  step "benchmark"
  # shellcheck disable=SC2086
  "$BUILD_DIR/bench/gpu/zerohop_gpu_bench" $BENCH_ARGS --out "$OUT/gpu-bench.md" || fail "benchmark"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $NVDEC_BENCH -ne 0 ]] && fits "NVDEC benchmark" 15; then
  step "NVDEC benchmark (H.264 1080p access unit -> NV12 in VRAM)"
  "$BUILD_DIR/bench/gpu/zerohop_nvdec_bench" --out "$OUT/nvdec-bench.md" || fail "nvdec benchmark"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $JPEG_BENCH -ne 0 ]] && fits "MJPEG benchmark" 220; then
  step "MJPEG benchmark (nvJPEG backends vs libjpeg-turbo + upload, batched)"
  # shellcheck disable=SC2086
  timeout 300 "$BUILD_DIR/bench/gpu/zerohop_gpu_jpeg_bench" $JPEG_BENCH_ARGS --out "$OUT/gpu-jpeg-bench.md" \
    || fail "MJPEG benchmark"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $CAMERAS_BENCH -ne 0 ]] && fits "cameras benchmark" 60; then
  step "cameras per GPU (1080p30 MJPEG cameras through one JpegBatcher into device rings)"
  # shellcheck disable=SC2086
  timeout 300 "$BUILD_DIR/bench/gpu/zerohop_gpu_cameras_bench" $CAMERAS_BENCH_ARGS --out "$OUT/cameras-bench.md" \
    || fail "cameras benchmark"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $SHARE_BENCH -ne 0 ]] && fits "share benchmark" 75; then
  step "share benchmark (device ring over CUDA IPC vs host round trip), without MPS"
  # shellcheck disable=SC2086
  timeout 240 "$BUILD_DIR/bench/share_gpu/zerohop_share_gpu_bench" $SHARE_BENCH_ARGS --label "without MPS" \
    --out "$OUT/share-gpu-bench.md" || fail "share benchmark (without MPS)"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $MULTI_GPU_BENCH -ne 0 ]] && fits "multi-GPU benchmark" 30; then
  step "multi-GPU hand-off benchmark (reader on the same GPU / another GPU: peer, copy; 1080p60)"
  # shellcheck disable=SC2086
  timeout 120 "$BUILD_DIR/bench/share_gpu/zerohop_multi_gpu_bench" $MULTI_GPU_BENCH_ARGS --out "$OUT/multi-gpu-bench.md" \
    || fail "multi-GPU benchmark"
fi

if [[ $have_gpu -eq 1 && $BENCH -eq 1 && $DOWNLOAD_BENCH -ne 0 ]] && fits "download benchmark" 20; then
  step "GPU path hand-off to a host encoder (downloadLast for VP8 beside NVENC, x264's host copy)"
  timeout 120 "$BUILD_DIR/bench/gpu/zerohop_gpu_download_bench" --out "$OUT/download-bench.md" \
    || fail "download benchmark"
fi

if [[ $have_gpu -eq 1 && $MPS -ne 0 ]] && command -v nvidia-cuda-mps-control >/dev/null && fits "MPS pass" 120; then
  step "MPS pass: start nvidia-cuda-mps-control -d, share gpu tests + share benchmark, quit"
  # A private pipe/log directory: nothing else on the machine is switched to MPS, and the daemon's
  # clients (our processes) find it through the same variables.
  # shellcheck source=scripts/mps-private.sh
  source scripts/mps-private.sh
  if mps_private_start; then
    timeout 120 "$BUILD_DIR/tests/share/zerohop_share_gpu_test" --gtest_brief=1 || fail "share gpu tests under MPS"
    if [[ $BENCH -eq 1 ]]; then
      # shellcheck disable=SC2086
      timeout 240 "$BUILD_DIR/bench/share_gpu/zerohop_share_gpu_bench" $SHARE_BENCH_ARGS --label "with MPS" \
        --out "$OUT/share-gpu-bench.md" || fail "share benchmark (with MPS)"
    fi
    mps_private_stop
  else
    echo "NOTE: nvidia-cuda-mps-control -d failed; no MPS numbers"
  fi
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
elif [[ $have_gpu -eq 1 && ! " ${left_out[*]} " =~ " MPS pass " ]]; then
  echo "NOTE: nvidia-cuda-mps-control not found (or MPS=0): no MPS pass"
fi

step "result"
echo "took $SECONDS s"
if [[ ${#left_out[@]} -gt 0 ]]; then
  joined=$(printf '%s, ' "${left_out[@]}")
  echo "left out for time (BUDGET_S=$BUDGET_S; 0 runs everything): ${joined%, }"
fi
[[ $status -eq 0 ]] && echo "gpu-check: OK (gpu tests ran: $ran, skipped unexpectedly: $skipped, two-GPU tests skipped on one GPU: ${two_gpu_skips:-0}, GPU: $have_gpu)" || echo "gpu-check: FAILED"
exit $status
