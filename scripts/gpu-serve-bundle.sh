#!/usr/bin/env bash
# gpu-serve-bundle.sh: pack a built `zerohop` with the shared libraries and GStreamer plugins `serve`
# loads into one tarball, so `serve` runs on a machine without Debian's FFmpeg/GStreamer (the GPU
# machine: Ubuntu 24.04, CUDA, no media libraries). scripts/gpu-serve-check.sh unpacks and runs it.
#
# Usage (repository root or anywhere):
#   cmake --build BUILD_DIR --target zerohop zerohop-whep-receive zerohop-camemu zerohop_camemu
#   scripts/gpu-serve-bundle.sh [BUILD_DIR]        default BUILD_DIR: build-nvenc
#   Then, through the device tool:
#     run(carry: [".gpu-bundle"], command: "bash scripts/gpu-serve-check.sh")
#
# What goes in (BUNDLE_DIR, default .gpu-bundle/, git-ignored; one file zerohop-serve.tar.xz):
#   bin/zerohop, bin/gst-inspect-1.0, libexec/gst-plugin-scanner
#   bin/zerohop-whep-receive (tests/stream/whep_receive.cpp: an independent WHEP viewer that decodes
#           the video and reads its pixel timecodes; gpu-serve-check.sh proves video arrives with it)
#   bin/zerohop-camemu, bin/libzerohop_camemu.so (the emulated V4L2 camera, an LD_PRELOAD shim: the
#           launcher finds the shim beside itself), when BUILD_DIR has them
#   gst/    (and BUNDLE_GST_EXTRA: more plugins, see below) the plugins serve's elements live in (src/stream: appsrc, rtph264pay, webrtcbin, dtlssrtpenc,
#           nicesink, rtpbin, and what webrtcbin builds inside: srtpenc, rtpfunnel, rtprtxsend, queue;
#           udpsink/udpsrc for --janus; h264parse for the receiver): app rtp webrtc dtls srtp nice
#           rtpmanager udp coreelements videoparsersbad
#   lib/    the ldd closure of all of the above and of RUNTIME_LOADED, minus glibc, libstdc++ and
#           libgcc_s (the target's are newer and the binaries need no newer symbols than this machine's
#           glibc gives), minus the NVIDIA driver's libraries (zerohop dlopens libcuda/libnvcuvid/
#           libnvidia-encode from the host)
#   lib/ also: RUNTIME_LOADED, the libraries something in the bundle dlopen()s by name, which ldd cannot
#           see. libsrtp2 (the srtp plugin) does its ciphers through NSS, and NSS loads its PKCS#11
#           token libsoftokn3.so, which loads libfreeblpriv3.so (and libnssdbm3.so for a database),
#           from the folder libnss3.so was loaded from; each has a .chk (its signature for NSS's
#           integrity self-test), so these are copied unstripped with their .chk. Without them serve
#           logs "Could not initialize SRTP encoder" once DTLS is done and no viewer gets a frame.
#           Not needed: GIO modules (gpu-serve-check.sh points GIO_MODULE_DIR at an empty folder; nothing
#           here uses TLS or proxies through GIO), glibc's own (NSS name services, gconv: the target's
#           glibc brings them). gpu-serve-check.sh fails on any library serve or the receiver loads from
#           outside the bundle (LD_DEBUG=files), other than the C/C++ runtime and the NVIDIA driver.
# Every other file is a `strip --strip-unneeded` copy. BUNDLE_XZ_LEVEL (default -9e): xz's level; -6 packs
# several times faster on a busy 2-core box, a few MiB larger. The tool's carry limit is 64 MiB for everything
# that travels: the script fails when the tarball is larger than BUNDLE_MAX_MIB (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${1:-build-nvenc}
BUNDLE_DIR=${BUNDLE_DIR:-.gpu-bundle}
BUNDLE_MAX_MIB=${BUNDLE_MAX_MIB:-60}
GST_PLUGINS=(app rtp webrtc dtls srtp nice rtpmanager udp coreelements videoparsersbad)
RUNTIME_LOADED=(libsoftokn3.so libfreeblpriv3.so libfreebl3.so libnssdbm3.so)

