# gpu-bundle-lib.sh: sourced (not run) by the scripts that run a bundle of scripts/gpu-serve-bundle.sh
# on the GPU machine (gpu-serve-check.sh, gpu-gst-check.sh): the checks' output, whether a GPU is
# expected, unpacking the bundle, and the environment that points the loader and GStreamer at it.
#
#   status, fail MSG, pass MSG, step TITLE   a failed check prints "FAIL: MSG" and sets status=1
#   bundle_start LOG LABEL PREFIX            OUT made absolute, everything also into $OUT/LOG,
#                                            bundle_machine LABEL, tmp=/tmp/PREFIX-XXXXXX; on exit
#                                            $serve_pid (if set) is killed and $tmp removed
#   bundle_machine LABEL                     prints the machine; sets expect_gpu (EXPECT_GPU=0|1, else
#                                            whether nvidia-smi -L lists a GPU) and says "LABEL: N"
#   bundle_unpack BUNDLE TMP                 unpacks into TMP (exit 1 on failure); sets B (its root)
#   bundle_environment [EXTRA_LIB_DIR]       sets bundle_env (an env(1) argument list) for the bundle's
#                                            programs: python3 and the checks keep the machine's own
#                                            libraries (the bundle's libexpat/libssl are older than what
#                                            the machine's were built against)

status=0
fail() { echo "FAIL: $*"; status=1; }
pass() { echo "ok: $*"; }
step() { echo; echo "==== $* ($(date -u +%H:%M:%S))"; }

bundle_machine() {
  step "machine"
  uname -srm
  . /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"
  if [[ -n ${EXPECT_GPU:-} ]]; then
    expect_gpu=$EXPECT_GPU
  elif command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    expect_gpu=1
  else
    expect_gpu=0
  fi
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "$1: $expect_gpu"
}

bundle_cleanup() {
  [[ -n ${serve_pid:-} ]] && kill -KILL "$serve_pid" 2>/dev/null
  rm -rf "$tmp"
}

bundle_start() {
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  exec > >(tee "$OUT/$1") 2>&1
  bundle_machine "$2"
  tmp=$(mktemp -d "/tmp/$3-XXXXXX")
  serve_pid=""
  trap bundle_cleanup EXIT
}

bundle_unpack() {
  step "unpack $1"
  [[ -f $1 ]] || { echo "FAIL: no $1 (make it with scripts/gpu-serve-bundle.sh and carry its folder)"; exit 1; }
  # tar needs xz(1); Python's tarfile (lzma) does where xz is not installed.
  tar -C "$2" -xJf "$1" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2" ||
    { echo "FAIL: unpacking $1"; exit 1; }
  B=$2/zerohop-serve
  cat "$B/BUNDLE-INFO"
}

bundle_environment() {
  # GIO_MODULE_DIR: an empty folder, so this glib loads none of the machine's GIO modules.
  mkdir -p "$tmp/gio-modules"
  local libs=$B/lib${1:+:$1}
  bundle_env=(
    LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    GST_PLUGIN_SYSTEM_PATH="$B/gst" GST_PLUGIN_SYSTEM_PATH_1_0="$B/gst" GST_PLUGIN_PATH="$B/gst" GST_PLUGIN_PATH_1_0="$B/gst"
    GST_PLUGIN_SCANNER="$B/libexec/gst-plugin-scanner" GST_PLUGIN_SCANNER_1_0="$B/libexec/gst-plugin-scanner"
    GST_REGISTRY="$tmp/gst-registry.bin" GST_REGISTRY_1_0="$tmp/gst-registry.bin"
    GIO_MODULE_DIR="$tmp/gio-modules"
  )
  printf '  %s\n' "${bundle_env[@]}"
}
