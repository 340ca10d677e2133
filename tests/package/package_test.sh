#!/usr/bin/env bash
# package_test.sh BUILD_DIR SOURCE_DIR ZEROHOP_CLI: see CMakeLists.txt. Each step says what it checks;
# the first failure stops the test with its reason.
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d /tmp/zh-package-XXXXXX)
prefix=$work/prefix
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- [${SECONDS} s] $*"; }  # the time since the start: where the test spends it

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
libdir=$(dirname "$(find "$prefix" -name 'libzerohop.so.*.*.*' | head -1)")
[[ -n $libdir && -f $libdir/libzerohop.so ]] || fail "no libzerohop.so (with its version links) installed"
for f in "$prefix/bin/zerohop" "$prefix/bin/zerohop-camemu" "$libdir/zerohop/libzerohop_camemu.so" \
         "$libdir/cmake/zerohop/zerohopConfig.cmake" "$libdir/cmake/zerohop/zerohopConfigVersion.cmake" \
         "$libdir/pkgconfig/zerohop.pc" "$prefix/include/zerohop/version.h" "$prefix/include/zerohop/zerohop.h"; do
  [[ -e $f ]] || fail "not installed: ${f#$prefix/}"
done
soname=$(readelf -d "$libdir/libzerohop.so" | sed -nE 's/.*SONAME.*\[(.*)\]/\1/p')
[[ $soname == libzerohop.so.0 ]] || fail "SONAME is '$soname', expected libzerohop.so.0"
if find "$prefix/include" -name '*.hpp' -path '*internal*' | grep -q .; then fail "internal headers installed"; fi
if [[ -f $build/lib/gstreamer-1.0/libgstzerohop.so ]]; then  # media builds: the GStreamer plugin
  step "the installed GStreamer plugin loads (gst-inspect-1.0 zerohopsrc)"
  GST_PLUGIN_PATH=$libdir/gstreamer-1.0 GST_REGISTRY=$work/gst-registry.bin gst-inspect-1.0 zerohopsrc >/dev/null ||
    fail "gst-inspect-1.0 cannot load $libdir/gstreamer-1.0/libgstzerohop.so"
fi
if [[ -f $build/lib/libzerohop-nvrtc-compat.so ]]; then  # CUDA builds: NVRTC for GStreamer 1.22's CUDA elements
  step "the installed NVRTC compatibility library exports NVRTC's calls"
  compat=$libdir/zerohop/libzerohop-nvrtc-compat.so
  [[ -f $compat ]] || fail "not installed: ${compat#$prefix/}"
  nm -D --defined-only "$compat" | grep -q ' T nvrtcCompileProgram$' || fail "$compat does not export nvrtcCompileProgram"
fi

step "examples build out of tree against the installed package (in the background, while the headers are checked)"
# Each example is configured and built alone, as a user does, in a folder of its own. They share nothing,
# so they run side by side and beside the header checks below: most of a configure is CMake waiting for
# one compiler check after another (in a row, the five took 39 s of this test on the loaded 2-core box).
example_pids=() example_names=()
build_example() {  # build_example NAME [CMAKE-ARGS...]: examples/NAME into $work/NAME in the background, log $work/NAME.log
  local ex=$1
  shift
  { cmake -S "$src/examples/$ex" -B "$work/$ex" -DCMAKE_PREFIX_PATH="$prefix" "$@" && cmake --build "$work/$ex"; } \
    >"$work/$ex.log" 2>&1 &
  example_pids+=($!) example_names+=("$ex")
}
for ex in c_reader cpp_reader c_publisher cpp_streamer unit_sink; do build_example "$ex"; done
# Your own NVENC session on a device share's frames (docs/plugin-guide.md): it must build with nv-codec-headers
# and no NVIDIA library, and, on a machine without the driver, start and say why it cannot encode.
nvenc_headers=""
for d in /usr/include/ffnvcodec "$src/.deps/ffnvcodec"; do [[ -f $d/nvEncodeAPI.h ]] && nvenc_headers=$d && break; done
if [[ -n $nvenc_headers ]]; then build_example nvenc_reader -DNVENC_INCLUDE_DIR="$nvenc_headers"; fi

step "every installed header compiles alone, with no SDK include path"
# No public header may include CUDA, V4L2, FFmpeg or GStreamer (they would compile here only
# because some of those live in the default include path).
if grep -nE '#include *[<"](cuda|nvjpeg|nvEncodeAPI|linux/videodev2|libav|gst/|glib)' -r "$prefix/include"; then
  fail "a public header includes an SDK header"