exe=$BUILD_DIR/apps/zerohop/zerohop
[[ -x $exe ]] || { echo "no $exe: build it first (cmake --build $BUILD_DIR --target zerohop)" >&2; exit 1; }
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
plugin_dir=$(pkg-config --variable=pluginsdir gstreamer-1.0 2>/dev/null || echo "/usr/lib/$multiarch/gstreamer-1.0")
scanner=$(pkg-config --variable=pluginscannerdir gstreamer-1.0 2>/dev/null || true)
scanner=${scanner:-/usr/lib/$multiarch/gstreamer1.0/gstreamer-1.0}/gst-plugin-scanner
inspect=$(command -v gst-inspect-1.0 || true)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/zerohop-serve
mkdir -p "$root/bin" "$root/libexec" "$root/gst" "$root/lib"

copy_stripped() {  # SRC DEST: a stripped copy (a file strip cannot handle is copied as it is)
  cp -L "$1" "$2"
  chmod u+w "$2"
  strip --strip-unneeded "$2" 2>/dev/null || true
}

elves=("$exe" "$scanner")
copy_stripped "$exe" "$root/bin/zerohop"
copy_stripped "$scanner" "$root/libexec/gst-plugin-scanner"
if [[ -n $inspect ]]; then
  elves+=("$inspect")
  copy_stripped "$inspect" "$root/bin/gst-inspect-1.0"
