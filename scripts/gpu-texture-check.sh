#!/usr/bin/env bash
# gpu-texture-check.sh: device rings into Vulkan on the GPU machine (issue 39, device half; issue 40 item 4).
# Builds libzerohop (CUDA on, no media), installs it into a scratch prefix, builds examples/c_publisher
# and examples/vulkan_reader against it, publishes 1280x720 NV12 frames in VRAM (c_publisher ... device:
# CUDA VMM fds, frame n has luma n % 256, chroma 128) and runs vulkan_reader on them: it imports the
# ring's fd into Vulkan (zerohop::vulkan::DeviceFrameImporter) and draws the latest frame. Prints the
# reader's lines (path=import|copy ..., wait=gpu|host, ring=device committed_to_sampled_us_p50=..., and the last line
# frames=N copied_bytes=M import_us_p50=X), expects copied_bytes=0 and vulkan_reader's wait=gpu (the queue
# waits for the producer, ImportOptions::gpuWait; run again with --host-wait beside it), checks the PNG (every pixel grey:
# R = G = B, one value, as the publisher's flat frames give), and for comparison the C reader's
# capture -> host hand-off of the same publisher (c_reader, CUDA: a host-side figure, not the GPU's).
# The like-for-like comparison (issue 39's "committed -> sampled at most 1.1x the CUDA reader's"):
# bench/textures' zerohop_cuda_sampler reads the same publisher the way vulkan_reader does (next(), the
# producer's event waited on by its stream, one kernel NV12 -> RGBA into its own image, the host waits
# for it), with the default CUDA scheduling and spinning (--spin); vulkan_reader also runs with --spin
# (its fence polled); a table puts each reader's committed -> sampled p50/p99, wake and draw side by side.
#
# With .deps/gl-headers (below) it also builds examples/gl_reader and runs it on the same rings: the ring's fd
# imported into OpenGL through EGL (GL_EXT_memory_object_fd, examples/gl_reader/device_ring_gl.hpp), its own
# PNG and copied_bytes=0 checked the same way (gl-device.*, gl-serve.*).
#
# Usage, from the repository root, on the GPU machine through the device tool:
#   run(carry: [".deps", ".gl"], command: "CUDA_ARCHS=90 scripts/gpu-texture-check.sh")
#   (with SERVE_BUNDLE=.gpu-bundle/zerohop-serve.tar.xz, carry ".gpu-bundle" too)
# It needs there (no Debian packages on that machine):
#   .deps/vulkan-headers  the Vulkan C headers and zlib's, copied here once:
#       mkdir -p .deps/vulkan-headers/vulkan && cp -r /usr/include/vulkan/vk_platform.h \
#         /usr/include/vulkan/vulkan.h /usr/include/vulkan/vulkan_core.h .deps/vulkan-headers/vulkan/ &&
#         cp -r /usr/include/vk_video .deps/vulkan-headers/ && cp /usr/include/zlib.h /usr/include/zconf.h .deps/vulkan-headers/
#   .deps/gl-headers      EGL, KHR and GL C headers, copied here once:
#       mkdir -p .deps/gl-headers && cp -r /usr/include/EGL /usr/include/KHR /usr/include/GL .deps/gl-headers/
#   .gl/*.deb             the Vulkan loader (libvulkan1) and GLVND's EGL and OpenGL (libegl1 libglvnd0
#                         libopengl0 libgl1 libglx0), as /work/.library/device/README.md, "Headless
#                         rendering", says; unpacked here into / when no libvulkan.so.1 is found.
# Environment: OUT (results; default build-tex/out), BUILD_DIR (default build-tex), CUDA_ARCHS, JOBS,
# SECONDS_READ (vulkan_reader's run, default 5), SERVE_BUNDLE (a bundle of scripts/gpu-serve-bundle.sh: the
# reader also on `zerohop serve --gpu 0 --share`'s device ring, its pixel timecode checked; carry the tarball).
# Outputs in $OUT: texture-check.log (everything), vk-device.png, vk-device.out.
# Exit status: 0 when the frames were imported in place (0 bytes copied) and the PNG checks; 1 otherwise;
# 3 when the build failed; 77 when there is no NVIDIA GPU.
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build-tex}
OUT=${OUT:-$BUILD_DIR/out}
JOBS=${JOBS:-$(nproc)}
SECONDS_READ=${SECONDS_READ:-5}
mkdir -p "$OUT" "$BUILD_DIR"
exec > >(tee "$OUT/texture-check.log") 2>&1
status=0
fail() { echo "FAIL: $*"; status=1; }
step() { echo; echo "==== $* ($SECONDS s)"; }

