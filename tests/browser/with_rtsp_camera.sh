#!/usr/bin/env bash
# with_rtsp_camera.sh ZEROHOP RTSP_CAMERA_PY SHARE -- COMMAND...: an IP camera whose picture carries the test
# camera's pixel timecode, for browser tests of `serve --source rtsp://...`:
#   zerohop serve --source test:640x360@30 --share SHARE  ->  rtsp_camera.py --share SHARE
#   (GstRtspServer: zerohopsrc ! videoconvert ! x264enc tune=zerolatency ! rtph264pay)
# then runs COMMAND with every @RTSP_PORT@ in its arguments replaced by the camera's port (the kernel's
# choice), SIGINT/SIGTERM passed on to it; stops both when it ends and exits with its status.
# Needs GST_PLUGIN_PATH naming the zerohop GStreamer plugin. Logs: $CHAIN_LOG (default /dev/null).
set -u
zerohop=$1 camera=$2 share="$3-$$"  # unique per run: tests may run side by side
shift 3
[[ ${1:-} == -- ]] && shift
log=${CHAIN_LOG:-/dev/null}
dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/zerohop}
dir=${dir:-/tmp/zerohop-$(id -u)}
upPort=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
camOut=$(mktemp)
up="" cam="" child=""
cleanup() {
  [[ -n $cam ]] && kill -TERM "$cam" 2>/dev/null
  [[ -n $up ]] && kill -INT "$up" 2>/dev/null
  wait "$cam" "$up" 2>/dev/null
  rm -f "$camOut"
}
fail() { echo "with_rtsp_camera.sh: $*" >&2; cleanup; exit 1; }

"$zerohop" serve --source test:640x360@30 --share "$share" --listen "127.0.0.1:$upPort" --status-interval 60 \
  >>"$log" 2>&1 &
up=$!
# 30 s: serve starts WebRTC before it publishes; seconds under ASan on two busy cores
for _ in $(seq 300); do [[ -S $dir/$share.sock ]] && break; sleep 0.1; done
[[ -S $dir/$share.sock ]] || fail "serve published no share '$share' in 30 s"

# 2.5 Mbit/s at 640x360: the pixel timecode stays readable after this encode.
/usr/bin/python3 "$camera" --port 0 --share "$share" --bitrate 2500 --keyint 30 >"$camOut" 2>>"$log" &
cam=$!
port=""
for _ in $(seq 200); do
  port=$(sed -n 's/^PORT \([0-9]*\)$/\1/p' "$camOut")
  [[ -n $port ]] && break
  kill -0 "$cam" 2>/dev/null || break
  sleep 0.1
done
[[ -n $port ]] || fail "the RTSP camera did not listen within 20 s (python3-gi, gir1.2-gst-rtsp-server-1.0?)"

args=()
for a in "$@"; do args+=("${a//@RTSP_PORT@/$port}"); done
"${args[@]}" &
child=$!
trap 'kill -INT $child 2>/dev/null' INT
trap 'kill -TERM $child 2>/dev/null' TERM
rc=0
while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done
cleanup
exit $rc
