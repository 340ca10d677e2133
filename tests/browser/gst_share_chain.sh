#!/usr/bin/env bash
# gst_share_chain.sh ZEROHOP SHARE PORT: a GStreamer pipeline that publishes into zerohop share SHARE, for
# tests of `serve --source share:SHARE` fed by zerohopsink (docs/gstreamer.md). Its frames come from a
# first `zerohop serve --source test:640x360@30 --share SHARE-up` (listening on PORT), read by zerohopsrc, so they carry
# the test camera's pixel timecode end to end:
#   zerohop serve --share SHARE-up   ->  gst-launch-1.0 zerohopsrc share=SHARE-up ! zerohopsink share=SHARE
# Needs GST_PLUGIN_PATH pointing at the plugin. Runs until SIGINT/SIGTERM; then stops both.
set -u
zerohop=$1 share=$2 port=$3
dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/zerohop}
dir=${dir:-/tmp/zerohop-$(id -u)}
"$zerohop" serve --source test:640x360@30 --share "$share-up" --listen "127.0.0.1:$port" --status-interval 60 \
  > "${CHAIN_LOG:-/dev/null}" 2>&1 &
up=$!
gst=""
stop() { [[ -n $gst ]] && kill -INT "$gst" 2>/dev/null; kill -INT "$up" 2>/dev/null; wait; exit 0; }
trap stop INT TERM
for _ in $(seq 100); do [[ -S $dir/$share-up.sock ]] && break; sleep 0.1; done
[[ -S $dir/$share-up.sock ]] || { echo "gst_share_chain.sh: serve published no '$share-up' in 10 s" >&2; kill "$up"; exit 1; }
gst-launch-1.0 -q zerohopsrc share="$share-up" ! queue max-size-buffers=2 leaky=downstream ! \
  zerohopsink share="$share" &
gst=$!
wait "$gst"
rc=$?
kill -INT "$up" 2>/dev/null
wait "$up" 2>/dev/null
exit $rc
