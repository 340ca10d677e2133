#!/usr/bin/env bash
# gpu-gst-check.sh: zerohopsrc on device shares (video/x-raw(memory:CUDAMemory), docs/gstreamer.md
# "Device shares") on the GPU machine, from a bundle of the Debian build made with
# scripts/gpu-serve-bundle.sh plus the GStreamer CUDA pieces. Exits 1 on any failure; prints each
# check as "ok: ..." or "FAIL: ...".
#
# Usage:
#   here, once (the Debian build, configured with CUDA: "gstzerohop with CUDA memory" at configure):
#     cmake --build build --target zerohop zerohop-whep-receive zerohop-camemu zerohop_camemu gstzerohop zerohop_gst_cuda_test \
#       zerohop_share_gpu_peer zerohop_opencv_gpu_test zerohop_ffmpeg_gpu_test zerohop_ffmpeg_filter_gpu_test \
#       zerohop_interop_bench zerohop_nvrtc_compat
#     BUNDLE_GST_EXTRA="build/lib/gstreamer-1.0/libgstzerohop.so nvcodec" \
#     BUNDLE_EXTRA="build/tests/gst/zerohop_gst_cuda_test build/tests/share/zerohop_share_gpu_peer
#       build/tests/opencv/zerohop_opencv_gpu_test build/tests/ffmpeg/zerohop_ffmpeg_gpu_test
#       build/tests/ffmpeg/zerohop_ffmpeg_filter_gpu_test build/lib/libzerohop-nvrtc-compat.so
#       build/bench/interop/zerohop_interop_bench $(command -v gst-launch-1.0)" \
#     BUNDLE_STUB="libflite libplacebo liblapack libblas libgfortran librsvg" \
#       scripts/gpu-serve-bundle.sh build
#   on the GPU machine, through the device tool:
#     run(carry: [".gpu-bundle"], command: "bash scripts/gpu-gst-check.sh")
#
# What the bundle then carries for this, beyond serve's own: gst/libgstzerohop.so (links
# libgstcuda-1.0.so.0 and the CUDA runtime statically), gst/libgstnvcodec.so (cudadownload, cudaconvert,
# cudaupload; it registers them only where libgstcuda can dlopen the driver's libcuda.so.1, which stays
# the machine's), bin/gst-launch-1.0, and in lib/ the libraries these need that serve's closure lacks
# (measured with ldd on Debian 12): libgstcuda-1.0, libgstgl-1.0 (libgstcuda links it),
# libgstcodecs-1.0, libgstallocators-1.0, and what libgstgl links: libGL, libEGL, libGLX,
# libGLdispatch, libgbm, libgudev-1.0, libudev, libwayland-client/-cursor/-egl/-server: loaded, never
# used (no GL context is made). cudaconvert also compiles its kernels with NVRTC at run time: libnvrtc is
# not carried; this script adds the machine's CUDA toolkit library folder (CUDA_LIB, default
# /usr/local/cuda/lib64) to the search path, and points GStreamer at bin/libzerohop-nvrtc-compat.so
# (GST_CUDA_NVRTC_LIBNAME), which forwards to that NVRTC and raises GStreamer 1.22's compute_52 to the
# lowest architecture CUDA 13's NVRTC targets (plugins/gst/nvrtc_compat.cpp).
# The scale_cuda test links libavfilter, whose closure is carried with stand-ins for the libraries
# of filters it never creates (BUNDLE_STUB, scripts/gpu-bundle-stub.py).
#
# Checks:
#   1. every bundled library resolves (ldd) and names what comes from the machine;
#   2. gst-inspect-1.0 zerohopsrc lists video/x-raw(memory:CUDAMemory) (the plugin was built with it);
#   3. gst-inspect-1.0 cudadownload, cudaupload, cudaconvert (nvcodec found libcuda.so.1 and a device);
#   4. zerohop_gst_cuda_test: a device ring from another process (zerohop_share_gpu_peer) through
#      zerohopsrc ! cudadownload and zerohopsrc ! cudaconvert ! cudadownload, every byte checked; and
#      appsrc ! cudaupload ! zerohopsink read by that peer in another process, every byte checked by a
#      kernel; no test may skip where a GPU is expected (nvidia-smi -L lists one; EXPECT_GPU=0|1 overrides);
#   5. `zerohop serve --gpu 0 --share NAME` (the GPU path: NV12 in VRAM) read by
#      gst-launch-1.0 zerohopsrc share=NAME num-buffers=FRAMES ! cudadownload ! video/x-raw,format=NV12 !
#      fakesink: exits 0 with every buffer, and serve logged the GPU path.
#   6. where the bundle has them (BUNDLE_EXTRA build/tests/opencv/zerohop_opencv_gpu_test
#      build/tests/ffmpeg/zerohop_ffmpeg_gpu_test build/tests/ffmpeg/zerohop_ffmpeg_filter_gpu_test):
#      GpuMat views of a device share read by a kernel, device AVFrames, and a device AVFrame through
#      FFmpeg's scale_cuda filter graph; none may skip where a GPU is expected.
#   7. where the bundle has it (BUNDLE_EXTRA build/bench/interop/zerohop_interop_bench):
#      the interop benchmark (INTEROP_BENCH_ARGS) on a host share into interop-bench.md and, where a GPU
#      is expected, on a device share (--memory device) into interop-bench-device.md.
# Environment: OUT (default /tmp/gpu-gst-check), BUNDLE (default .gpu-bundle/zerohop-serve.tar.xz),
# EXPECT_GPU, CUDA_LIB, FRAMES (default 90), PORT (default 18493), GPU_DEVICE (default 0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