step "machine"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
  echo "no NVIDIA GPU here: nothing to check (this script runs on the GPU machine)"; exit 77
fi
if ! ldconfig -p | grep -q 'libvulkan\.so\.1' || ! ldconfig -p | grep -q 'libEGL\.so\.1'; then
  if compgen -G ".gl/*.deb" >/dev/null; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
fi
vulkan_lib=$(ldconfig -p | awk '/libvulkan\.so\.1 /{print $NF; exit}')
[[ -n "$vulkan_lib" ]] || { echo "no Vulkan loader (libvulkan.so.1): carry .gl (see the header)"; exit 3; }
# The NVIDIA driver's ICD, where the loader does not find it by itself (the device README).
if [[ -z "${VK_DRIVER_FILES:-}" && -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
if [[ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" && -f /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
headers=$PWD/.deps/vulkan-headers
[[ -f $headers/vulkan/vulkan.h ]] || { echo "no $headers/vulkan/vulkan.h: copy the headers (see the header)"; exit 3; }

step "configure and build libzerohop (CUDA, no media, no tests)"
cfg=(-S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DZEROHOP_WITH_MEDIA=OFF -DZEROHOP_WITH_CUDA=ON
     -DZEROHOP_BUILD_TESTS=OFF -DZEROHOP_BUILD_BENCHMARKS=OFF -DZEROHOP_BUILD_EXAMPLES=OFF -DZEROHOP_WITH_PYTHON=OFF)
command -v ninja >/dev/null && cfg+=(-G Ninja)
[[ -n "${CUDA_ARCHS:-}" ]] && cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
cmake "${cfg[@]}" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; echo "configure failed"; exit 3; }
cmake --build "$BUILD_DIR" -j "$JOBS" >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; echo "build failed"; exit 3; }
prefix=$PWD/$BUILD_DIR/prefix
cmake --install "$BUILD_DIR" --prefix "$prefix" >"$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 3; }

step "build examples/c_publisher, c_reader and vulkan_reader against the installed package"
for ex in c_publisher c_reader; do
  cmake -S "examples/$ex" -B "$BUILD_DIR/ex-$ex" -DCMAKE_PREFIX_PATH="$prefix" >"$OUT/ex-$ex.log" 2>&1 &&
    cmake --build "$BUILD_DIR/ex-$ex" >>"$OUT/ex-$ex.log" 2>&1 || { tail -20 "$OUT/ex-$ex.log"; exit 3; }
done
cmake -S examples/vulkan_reader -B "$BUILD_DIR/ex-vulkan_reader" -DCMAKE_PREFIX_PATH="$prefix" \
  -DVulkan_INCLUDE_DIR="$headers" -DVulkan_LIBRARY="$vulkan_lib" \
  -DZLIB_INCLUDE_DIR="$headers" -DZLIB_LIBRARY="$(ldconfig -p | awk '/libz\.so\.1 /{print $NF; exit}')" \
  >"$OUT/ex-vulkan_reader.log" 2>&1 &&
  cmake --build "$BUILD_DIR/ex-vulkan_reader" >>"$OUT/ex-vulkan_reader.log" 2>&1 ||
  { tail -30 "$OUT/ex-vulkan_reader.log"; exit 3; }
readers=(vulkan_reader)
sampler_cfg=(-S bench/textures -B "$BUILD_DIR/cuda-sampler" -DCMAKE_PREFIX_PATH="$prefix")
[[ -n "${CUDA_ARCHS:-}" ]] && sampler_cfg+=(-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCHS")
cmake "${sampler_cfg[@]}" >"$OUT/cuda-sampler.log" 2>&1 && cmake --build "$BUILD_DIR/cuda-sampler" >>"$OUT/cuda-sampler.log" 2>&1 ||
  fail "bench/textures (zerohop_cuda_sampler) did not build: $(grep -m3 -E 'error|Could NOT' "$OUT/cuda-sampler.log")"
gl_headers=$PWD/.deps/gl-headers
egl_lib=$(ldconfig -p | awk '/libEGL\.so\.1 /{print $NF; exit}')
opengl_lib=$(ldconfig -p | awk '/libOpenGL\.so\.0 /{print $NF; exit}')
if [[ -f $gl_headers/EGL/egl.h && -n $egl_lib && -n $opengl_lib ]]; then
  cmake -S examples/gl_reader -B "$BUILD_DIR/ex-gl_reader" -DCMAKE_PREFIX_PATH="$prefix" \
    -DOPENGL_INCLUDE_DIR="$gl_headers" -DOPENGL_EGL_INCLUDE_DIR="$gl_headers" \
    -DOPENGL_opengl_LIBRARY="$opengl_lib" -DOPENGL_egl_LIBRARY="$egl_lib" \
    -DZLIB_INCLUDE_DIR="$headers" -DZLIB_LIBRARY="$(ldconfig -p | awk '/libz\.so\.1 /{print $NF; exit}')" \
    >"$OUT/ex-gl_reader.log" 2>&1 &&
    cmake --build "$BUILD_DIR/ex-gl_reader" >>"$OUT/ex-gl_reader.log" 2>&1 && readers+=(gl_reader) ||
    fail "gl_reader did not build: $(grep -m3 -E 'error|Could NOT' "$OUT/ex-gl_reader.log")"
else
  echo "gl_reader not built: no .deps/gl-headers/EGL/egl.h, libEGL.so.1 or libOpenGL.so.0 (see the header)"
fi

# read_share READER SHARE TAG [ARGS...]: the reader draws SHARE for SECONDS_READ into $OUT/TAG.png; must
# import in place.
read_share() {
  local reader=$1 share=$2 tag=$3
  shift 3
  XDG_RUNTIME_DIR=$run_dir timeout $((SECONDS_READ + 60)) "$BUILD_DIR/ex-$reader/$reader" "$share" \
    "$OUT/$tag.png" --seconds "$SECONDS_READ" "$@" >"$OUT/$tag.out" 2>"$OUT/$tag.err"
  local rc=$?
  tail -5 "$OUT/$tag.err"
  cat "$OUT/$tag.out"
  [[ $rc -eq 0 ]] || { fail "$reader on $share exited with $rc"; return 1; }
  last=$(tail -1 "$OUT/$tag.out")
  [[ $last == frames=* ]] || { fail "$reader's last line is not frames=N copied_bytes=M import_us_p50=X"; return 1; }
  grep -q ' copied_bytes=0 ' <<<"$last " || { fail "$reader: device frames were copied, not imported: $(grep '^path=' "$OUT/$tag.out")"; return 1; }
}

step "device frames from the C publisher into ${readers[*]}"
run_dir=$(mktemp -d /tmp/zh-gpu-tex-XXXXXX)
chmod 700 "$run_dir"
frames=$(( (SECONDS_READ + 5) * 30 * 14 ))  # 30 fps: outlasts the twelve reader runs below
XDG_RUNTIME_DIR=$run_dir "$BUILD_DIR/ex-c_publisher/c_publisher" texcam device "$frames" >"$OUT/c_publisher.log" 2>&1 &
pub=$!
for _ in $(seq 100); do [[ -S $run_dir/zerohop/texcam.sock ]] && break; sleep 0.1; done
[[ -S $run_dir/zerohop/texcam.sock ]] || fail "the C publisher did not start: $(tail -3 "$OUT/c_publisher.log")"
for reader in "${readers[@]}"; do
  tag=${reader%%_reader}; tag=${tag/vulkan/vk}-device
  echo "-- $reader"
  read_share "$reader" texcam "$tag" || continue
  echo "-- the PNG: flat grey frames (R = G = B, one value)"
  python3 - "$OUT/$tag.png" <<'PY' || fail "$reader's PNG is not the publisher's flat grey frame"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w, h, ctype = 8, b"", 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
bpp = 3 if ctype == 2 else 4
stride = w * bpp + 1
values = set()
for y in range(0, h, 7):
    row = raw[y * stride:(y + 1) * stride]
    assert row[0] == 0, "the check reads unfiltered rows only (filter %d)" % row[0]
    for x in range(0, w, 5):
        r, g, b = row[1 + x * bpp:4 + x * bpp]
        assert abs(r - g) <= 2 and abs(g - b) <= 2, (x, y, r, g, b)
        values.add(r)
assert max(values) - min(values) <= 2, sorted(values)[:10]
print(f"PNG {w}x{h}: every sampled pixel grey, value {min(values)}")
PY
done
# The GPU wait (ImportOptions::gpuWait: a timeline semaphore exported by Vulkan, signalled by CUDA after the
# frame's ready event, waited on by the queue) against the host wait (cudaEventSynchronize in import()).
if [[ " ${readers[*]} " == *" vulkan_reader "* && -f $OUT/vk-device.out ]]; then
  grep -q '^wait=gpu' "$OUT/vk-device.out" ||
    fail "vulkan_reader did not wait on the GPU: $(grep '^wait=' "$OUT/vk-device.out")"
  echo "-- vulkan_reader --host-wait (for comparison)"
  read_share vulkan_reader texcam vk-device-hostwait --host-wait
  grep -q '^wait=host' "$OUT/vk-device-hostwait.out" || fail "--host-wait did not wait on the host"
  for t in vk-device vk-device-hostwait; do
    printf '%-20s %s %s\n' "$t" "$(grep -o 'committed_to_sampled_us_p50=[0-9.]* p99=[0-9.]*' "$OUT/$t.out")" \
      "$(grep -o 'import_us_p50=[0-9.]*' "$OUT/$t.out")"
  done
fi

# The CUDA reader doing the renderers' work, and vulkan_reader polling its fence, on the same publisher.
if [[ -x $BUILD_DIR/cuda-sampler/zerohop_cuda_sampler ]]; then
  for mode in default spin; do
    echo "-- zerohop_cuda_sampler ($mode)"
    args=(); [[ $mode == spin ]] && args=(--spin)
    XDG_RUNTIME_DIR=$run_dir timeout $((SECONDS_READ + 30)) "$BUILD_DIR/cuda-sampler/zerohop_cuda_sampler" texcam \
      --seconds "$SECONDS_READ" "${args[@]}" >"$OUT/cuda-$mode.out" 2>&1 || fail "zerohop_cuda_sampler $mode: $(tail -2 "$OUT/cuda-$mode.out")"
    cat "$OUT/cuda-$mode.out"
  done
fi
if [[ " ${readers[*]} " == *" vulkan_reader "* ]]; then
  echo "-- vulkan_reader --spin --twice (GPU wait, the fence polled, each frame drawn again)"
  read_share vulkan_reader texcam vk-device-spin --spin --twice
  echo "-- vulkan_reader --spin --twice --queue compute (the same on a compute-only queue)"
  read_share vulkan_reader texcam vk-device-spin-compute --spin --twice --queue compute
  echo "-- vulkan_reader --host-wait --spin --twice (the host waits for the frame, one GPU hop: publisher -> renderer)"
  read_share vulkan_reader texcam vk-device-hostwait-spin --host-wait --spin --twice
  # The next frame's dispatch submitted before the frame exists, released by the publisher's own signal.
  echo "-- vulkan_reader --presubmit --spin (submitted before the frame, the publisher signals; fence polled)"
  read_share vulkan_reader texcam vk-device-presubmit-spin --presubmit --spin
  echo "-- vulkan_reader --presubmit (the same, vkWaitForFences)"
  read_share vulkan_reader texcam vk-device-presubmit --presubmit
  echo "-- vulkan_reader --presubmit --spin --queue compute (the same on a compute-only queue)"
  read_share vulkan_reader texcam vk-device-presubmit-spin-compute --presubmit --spin --queue compute
  for t in vk-device-presubmit-spin vk-device-presubmit vk-device-presubmit-spin-compute; do
    confirmed=$(sed -n 's/^presubmit confirmed=\([0-9]*\).*/\1/p' "$OUT/$t.out")
    [[ ${confirmed:-0} -gt 0 ]] || fail "$t: no frame was drawn from a presubmitted dispatch: $(grep '^presubmit' "$OUT/$t.out")"
  done
  # The publisher stalls (SIGSTOP, 3 s) under a presubmitted dispatch: the reader cancels it (the host
  # signals the semaphore after 2 s), asks nothing of the stopped publisher, reads on once it resumes and
  # presubmits again (a new semaphore), with no refusal.
  echo "-- vulkan_reader --presubmit --spin, the publisher stopped for 3 s (SIGSTOP) 2 s in"
  read_share vulkan_reader texcam vk-device-presubmit-stall --presubmit --spin --seconds $((SECONDS_READ + 6)) &
  reader_job=$!
  sleep 2; kill -STOP "$pub"; sleep 3; kill -CONT "$pub"
  wait "$reader_job" || fail "vulkan_reader did not live through the publisher's stall"
  stall=$(grep '^presubmit' "$OUT/vk-device-presubmit-stall.out")
  confirmed=$(sed -n 's/^presubmit confirmed=\([0-9]*\).*/\1/p' <<<"$stall")
  cancelled=$(sed -n 's/.* cancelled=\([0-9]*\).*/\1/p' <<<"$stall")
  [[ ${cancelled:-0} -ge 1 ]] || fail "the stall cancelled no presubmitted dispatch: $stall"
  [[ $stall != *reason=* ]] || fail "the stall stopped the presubmitted reads for good: $stall"
  # 2 s before the stall give at most 60 frames: more confirmed means presubmitting resumed after it.
  [[ ${confirmed:-0} -gt 90 ]] || fail "presubmitting did not resume after the stall: $stall"
fi
step "committed -> sampled, side by side (C publisher, 1280x720 NV12, same run)"
printf '%-28s %10s %10s %10s %10s %10s %8s\n' reader p50_us p99_us wake_us draw_us redraw_us ratio
base=$(grep -o 'committed_to_sampled_us_p50=[0-9.]*' "$OUT/cuda-default.out" 2>/dev/null | cut -d= -f2)
for t in cuda-default cuda-spin vk-device vk-device-hostwait vk-device-spin vk-device-spin-compute vk-device-hostwait-spin \
         vk-device-presubmit vk-device-presubmit-spin vk-device-presubmit-spin-compute gl-device; do
  f=$OUT/$t.out
  [[ -f $f ]] || continue
  line=$(grep '^ring=' "$f") || continue
  line+=" $(grep '^queue=' "$f" | tr '\n' ' ')"
  val() { tr ' ' '\n' <<<"$line" | sed -n "s/^$1=//p" | head -1; }  # whole names: draw_us_p50 is not redraw_us_p50
  p50=$(val committed_to_sampled_us_p50)
  ratio=$([[ -n $base && -n $p50 ]] && awk -v a="$p50" -v b="$base" 'BEGIN{printf "%.2fx", a/b}')
  printf '%-28s %10s %10s %10s %10s %10s %8s\n' "$t" "$p50" "$(val p99)" "$(val wake_us_p50)" "$(val draw_us_p50)" \
    "$(val redraw_us_p50)" "$ratio"
done
echo "(ratio: p50 over zerohop_cuda_sampler's with the default scheduling)"

step "for comparison: the C reader (CUDA) on the same publisher, capture -> host hand-off"
XDG_RUNTIME_DIR=$run_dir timeout 30 "$BUILD_DIR/ex-c_reader/c_reader" texcam 90 >"$OUT/c_reader.out" 2>&1
grep -o '[0-9.]* ms after capture' "$OUT/c_reader.out" | awk '{print $1}' | sort -n |
  awk '{v[NR]=$1} END {if (NR) printf "c_reader: %d frames, capture -> host p50 %.3f ms\n", NR, v[int((NR+1)/2)]; else print "c_reader: no frames"}'
kill "$pub" 2>/dev/null; wait "$pub" 2>/dev/null
tail -1 "$OUT/c_publisher.log"
rm -rf "$run_dir"

# SERVE_BUNDLE (a tarball of scripts/gpu-serve-bundle.sh): the same reader on `zerohop serve --gpu 0 --share`'s
# device ring (the test camera, its pixel timecode): imported in place, the drawn frame's timecode valid.
if [[ -n ${SERVE_BUNDLE:-} ]]; then
  step "serve --source test:1280x720@30 --gpu 0 --share texserve -> vulkan_reader (device ring, timecode)"
  . scripts/gpu-bundle-lib.sh
  status_before=$status
  tmp=$(mktemp -d /tmp/zh-tex-serve-XXXXXX)
  bundle_unpack "$SERVE_BUNDLE" "$tmp" >/dev/null
  bundle_environment >/dev/null
  status=$status_before
  run_dir=$(mktemp -d /tmp/zh-gpu-tex-XXXXXX)
  chmod 700 "$run_dir"
  env "${bundle_env[@]}" XDG_RUNTIME_DIR=$run_dir "$B/bin/zerohop" serve --source test:1280x720@30 --gpu 0 \
    --share texserve --listen 127.0.0.1:18503 >"$OUT/serve.log" 2>&1 &
  sp=$!
  for _ in $(seq 200); do [[ -S $run_dir/zerohop/texserve.sock ]] && break; sleep 0.1; done
  if [[ -S $run_dir/zerohop/texserve.sock ]]; then
   for reader in "${readers[@]}"; do
    tag=${reader%%_reader}; tag=${tag/vulkan/vk}-serve
    echo "-- $reader"
    read_share "$reader" texserve "$tag" || continue
    # The reader prints a timecode for host rings only (the CPU reads those); here the drawn PNG's strip is
    # read back (include/zerohop/timecode.hpp's geometry and CRC) and must be the drawn frame's sequence.
    drawn_seq=$(sed -n 's/^drawn seq=\([0-9]*\).*/\1/p' "$OUT/$tag.out")
    if png_tc=$(python3 - "$OUT/$tag.png" <<'PY'
import sys
sys.path.insert(0, "tests/package")
from png_frame_check import read_png, read_timecode  # the package test's PNG and timecode-strip readers
rgb = read_png(sys.argv[1])
tc = read_timecode(rgb)
if tc is None:
    print(f"PNG {rgb.shape[1]}x{rgb.shape[0]}: no timecode (no sync pattern, or its CRC is wrong)")
    sys.exit(1)
ms, seq = tc
print(f"PNG {rgb.shape[1]}x{rgb.shape[0]}: timecode seq {seq} ms {ms} crc ok")
PY
    ); then
      echo "$png_tc (drawn seq $drawn_seq)"
      [[ $png_tc == *"seq $((drawn_seq % 1048576)) "* ]] || fail "the PNG's timecode is not the drawn frame's ($drawn_seq)"
    else
      fail "the PNG $reader drew from serve's ring has no valid timecode: $png_tc"
    fi
   done
  else
    fail "serve did not publish texserve: $(grep -m2 -E 'error|warn' "$OUT/serve.log")"
  fi
  kill -INT "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
  grep -m1 'GPU path' "$OUT/serve.log"
  rm -rf "$run_dir" "$tmp"
fi

step "result"
echo "$last"
[[ $status -eq 0 ]] && echo "OK: device frames imported into ${readers[*]}, 0 bytes copied" || echo "FAILED (see above)"
exit $status
