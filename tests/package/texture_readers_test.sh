#!/usr/bin/env bash
# texture_readers_test.sh BUILD_DIR SOURCE_DIR: examples/vulkan_reader and examples/gl_reader, built out of
# tree against the installed package, draw frames of `zerohop serve --share` through Vulkan (Mesa's
# lavapipe) and OpenGL (Mesa's llvmpipe through EGL, no window), both on the CPU. Each reader:
#   1. in place (VK_EXT_external_memory_host; GL_AMD_pinned_memory): 0 bytes copied, the PNG equals the
#      frame it drew (timecode strip and every pixel, tests/package/png_frame_check.py);
#   2. with the import refused (--copy): the copy path, every byte counted, said once, and the PNG
#      still equals the frame.
# Exits 77 (skipped) where no Vulkan/EGL headers or lavapipe are installed (scripts/install-deps.sh has them).
set -euo pipefail
build=$1 src=$2
icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
[[ -f $icd ]] || { echo "SKIP: no lavapipe ($icd; Debian: mesa-vulkan-drivers)"; exit 77; }
[[ -f /usr/include/vulkan/vulkan.h ]] || { echo "SKIP: no Vulkan headers (Debian: libvulkan-dev)"; exit 77; }
[[ -f /usr/include/EGL/egl.h && -f /usr/include/GL/gl.h ]] || { echo "SKIP: no EGL/OpenGL headers (Debian: libegl-dev, libgl-dev)"; exit 77; }
work=$(mktemp -d /tmp/zh-textures-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- [${SECONDS} s] $*"; }  # the time since the start: where the test spends it

step "install, then build examples/vulkan_reader and examples/gl_reader against the installed package"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
[[ -f $prefix/include/zerohop/vulkan.hpp ]] || fail "zerohop/vulkan.hpp is not installed"
# Each its own project in its own folder, as a user builds it; the two side by side (they share nothing).
readers=(vulkan_reader gl_reader) builds=()
for ex in "${readers[@]}"; do
  { cmake -S "$src/examples/$ex" -B "$work/$ex" -DCMAKE_PREFIX_PATH="$prefix" && cmake --build "$work/$ex"; } \
    >"$work/$ex.log" 2>&1 &
  builds+=($!)
done
for i in "${!readers[@]}"; do
  wait "${builds[$i]}" || { cat "$work/${readers[$i]}.log"; fail "${readers[$i]} does not build"; }
done

export XDG_RUNTIME_DIR=$work/run VK_ICD_FILENAMES=$icd
mkdir -m 0700 "$XDG_RUNTIME_DIR"
share=tex$$
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
"$prefix/bin/zerohop" serve --source test:656x368@30 --listen "127.0.0.1:$(free_port)" --share "$share" --status-interval 60 \
  >"$work/serve.log" 2>&1 &
pids+=($!)

run_reader() {  # run_reader READER TAG [ARGS...]: the reader's stdout in $work/TAG.out, stderr in $work/TAG.err
  local reader=$1 tag=$2; shift 2
  timeout 60 "$work/$reader/$reader" "$share" "$work/$tag.png" --seconds 1.5 --raw "$work/$tag.raw" "$@" \
    >"$work/$tag.out" 2>"$work/$tag.err" ||
    { cat "$work/$tag.out" "$work/$tag.err"; tail -5 "$work/serve.log"; fail "$reader $* exited with $?"; }
  cat "$work/$tag.out"
  last=$(tail -1 "$work/$tag.out")
  [[ $last =~ ^frames=([0-9]+)\ copied_bytes=([0-9]+)\ import_us_p50=([0-9.]+)$ ]] || fail "last line is '$last'"
  frames=${BASH_REMATCH[1]} copied=${BASH_REMATCH[2]}
  ((frames >= 5)) || fail "only $frames frames drawn in 1.5 s"
  /usr/bin/python3 "$src/tests/package/png_frame_check.py" "$work/$tag.png" "$work/$tag.raw" "$work/$tag.out" ||
    fail "the PNG of the $tag run is not the frame it drew"
}

# 656x368 I420 with serve's 64-byte pitch alignment (rows longer than the image: the pitches are read
# right): Y 704 x 368, U and V 384 x 184 each.
frame_bytes=$((704 * 368 + 2 * 384 * 184))
check_copy_path() {  # check_copy_path TAG: the refused import took the copy path, counted, said once
  local tag=$1
  grep -q '^path=copy reason=' "$work/$tag.out" || fail "$tag: the copy path was not taken: $(grep '^path=' "$work/$tag.out")"
  ((copied == frames * frame_bytes)) || fail "$tag: copied_bytes=$copied, expected $frames frames x $frame_bytes bytes"
  said=$(grep -c 'copied, not imported' "$work/$tag.err" || true)
  ((said == 1)) || { cat "$work/$tag.err"; fail "$tag: the refusal was said $said times, expected once"; }
}

step "Vulkan in place: frames imported with VK_EXT_external_memory_host, nothing copied, the PNG is the frame"
run_reader vulkan_reader vk
grep -q 'enabled' "$work/vk.err" || { cat "$work/vk.err"; fail "lavapipe did not offer VK_EXT_external_memory_host"; }
grep -qx 'path=import' "$work/vk.out" || fail "frames were not imported in place: $(grep '^path=' "$work/vk.out")"
((copied == 0)) || fail "$copied bytes copied on the import path"

step "Vulkan, import refused (--copy): one counted copy per frame, said once, the PNG is the frame"
run_reader vulkan_reader vk-copy --copy
check_copy_path vk-copy

step "OpenGL in place: frames as GL_AMD_pinned_memory buffers over the slot, nothing copied, the PNG is the frame"
run_reader gl_reader gl
grep -qx 'path=import' "$work/gl.out" || fail "frames were not imported in place: $(grep '^path=' "$work/gl.out")"
((copied == 0)) || fail "$copied bytes copied on the import path"

step "OpenGL, import refused (--copy): one counted copy per frame, said once, the PNG is the frame"
run_reader gl_reader gl-copy --copy
check_copy_path gl-copy
echo "textures: all checks passed"