OUT=${OUT:-/tmp/gpu-gst-check}
BUNDLE=${BUNDLE:-.gpu-bundle/zerohop-serve.tar.xz}
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}
FRAMES=${FRAMES:-90}
PORT=${PORT:-18493}
GPU_DEVICE=${GPU_DEVICE:-0}
SHARE=zhgst$$
. scripts/gpu-bundle-lib.sh  # fail, pass, step, bundle_start, bundle_unpack, bundle_environment
bundle_start gpu-gst-check.log "expect a GPU" zh-gst
bundle_unpack "$BUNDLE" "$tmp"
for f in gst/libgstzerohop.so gst/libgstnvcodec.so bin/zerohop_gst_cuda_test bin/zerohop_share_gpu_peer bin/gst-launch-1.0 \
         bin/libzerohop-nvrtc-compat.so; do
  [[ -e $B/$f ]] || { echo "FAIL: the bundle has no $f (make it as the header of this script says)"; exit 1; }
done
# NVRTC (cudaconvert compiles its kernels at run time) from the machine's CUDA toolkit, when it has one.
nvrtc_dir=""
[[ -d $CUDA_LIB ]] && nvrtc_dir=$CUDA_LIB
bundle_environment "$nvrtc_dir"
bundle_env+=(GST_CUDA_NVRTC_LIBNAME="$B/bin/libzerohop-nvrtc-compat.so")
inspect() { env "${bundle_env[@]}" "$B/bin/gst-inspect-1.0" "$@"; }

step "1. libraries"
env "${bundle_env[@]}" ldd "$B"/gst/libgstzerohop.so "$B"/gst/libgstnvcodec.so "$B/bin/zerohop_gst_cuda_test" \
  "$B/bin/gst-launch-1.0" > "$tmp/ldd.txt" 2>&1
missing=$(grep 'not found' "$tmp/ldd.txt" | sort -u)
[[ -z $missing ]] && pass "every library resolves" || fail "libraries not found: $missing"
echo "from the machine: $(awk '/=> \// && $3 !~ /zerohop-serve\/lib/ {print $1}' "$tmp/ldd.txt" | sort -u | tr '\n' ' ')"

step "2. zerohopsrc offers CUDA memory"
if inspect zerohopsrc > "$OUT/inspect-zerohopsrc.txt" 2>&1 && grep -q 'video/x-raw(memory:CUDAMemory)' "$OUT/inspect-zerohopsrc.txt"; then
  pass "gst-inspect-1.0 zerohopsrc lists video/x-raw(memory:CUDAMemory)"
else
  fail "gst-inspect-1.0 zerohopsrc: no CUDA memory caps (was the plugin built with gstreamer-cuda-1.0?)"
  tail -5 "$OUT/inspect-zerohopsrc.txt"
fi

step "3. nvcodec's CUDA elements"
for e in cudadownload cudaupload cudaconvert; do
  if inspect "$e" > "$OUT/inspect-$e.txt" 2>&1; then
    pass "gst-inspect-1.0 $e"
  elif [[ $e == cudaconvert && $expect_gpu == 1 ]]; then
    # nvcodec registers it only where GStreamer's NVRTC loader opens GST_CUDA_NVRTC_LIBNAME.
    fail "no cudaconvert: GStreamer's NVRTC loader failed (GST_DEBUG=cudanvrtc:5; is $CUDA_LIB the CUDA toolkit's lib?)"
  elif [[ $expect_gpu == 1 ]]; then
    fail "no $e: nvcodec did not register it (libcuda.so.1 not loaded? GST_DEBUG=nvcodec:5,cudaloader:5)"
  else
    echo "no $e (no GPU expected here)"
  fi
done

step "4. zerohop_gst_cuda_test (device rings to and from another process, every byte checked)"
env "${bundle_env[@]}" ZEROHOP_SHARE_GPU_PEER="$B/bin/zerohop_share_gpu_peer" ZEROHOP_TEST_GST_PLUGIN_DIR="$B/gst" \
  ZEROHOP_TEST_GST_REGISTRY="$tmp/gst-registry.bin" \
  timeout 300 "$B/bin/zerohop_gst_cuda_test" --gtest_output="xml:$OUT/gst-cuda-test.xml" > "$OUT/gst-cuda-test.txt" 2>&1
rc=$?
cat "$OUT/gst-cuda-test.txt"
skipped=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$OUT/gst-cuda-test.txt" || true)
reasons=$(grep -A1 ': Skipped$' "$OUT/gst-cuda-test.txt" | grep -vE ': Skipped$|^--$' | grep -v '^$' || true)
if [[ $rc -ne 0 ]]; then
  fail "zerohop_gst_cuda_test exited $rc"