fi
receiver=$BUILD_DIR/tests/stream/zerohop-whep-receive
[[ -x $receiver ]] || { echo "no $receiver: build it first (cmake --build $BUILD_DIR --target zerohop-whep-receive)" >&2; exit 1; }
elves+=("$receiver")
copy_stripped "$receiver" "$root/bin/zerohop-whep-receive"
camemu=$BUILD_DIR/src/camemu/zerohop-camemu
if [[ -x $camemu && -f ${camemu%/*}/libzerohop_camemu.so ]]; then
  elves+=("$camemu" "${camemu%/*}/libzerohop_camemu.so")
  copy_stripped "$camemu" "$root/bin/zerohop-camemu"
  copy_stripped "${camemu%/*}/libzerohop_camemu.so" "$root/bin/libzerohop_camemu.so"
else
  echo "note: no $camemu: the bundle has no emulated camera (build target zerohop-camemu to add it)" >&2
fi
# BUNDLE_EXTRA: more programs of the build to carry (e.g. a gpu test of a media part, such as
# tests/ffmpeg/zerohop_ffmpeg_gpu_test), into bin/ with their libraries.
for x in ${BUNDLE_EXTRA:-}; do
  [[ -x $x ]] || { echo "BUNDLE_EXTRA: no program $x" >&2; exit 1; }
  elves+=("$x")
  copy_stripped "$x" "$root/bin/$(basename "$x")"
done
for p in "${GST_PLUGINS[@]}"; do
  f=$plugin_dir/libgst$p.so
  [[ -f $f ]] || { echo "missing GStreamer plugin $f (scripts/install-deps.sh)" >&2; exit 1; }
  elves+=("$f")
  copy_stripped "$f" "$root/gst/"
done
# BUNDLE_GST_EXTRA: more GStreamer plugins into gst/ with their libraries: a name (libgstNAME.so from
# this machine's plugin folder, e.g. nvcodec) or a path (a plugin of the build, e.g.
# build/lib/gstreamer-1.0/libgstzerohop.so). scripts/gpu-gst-check.sh says which it needs.
for p in ${BUNDLE_GST_EXTRA:-}; do
  if [[ $p == */* ]]; then f=$p; else f=$plugin_dir/libgst$p.so; fi
  [[ -f $f ]] || { echo "BUNDLE_GST_EXTRA: no GStreamer plugin $f" >&2; exit 1; }
  elves+=("$f")
  copy_stripped "$f" "$root/gst/"
done

# The run-time-loaded libraries, from the folder the bundled libnss3.so comes from.
nss_dir=$(dirname "$(ldd "$plugin_dir/libgstsrtp.so" | awk '$1 == "libnss3.so" {print $3}')")
for l in "${RUNTIME_LOADED[@]}"; do
  [[ -f $nss_dir/$l ]] || { echo "missing $nss_dir/$l, which NSS loads at run time (libnss3)" >&2; exit 1; }
  cp -L "$nss_dir/$l" "$root/lib/$l"
  if [[ -f $nss_dir/${l%.so}.chk ]]; then cp -L "$nss_dir/${l%.so}.chk" "$root/lib/"; fi
  elves+=("$nss_dir/$l")
done

# BUNDLE_STUB: libraries of the closure to replace by stand-ins (scripts/gpu-bundle-stub.py: the same
# SONAME and symbols, functions that abort if called), by file-name prefix, e.g. "libflite libplacebo
# liblapack libblas libgfortran librsvg" for Debian's libavfilter and libavcodec, which link them for
# filters and decoders the scale_cuda test and serve never use (their ~50 MiB would not travel; 58 MiB
# packed with them left out). The closure is then taken through the stand-ins, so what only they needed
# stays behind too.
stub_dir=$stage/stubs
mkdir -p "$stub_dir"
if [[ -n ${BUNDLE_STUB:-} ]]; then
  for l in $(ldd "${elves[@]}" | awk '/=> \// {print $3}' | sort -u); do
    for p in $BUNDLE_STUB; do
      if [[ $(basename "$l") == "$p"* ]]; then python3 scripts/gpu-bundle-stub.py "$l" "$stub_dir"; break; fi
    done
  done
fi
closure() { LD_LIBRARY_PATH="$stub_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "${elves[@]}"; }

# The closure: ldd already follows DT_NEEDED transitively. "not found" fails the bundle.
if closure | grep -q 'not found'; then
  closure | grep 'not found' >&2
  exit 1
fi
skip='/(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libnvidia-[a-z-]+|libnvcuvid)\.so'
mapfile -t libs < <(closure | awk '/=> \// {print $3}' | sort -u | grep -vE "$skip")
for l in "${libs[@]}"; do
  [[ -e $root/lib/$(basename "$l") ]] || copy_stripped "$l" "$root/lib/$(basename "$l")"
done

# The commit of the tree BUILD_DIR was configured from (not of whatever repository the current
# directory or this script happens to sit in): its HEAD, if that tree is itself a git checkout's root.
src_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null)
source="unknown (no CMAKE_HOME_DIRECTORY in $BUILD_DIR/CMakeCache.txt)"
if [[ -n $src_dir ]]; then
  top=$(git -C "$src_dir" rev-parse --show-toplevel 2>/dev/null || true)
  if [[ -n $top && $(realpath "$top") == $(realpath "$src_dir") ]]; then
    source="$(git -C "$src_dir" rev-parse --short HEAD) in $src_dir"
    git -C "$src_dir" diff --quiet HEAD 2>/dev/null || source+=" (+ uncommitted changes)"
  else
    source="unknown ($src_dir is not a git checkout's root)"
  fi
fi
{
  echo "zerohop serve bundle"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}')"
  echo "source: $source"
  echo "gstreamer: $(pkg-config --modversion gstreamer-1.0 2>/dev/null || echo unknown)"
  echo "plugins: ${GST_PLUGINS[*]} ${BUNDLE_GST_EXTRA:-}"
  echo "libraries: ${#libs[@]} (run-time loaded: ${RUNTIME_LOADED[*]})"
  echo "stand-ins (abort if called): $(ls "$stub_dir" | tr '\n' ' ')"
} > "$root/BUNDLE-INFO"

mkdir -p "$BUNDLE_DIR"
tarball=$BUNDLE_DIR/zerohop-serve.tar.xz
raw=$(du -sb "$root" | cut -f1)
tar -C "$stage" -cf - zerohop-serve | xz -T2 "${BUNDLE_XZ_LEVEL:--9e}" > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
size=$(stat -c %s "$tarball")
printf '%s: %d files, %.1f MiB unpacked, %.1f MiB packed (limit %d MiB)\n' "$tarball" \
  "$(find "$root" -type f | wc -l)" "$(echo "$raw / 1048576" | bc -l)" "$(echo "$size / 1048576" | bc -l)" "$BUNDLE_MAX_MIB"
if (( size > BUNDLE_MAX_MIB * 1048576 )); then
  echo "the bundle is over $BUNDLE_MAX_MIB MiB: it will not travel with the device tool's 64 MiB carry" >&2
  exit 1
fi