fi
# One compiler per header, nproc of them at a time (one after another they took 165 s of this test on
# the loaded 2-core box); each writes its exit status to $work/headers/NAME.rc and its messages to NAME.log.
check_header() {  # check_header NAME: NAME compiles alone (C99 too for a .h); 0 when it does or is not checked here
  local name=$1 sdk=()
  case $name in
    *.h) printf '#include <zerohop/%s>\nint header_check;\n' "$name" | gcc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" -x c - \
           || { echo "$name does not compile alone as C99"; return 1; } ;;
    *) ;;
  esac
  if [[ $name == opencv.hpp ]]; then  # the opt-in OpenCV views: OpenCV's include path, nothing else
    pkg-config --exists opencv4 || { echo "  (opencv.hpp: no opencv4 here, not compiled)"; return 0; }
    read -ra sdk <<<"$(pkg-config --cflags opencv4 | sed "s/-I/-isystem /g")"  # its own warnings are not ours
  fi
  if [[ $name == vulkan.hpp ]]; then  # the opt-in Vulkan import: Vulkan's headers, nothing else
    pkg-config --exists vulkan || { echo "  (vulkan.hpp: no Vulkan headers here, not compiled)"; return 0; }
    read -ra sdk <<<"$(pkg-config --cflags vulkan | sed "s/-I/-isystem /g")"
  fi
  echo "#include <zerohop/$name>" | g++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" "${sdk[@]}" -x c++ - \
    || { echo "$name does not compile alone as C++20"; return 1; }
}
mkdir "$work/headers"
export -f check_header
export prefix
find "$prefix/include/zerohop" -maxdepth 1 -type f -printf '%f\n' | sort >"$work/headers/list"
# shellcheck disable=SC2016 # $1 and $2 are the inner bash's
xargs -P "$(nproc)" -I{} bash -c 'rc=0; check_header "$1" >"$2/$1.log" 2>&1 || rc=$?; echo "$rc" >"$2/$1.rc"' \
  check_header {} "$work/headers" <"$work/headers/list"
headers_failed=0
while read -r name; do
  cat "$work/headers/$name.log"
  [[ $(cat "$work/headers/$name.rc" 2>/dev/null) == 0 ]] || headers_failed=1
done <"$work/headers/list"
((headers_failed == 0)) || fail "a public header does not compile alone (above)"

step "libzerohop exports zerohop's own symbols only"
# Names without their version suffix (@@ZEROHOP_0), demangled.
exported=$(nm -D --defined-only "$libdir/libzerohop.so" | awk '{print $3}' | sed 's/@.*//' | c++filt)
foreign=$(echo "$exported" |
          grep -vE '^(zh_|zerohop::|typeinfo for zerohop::|typeinfo name for zerohop::|vtable for zerohop::|ZEROHOP_0$)' || true)
[[ -z $foreign ]] || { echo "$foreign" | head -20; fail "foreign symbols exported ($(echo "$foreign" | wc -l))"; }
grep -qx 'zh_reader_open' <<<"$exported" || fail "zh_reader_open not exported"
grep -q '^zerohop::Subscriber::next' <<<"$exported" || fail "zerohop::Subscriber::next not exported"
nm -D --defined-only "$libdir/libzerohop.so" | grep -q 'zh_reader_open@@ZEROHOP_0' || fail "symbols are not versioned ZEROHOP_0"

for i in "${!example_pids[@]}"; do
  wait "${example_pids[$i]}" || { cat "$work/${example_names[$i]}.log"; fail "example ${example_names[$i]} does not build"; }
done
step "examples built"
if [[ -n $nvenc_headers ]]; then
  if ! ldconfig -p | grep -qE 'lib(cuda|nvidia-encode)\.so\.1 '; then
    rc=0
    out=$(timeout 30 "$work/nvenc_reader/nvenc_reader" nosuchshare 2>&1) || rc=$?
    [[ $rc -eq 3 && $out == *"cannot encode on this machine: libcuda.so.1"* ]] ||
      fail "nvenc_reader without the NVIDIA driver: exit $rc, '$out' (expected 3, saying it cannot encode and why)"
    echo "  nvenc_reader built; without the driver it exits 3 saying why"
  else
    echo "  (nvenc_reader built; the NVIDIA driver is here, so its no-driver refusal is not checked)"
  fi
