#!/usr/bin/env bash
# decoded_share_tap.sh ZEROHOP URL SHARE COUNT: `zerohop serve --source URL --share SHARE` (URL an RTSP camera
# with format=i420: its H.264 decoded on the CPU), then `zerohop tap SHARE --timecode --count COUNT` reads
# the decoded frames from the share. Exits 0 only when tap read COUNT frames, every one I420 at 640x360 (the
# test camera's size) with a readable timecode in order (tap's own check), and serve stopped cleanly; else 1,
# saying why.
set -u
zerohop=$1 url=$2 share="$3-$$" count=$4
dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/zerohop}
dir=${dir:-/tmp/zerohop-$(id -u)}
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp) out=$(mktemp)
"$zerohop" serve --source "$url" --share "$share" --listen "127.0.0.1:$port" --status-interval 60 >"$log" 2>&1 &
serve=$!
fail() { echo "FAIL: $*"; echo "--- serve:"; cat "$log"; kill -INT "$serve" 2>/dev/null; wait "$serve"; rm -f "$log" "$out"; exit 1; }
for _ in $(seq 200); do [[ -S $dir/$share.sock ]] && break; kill -0 "$serve" 2>/dev/null || break; sleep 0.1; done
[[ -S $dir/$share.sock ]] || fail "serve published no share '$share' within 20 s"
# The test camera's x264 (CBR, starting when serve connects) blurs its first second or so past reading;
# the frames flow from the start (read here), their timecodes are checked once it has settled.
timeout 30 "$zerohop" tap "$share" --count 45 --timeout 10 >/dev/null 2>&1 || fail "tap read no 45 frames"
timeout 60 "$zerohop" tap "$share" --timecode --count "$count" --timeout 10 >"$out" 2>&1
rc=$?
cat "$out"
[[ $rc -eq 0 ]] || fail "zerohop tap --timecode exited $rc"
frames=$(grep -c " i420  640x360 " "$out")
[[ $frames -ge $count ]] || fail "tap printed $frames i420 640x360 frames, want $count"
grep -q "decoded to I420 on the CPU" "$log" || fail "serve did not say the camera is decoded"
kill -INT "$serve"
wait "$serve"
src=$?
[[ $src -eq 0 ]] || fail "serve exited $src on SIGINT"
echo "PASS: $count decoded frames, every timecode readable and in order"
rm -f "$log" "$out"