elif [[ $expect_gpu == 1 && $skipped -ne 0 ]]; then
  fail "zerohop_gst_cuda_test skipped tests on a GPU machine: $reasons"
else
  pass "zerohop_gst_cuda_test passed ($skipped skipped)"
fi

step "5. serve --gpu $GPU_DEVICE --share $SHARE -> zerohopsrc ! cudadownload ($FRAMES buffers)"
if [[ $expect_gpu != 1 ]]; then
  echo "skipped: no GPU expected here (serve's GPU path needs one)"
else
  env "${bundle_env[@]}" "$B/bin/zerohop" serve --source test:1280x720@30 --gpu "$GPU_DEVICE" --share "$SHARE" \
    --listen "127.0.0.1:$PORT" > "$OUT/serve.log" 2>&1 &
  serve_pid=$!
  up=0
  for _ in $(seq 1 60); do
    kill -0 "$serve_pid" 2>/dev/null || break
    [[ -S ${XDG_RUNTIME_DIR:-/nonexistent}/zerohop/$SHARE.sock || -S /tmp/zerohop-$(id -u)/$SHARE.sock ]] && { up=1; break; }
    sleep 0.5
  done
  if [[ $up -ne 1 ]]; then
    fail "serve did not publish $SHARE within 30 s"
    tail -20 "$OUT/serve.log"
  else
    env "${bundle_env[@]}" timeout 60 "$B/bin/gst-launch-1.0" -m zerohopsrc share="$SHARE" num-buffers="$FRAMES" ! \
      cudadownload ! video/x-raw,format=NV12 ! fakesink name=sink > "$OUT/gst-launch.txt" 2>&1
    rc=$?
    tail -5 "$OUT/gst-launch.txt"
    if [[ $rc -eq 0 ]] && grep -q 'EOS' "$OUT/gst-launch.txt"; then
      pass "gst-launch-1.0 zerohopsrc ! cudadownload ran to EOS after $FRAMES buffers"
    else
      fail "gst-launch-1.0 zerohopsrc ! cudadownload exited $rc (see $OUT/gst-launch.txt)"
    fi
    if grep -q 'GPU path:' "$OUT/serve.log"; then
      pass "serve logged the GPU path: $(grep -m1 'GPU path:' "$OUT/serve.log")"
    else
      fail "serve did not log the GPU path (the share may be a host one)"
    fi
  fi
  kill -INT "$serve_pid" 2>/dev/null
  wait "$serve_pid" 2>/dev/null
  serve_pid=""
fi

step "6. the OpenCV and FFmpeg views of device frames (when the bundle has them)"
for t in zerohop_opencv_gpu_test zerohop_ffmpeg_gpu_test zerohop_ffmpeg_filter_gpu_test; do
  if [[ ! -x $B/bin/$t ]]; then
    echo "not in the bundle: $t"
    continue
  fi
  env "${bundle_env[@]}" ZEROHOP_SHARE_GPU_PEER="$B/bin/zerohop_share_gpu_peer" timeout 120 "$B/bin/$t" --gtest_output="xml:$OUT/$t.xml" > "$OUT/$t.txt" 2>&1
  rc=$?
  tail -3 "$OUT/$t.txt"
  skipped=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$OUT/$t.txt" || true)
  if [[ $rc -ne 0 ]]; then
    fail "$t exited $rc (see $OUT/$t.txt)"
  elif [[ $expect_gpu == 1 && $skipped -ne 0 ]]; then
    fail "$t skipped $skipped tests on a GPU machine: $(grep -A1 ': Skipped$' "$OUT/$t.txt" | tail -1)"
  else
    pass "$t passed ($skipped skipped)"
  fi
done

step "7. zerohop_interop_bench (publish -> appsink / AVFrame against Subscriber; when the bundle has it)"
if [[ -x $B/bin/zerohop_interop_bench ]]; then
  env "${bundle_env[@]}" timeout 240 "$B/bin/zerohop_interop_bench" ${INTEROP_BENCH_ARGS:-} > "$OUT/interop-bench.md" 2>&1 ||
    fail "zerohop_interop_bench exited $? (see $OUT/interop-bench.md)"
  cat "$OUT/interop-bench.md"
  if [[ $expect_gpu == 1 ]]; then  # the same on a device share (slots in VRAM, a publisher process)
    env "${bundle_env[@]}" timeout 240 "$B/bin/zerohop_interop_bench" ${INTEROP_BENCH_ARGS:-} --memory device \
      > "$OUT/interop-bench-device.md" 2>&1 || fail "zerohop_interop_bench --memory device exited $? (see $OUT/interop-bench-device.md)"
    cat "$OUT/interop-bench-device.md"
  fi
else
  echo "not in the bundle: zerohop_interop_bench"
fi

echo
if [[ $status -eq 0 ]]; then echo "gpu-gst-check: all checks passed"; else echo "gpu-gst-check: FAILED"; fi
exit $status
