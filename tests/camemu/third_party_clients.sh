#!/bin/sh
# Third-party V4L2 clients against the emulated camera, unmodified.
#   third_party_clients.sh CASE CAMEMU CHECK
# CASE: compliance | list-formats | v4l2ctl-mmap | v4l2ctl-userptr | ffmpeg-raw | ffmpeg-mjpeg | ffmpeg-h264 | gst-raw | gst-mjpeg
# CAMEMU: the zerohop-camemu launcher; CHECK: zerohop-camemu-check (reads timecodes back).
# Exits 0 on success, 77 (CTest SKIP_RETURN_CODE) when the client is not installed, 1 on failure.
set -u
case_name=$1
camemu=$2
check=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($case_name): $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 is not installed"; exit 77; }; }
frame=614400  # 640x480 YUYV

case "$case_name" in
list-formats)
  need v4l2-ctl
  out=$("$camemu" --fps 60 -- v4l2-ctl -d /dev/video0 --list-formats-ext) || fail "v4l2-ctl exited $?"
  echo "$out"
  compressed=""
  [ "${CAMEMU_WITH_MEDIA:-1}" = 1 ] && compressed="'MJPG' (Motion-JPEG, compressed)|'H264' (H.264, compressed)"
  IFS='|'
  for want in "'YUYV' (YUYV 4:2:2)" "'UYVY' (UYVY 4:2:2)" "'NV12' (Y/CbCr 4:2:0)" "Size: Discrete 1920x1080" \
              "(60.000 fps)" "(15.000 fps)" $compressed; do
    echo "$out" | grep -qF "$want" || fail "missing '$want'"
  done
  ;;
v4l2ctl-mmap|v4l2ctl-userptr)
  need v4l2-ctl
  mode=--stream-mmap; [ "$case_name" = v4l2ctl-userptr ] && mode=--stream-user
  "$camemu" --fps 60 -- v4l2-ctl -d /dev/video0 --set-fmt-video=width=640,height=480,pixelformat=YUYV \
      $mode=4 --stream-count=12 --stream-to="$tmp/out.yuv" || fail "v4l2-ctl exited $?"
  size=$(stat -c %s "$tmp/out.yuv")
  [ "$size" -eq $((12 * frame)) ] || fail "captured $size bytes, expected $((12 * frame))"
  "$check" "$tmp/out.yuv" yuyv 640 480 12 || fail "frames do not carry the timecode"
  ;;
ffmpeg-raw)
  need ffmpeg
  "$camemu" --fps 60 -- ffmpeg -nostdin -hide_banner -loglevel error -f v4l2 -input_format yuyv422 \
      -video_size 640x480 -i /dev/video0 -frames:v 12 -c:v rawvideo -f rawvideo "$tmp/out.yuv" || fail "ffmpeg exited $?"
  "$check" "$tmp/out.yuv" yuyv 640 480 12 || fail "frames do not carry the timecode"
  ;;
ffmpeg-mjpeg)
  need ffmpeg
  "$camemu" --format mjpeg --fps 30 -- ffmpeg -nostdin -hide_banner -loglevel error -f v4l2 -input_format mjpeg \
      -video_size 1280x720 -i /dev/video0 -frames:v 10 -c:v copy -f mjpeg "$tmp/out.mjpeg" || fail "ffmpeg exited $?"
  # Decode every JPEG (xerror: any decode error fails) back to YUYV and read the timecodes.
  ffmpeg -nostdin -hide_banner -loglevel error -xerror -f mjpeg -i "$tmp/out.mjpeg" -pix_fmt yuyv422 \
      -f rawvideo "$tmp/out.yuv" || fail "the captured MJPEG does not decode"
  "$check" "$tmp/out.yuv" yuyv 1280 720 10 || fail "decoded frames do not carry the timecode"
  ;;
ffmpeg-h264)
  need ffmpeg
  "$camemu" --format h264 --fps 30 -- ffmpeg -nostdin -hide_banner -loglevel error -f v4l2 -input_format h264 \
      -video_size 640x480 -i /dev/video0 -frames:v 12 -c:v copy -f h264 "$tmp/out.h264" || fail "ffmpeg exited $?"
  ffmpeg -nostdin -hide_banner -loglevel error -xerror -f h264 -i "$tmp/out.h264" -pix_fmt yuyv422 \
      -f rawvideo "$tmp/out.yuv" || fail "the captured H.264 does not decode"
  "$check" "$tmp/out.yuv" yuyv 640 480 12 || fail "decoded frames do not carry the timecode"
  ;;
gst-raw)
  need gst-launch-1.0
  "$camemu" --fps 60 -- gst-launch-1.0 -q v4l2src device=/dev/video0 num-buffers=12 \
      ! video/x-raw,format=YUY2,width=640,height=480 ! filesink location="$tmp/out.yuv" || fail "gst-launch exited $?"
  "$check" "$tmp/out.yuv" yuyv 640 480 12 || fail "frames do not carry the timecode"
  ;;
gst-mjpeg)
  need gst-launch-1.0
  "$camemu" --format mjpeg --fps 30 -- gst-launch-1.0 -q v4l2src device=/dev/video0 num-buffers=10 \
      ! image/jpeg,width=1280,height=720 ! jpegdec ! videoconvert ! video/x-raw,format=YUY2 \
      ! filesink location="$tmp/out.yuv" || fail "gst-launch exited $?"
  "$check" "$tmp/out.yuv" yuyv 1280 720 10 || fail "decoded frames do not carry the timecode"
  ;;
compliance)
  need v4l2-compliance
  # The whole suite, streaming included (-s): MMAP and USERPTR with poll, select and epoll.
  "$camemu" --fps 60 -- v4l2-compliance -d /dev/video0 -s > "$tmp/log" 2>&1
  rc=$?
  tr '\t' '\n' < "$tmp/log" | grep -E "fail|warn|Total"
  grep -q "Failed: 0," "$tmp/log" || fail "v4l2-compliance reports failures (exit $rc)"
  grep -q "Succeeded: [1-9]" "$tmp/log" || fail "v4l2-compliance ran no test"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "PASS ($case_name)"
