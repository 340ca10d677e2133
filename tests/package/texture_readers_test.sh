#!/usr/bin/env bash
# texture_readers_test.sh BUILD_DIR SOURCE_DIR: examples/vulkan_reader, built out of tree against the
# installed package, draws frames of `zerohop serve --share` through Vulkan (Mesa's lavapipe, on the CPU):
#   1. in place (VK_EXT_external_memory_host): 0 bytes copied, the PNG equals the frame it drew
#      (timecode strip and every pixel, tests/package/png_frame_check.py);
#   2. with the import refused (--copy: ImportOptions::forceCopy): the copy path, counted, said once,
#      and the PNG still equals the frame.
# Exits 77 (skipped) where no Vulkan headers or lavapipe are installed (scripts/install-deps.sh has them).
set -euo pipefail
build=$1 src=$2
icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
[[ -f $icd ]] || { echo "SKIP: no lavapipe ($icd; Debian: mesa-vulkan-drivers)"; exit 77; }
[[ -f /usr/include/vulkan/vulkan.h ]] || { echo "SKIP: no Vulkan headers (Debian: libvulkan-dev)"; exit 77; }
work=$(mktemp -d /tmp/zh-textures-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

step "install, then build examples/vulkan_reader against the installed package"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
[[ -f $prefix/include/zerohop/vulkan.hpp ]] || fail "zerohop/vulkan.hpp is not installed"
cmake -S "$src/examples/vulkan_reader" -B "$work/vulkan_reader" -DCMAKE_PREFIX_PATH="$prefix" >"$work/build.log" 2>&1 &&
  cmake --build "$work/vulkan_reader" >>"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "vulkan_reader does not build"; }

export XDG_RUNTIME_DIR=$work/run VK_ICD_FILENAMES=$icd
mkdir -m 0700 "$XDG_RUNTIME_DIR"
share=tex$$
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
"$prefix/bin/zerohop" serve --source test:656x368@30 --listen "127.0.0.1:$(free_port)" --share "$share" --status-interval 60 \
  >"$work/serve.log" 2>&1 &
pids+=($!)

run_reader() {  # run_reader TAG [ARGS...]: the reader's stdout in $work/TAG.out, stderr in $work/TAG.err
  local tag=$1; shift
  timeout 60 "$work/vulkan_reader/vulkan_reader" "$share" "$work/$tag.png" --seconds 1.5 --raw "$work/$tag.raw" "$@" \
    >"$work/$tag.out" 2>"$work/$tag.err" ||
    { cat "$work/$tag.out" "$work/$tag.err"; tail -5 "$work/serve.log"; fail "vulkan_reader $* exited with $?"; }
  cat "$work/$tag.out"
  last=$(tail -1 "$work/$tag.out")
  [[ $last =~ ^frames=([0-9]+)\ copied_bytes=([0-9]+)\ import_us_p50=([0-9.]+)$ ]] || fail "last line is '$last'"
  frames=${BASH_REMATCH[1]} copied=${BASH_REMATCH[2]}
  ((frames >= 5)) || fail "only $frames frames drawn in 1.5 s"
  /usr/bin/python3 "$src/tests/package/png_frame_check.py" "$work/$tag.png" "$work/$tag.raw" "$work/$tag.out" ||
    fail "the PNG of the $tag run is not the frame it drew"
}

step "in place: frames imported with VK_EXT_external_memory_host, nothing copied, the PNG is the frame"
run_reader import
grep -q 'enabled' "$work/import.err" || { cat "$work/import.err"; fail "lavapipe did not offer VK_EXT_external_memory_host"; }
grep -qx 'path=import' "$work/import.out" || fail "frames were not imported in place: $(grep '^path=' "$work/import.out")"
((copied == 0)) || fail "$copied bytes copied on the import path"

step "import refused (--copy): one counted copy per frame, said once, the PNG is the frame"
run_reader copy --copy
grep -q '^path=copy reason=' "$work/copy.out" || fail "the copy path was not taken: $(grep '^path=' "$work/copy.out")"
# 656x368 I420 with serve's 64-byte pitch alignment (rows longer than the image: the pitches are read
# right): Y 704 x 368, U and V 384 x 184 each.
frame_bytes=$((704 * 368 + 2 * 384 * 184))
((copied == frames * frame_bytes)) || fail "copied_bytes=$copied, expected $frames frames x $frame_bytes bytes"
said=$(grep -c 'copied, not imported' "$work/copy.err" || true)
((said == 1)) || { cat "$work/copy.err"; fail "the refusal was said $said times, expected once"; }
echo "textures: all checks passed"
