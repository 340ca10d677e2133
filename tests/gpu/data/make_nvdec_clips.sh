#!/usr/bin/env bash
# Regenerates the NVDEC test clips and their reference checksums (needs ffmpeg with libx264, libx265 and
# python3; the GPU machine has neither, so both are committed). Run from anywhere:
#   tests/gpu/data/make_nvdec_clips.sh
#
# Clips (Annex B elementary streams, deterministic lavfi testsrc2 pattern, SPS/PPS before every IDR
# as a camera sends them):
#   nvdec_baseline_320x240.h264   constrained baseline, IDR every 10 frames, 30 frames
#   nvdec_high_640x480.h264       high (CABAC, 8x8 transform), no B-frames, IDR every 10, 30 frames
#   nvdec_high_bframes_640x480.h264  high with 2 B-frames (output reordering), IDR every 10, 30 frames
#   nvdec_high_1920x1080.h264     high, no B-frames, one IDR, 30 frames, low bitrate (benchmark; cropped
#                                 1088 -> 1080 coded height)
#   nvdec_hevc_main_320x240.h265  H.265 Main (libx265), no B-frames, IDR every 10 frames, 30 frames, VPS/SPS/PPS
#                                 before every IDR (an IP camera's H.265)
# References (<clip>.fnv): decoded by libavcodec's h264 decoder to NV12, one line per frame in output
# (display) order: "<index> <fnv1a64 of Y rows> <fnv1a64 of UV rows>" over width bytes of each row,
# no padding. H.264 and H.265 decoding are bit-exact, so NVDEC must reproduce them exactly.
set -euo pipefail
cd "$(dirname "$0")"

enc() {  # name size extra-x264-args...
  local name=$1 size=$2
  shift 2
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=$size:rate=30" -frames:v 30 \
    -pix_fmt yuv420p -c:v libx264 -threads 1 "$@" -bsf:v h264_mp4toannexb -f h264 "$name.h264"
}
enc nvdec_baseline_320x240 320x240 -profile:v baseline -preset veryfast -g 10 -keyint_min 10 -sc_threshold 0 \
  -x264-params repeat-headers=1 -b:v 400k
enc nvdec_high_640x480 640x480 -profile:v high -preset medium -bf 0 -g 10 -keyint_min 10 -sc_threshold 0 \
  -x264-params repeat-headers=1 -b:v 800k
enc nvdec_high_bframes_640x480 640x480 -profile:v high -preset medium -bf 2 -b_strategy 0 -g 10 -keyint_min 10 \
  -sc_threshold 0 -x264-params repeat-headers=1 -b:v 800k
enc nvdec_high_1920x1080 1920x1080 -profile:v high -preset medium -bf 0 -g 60 -sc_threshold 0 \
  -x264-params repeat-headers=1 -b:v 1500k

ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=320x240:rate=30" -frames:v 30 -pix_fmt yuv420p \
  -c:v libx265 -preset veryfast -x265-params "bframes=0:keyint=10:min-keyint=10:scenecut=0:open-gop=0:repeat-headers=1:log-level=error" \
  -b:v 400k -bsf:v hevc_mp4toannexb -f hevc nvdec_hevc_main_320x240.h265

for clip in nvdec_*.h264 nvdec_*.h265; do
  decoder=h264
  [[ $clip == *.h265 ]] && decoder=hevc
  ffmpeg -hide_banner -loglevel error -y -c:v $decoder -i "$clip" -f rawvideo -pix_fmt nv12 "/tmp/$clip.nv12"
  size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0:s=x "$clip")
  python3 - "$clip" "$size" "/tmp/$clip.nv12" "$decoder" > "${clip%.*}.fnv" <<'PY'
import sys
clip, size, raw, decoder = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
w, h = map(int, size.split("x"))
def fnv(b):
    x = 0xcbf29ce484222325
    for c in b:
        x = ((x ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return x
data = open(raw, "rb").read()
frame = w * h * 3 // 2
print(f"# {clip} {w}x{h}: libavcodec {decoder} -> nv12, fnv1a64 of Y and UV per frame in display order")
for i in range(len(data) // frame):
    f = data[i * frame:(i + 1) * frame]
    print(f"{i} {fnv(f[:w*h]):016x} {fnv(f[w*h:]):016x}")
PY
  rm -f "/tmp/$clip.nv12"
done
ls -l nvdec_*