else
  echo "  (nvenc_reader: no nvEncodeAPI.h (libffmpeg-nvenc-dev), not built)"
fi
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046 # pkg-config's words
gcc -std=c99 -Wall -Werror -o "$work/c_reader_pc" "$src/examples/c_reader/main.c" $(pkg-config --cflags --libs zerohop) ||
  fail "the C reader does not build with pkg-config's flags"

step "the C and C++ readers read 60 frames from zerohop serve --share"
export XDG_RUNTIME_DIR=$work/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"
share=pkg$$
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
"$prefix/bin/zerohop" serve --source test:640x360@30 --listen "127.0.0.1:$(free_port)" --share "$share" --status-interval 60 \
  >"$work/serve.log" 2>&1 &
pids+=($!)
for reader in "$work/c_reader/c_reader" "$work/cpp_reader/cpp_reader"; do
  out=$(timeout 30 "$reader" "$share" 60) || { echo "$out" | tail -5; cat "$work/serve.log"; fail "$(basename "$reader") failed"; }
  n=$(grep -c 'timecode ok' <<<"$out" || true)
  [[ $n -eq 60 ]] || { echo "$out" | tail -5; fail "$(basename "$reader"): $n of 60 frames had a valid timecode"; }
done
# No LD_LIBRARY_PATH: zerohop.pc's rpath finds the library (docs/library.md).
out=$(timeout 30 "$work/c_reader_pc" "$share" 10) || fail "the pkg-config-built reader failed: $out"
[[ $(pkg-config --variable=cxx_std zerohop) == c++20 ]] || fail "zerohop.pc does not state the C++ standard"

step "the C publisher's frames, read by zerohop tap and the Python module"
"$work/c_publisher/c_publisher" cpub$$ host 450 >"$work/cpub.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S $XDG_RUNTIME_DIR/zerohop/cpub$$.sock ]] && break; sleep 0.1; done
tap=$(timeout 30 "$prefix/bin/zerohop" tap "cpub$$" --count 10 --json --timeout 10) || fail "zerohop tap: $tap"
[[ $(grep -c '"format": *"nv12"' <<<"$tap") -eq 10 ]] || { echo "$tap" | head -3; fail "tap did not read 10 NV12 frames"; }
if [[ -d $build/python ]] && ls "$build"/python/zerohop*.so >/dev/null 2>&1; then
  PYTHONPATH=$build/python timeout 30 /usr/bin/python3 - "cpub$$" <<'PY' || fail "the Python module could not read the C publisher's frames"
import sys, numpy, zerohop
sub = zerohop.Subscriber(sys.argv[1])
for _ in range(5):
    with sub.next(timeout=2.0) as f:
        luma = numpy.from_dlpack(f)
        assert f.format == "nv12", f.format
        assert luma.shape == (720, 1280), luma.shape
        assert (luma == f.seq % 256).all(), (f.seq, luma[0, 0])
        print("python read seq", f.seq, "luma", luma[0, 0])
PY
fi
step "a UnitSink of the program's own takes whole H.264 units and its PLI brings a keyframe (docs/plugin-guide.md)"
timeout 60 "$work/unit_sink/unit_sink" --units 60 || fail "the unit_sink example (rc $?)"
step "a program streaming its own frames (FrameStream), and serve --source share:NAME, play in Chromium"
# test_viewer.py skips (77) without chromium/chromedriver/selenium; here that is a failure only if CI requires it.
viewer=$src/tests/browser/test_viewer.py
/usr/bin/python3 "$viewer" --netns --seconds 6 --artifacts "$work" \
  --command "$work/cpp_streamer/cpp_streamer --listen {listen} --size 640x360" "$prefix/bin/zerohop" ||
  fail "the FrameStream example did not play (rc $?)"
WAIT_SHARE=up$$ /usr/bin/python3 "$viewer" --netns --seconds 6 --artifacts "$work" --source "share:up$$" \
  "--wrap=$src/tests/browser/with_publisher.sh $prefix/bin/zerohop serve --source test:640x360@30 --listen 127.0.0.1:18999 --share up$$ --status-interval 60 --" \
  "$prefix/bin/zerohop" || fail "serve --source share:NAME did not play (rc $?)"
echo "package: all checks passed"
