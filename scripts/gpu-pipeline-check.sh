#!/usr/bin/env bash
# gpu-pipeline-check.sh: the newer GPU paths of `zerohop serve`, from a bundle of scripts/gpu-serve-bundle.sh,
# on the GPU machine (issue 40 items 2, 5 and 6). Three parts, each skippable:
#
#   rtsp     IP cameras decoded by NVDEC: tests/rtsp/rtsp_clip_server.py streams a pre-encoded 1080p30 H.264
#            clip that carries the project's pixel timecode (FFmpeg packetizes it, `-c copy`: no encoding on
#            the machine); `serve --camera cI=rtsp://...?format=nv12 --gpu N --share` decodes each camera with
#            NVDEC into its device ring (x264 on a host copy for viewers: the H200 has no NVENC). Rows of 1 and
#            RTSP_CAMERAS cameras: fps, drops, the stages' p50/p99 from /stats (decode is the source's
#            `ingest`), serve's CPU; then `zerohop tap cI --timecode --json` reads every camera's device ring
#            in another process: every timecode readable, in order but for the clip's loop (one step back of
#            about the clip's length is the loop, not a fault).
#   stream   a program's own device frames (zerohop::FrameStream, --device) against serve's camera path, in
#            one run: zerohop_frame_stream_bench --device --gpu N (ingest -> sent p50/p99, side by side).
#   sound    serve --gpu N on the test camera without and with `--audio test`: capture -> decoded p50/p99
#            of the bundle's zerohop-whep-receive (video only) for each, then zerohop-av-sync-receive (H.264 +
#            Opus) against the one with sound: the marker frame against the click, after lip sync.
#            RTSP_FORMAT=h264: the cameras passed through (no decode for the viewers), their pictures decoded
#            by NVDEC beside the passthrough into the device rings while the taps read them.
#   nvdec    the bundle's zerohop_nvdec_unit_test and zerohop_nvdec_source_test (from BUNDLE_EXTRA) on the
#            committed clips of tests/gpu/data: NVDEC's H.264 and H.265 decodes bit-exact against libavcodec;
#            zerohop_passthrough_pictures_gpu_test: passthrough's pictures by NVDEC (catch-up start, gaps).
#            With CLIP an H.265 clip (.gpu-bundle/clip1080-hevc.mp4), part rtsp serves H.265 cameras
#            decoded by NVDEC (GpuDecodeCodec::kH265).
#   ladder   renditions on the GPU path (issue 40 item 3): the bundle's zerohop_gpu_path_test
#            (CudaScaler*: the CUDA scaler against the CPU reference), zerohop_ladder_pictures_gpu_test (a
#            pipeline with --gpu N and a 3-rung ladder: each lower rung's decoded pictures against rung 0's)
#            and zerohop_gpu_rendition_scale_bench (each rung's scale cost against libyuv), from BUNDLE_EXTRA.
#
# Bundle (here, once):
#   cmake -B build -DZEROHOP_BUILD_BENCHMARKS=ON && cmake --build build --target zerohop zerohop-whep-receive \
#     zerohop-av-sync-receive zerohop-camemu zerohop_camemu zerohop_frame_stream_bench
#   BUNDLE_EXTRA="build/bench/e2e/zerohop_frame_stream_bench build/tests/stream/zerohop-av-sync-receive /usr/bin/ffmpeg" \
#   BUNDLE_GST_EXTRA="opus audioconvert audioresample rtsp" \
#   BUNDLE_STUB="libflite libplacebo liblapack libblas libgfortran librsvg libcodec2 libSvtAv1Enc librav1e libjxl libdav1d libSDL2 libslang" \
#   BUNDLE_XZ_LEVEL=-6 scripts/gpu-serve-bundle.sh build
#   (48 MiB packed; libaom, libx265 and libopenmpt stay real: libavcodec and FFmpeg's probe call them at start.
#   The tool carries 64 MiB in all: the clip is 24 s, 6.6 MiB.)
#   and the clip beside it: .gpu-bundle/clip1080.mp4 (H.264 baseline, 1920x1080, 30 fps, an IDR every 30
#   frames, the test camera's pictures: `zerohop serve --source test:1920x1080@30 --share t`, zerohopsrc into
#   a raw file, `ffmpeg -f rawvideo -r 30 ... -c:v libx264 -g 30 -bf 0`; see docs/benchmarks-gpu.md).
# GPU machine:  run(carry: [".gpu-bundle"], command: "bash scripts/gpu-pipeline-check.sh")
#
# Environment: OUT (default /tmp/gpu-pipeline-check), BUNDLE, CLIP (default .gpu-bundle/clip1080.mp4),
# PARTS (default "rtsp stream sound"; "ladder" and "nvdec" too when named), RTSP_CAMERAS (16), RTSP_FORMAT (nv12: NVDEC; i420: libavcodec, the CPU path; h264: passed through, pictures beside by NVDEC), STEADY (15 s), TAP_FRAMES (60), GPU_DEVICE (0),
# PORT (18493), STREAM_ARGS (zerohop_frame_stream_bench; default --seconds 10 --rounds 2), RECEIVE_FRAMES (300),
# AV_MARKERS (8), EXPECT_GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-bundle-lib.sh

OUT=${OUT:-/tmp/gpu-pipeline-check}
BUNDLE=${BUNDLE:-.gpu-bundle/zerohop-serve.tar.xz}
CLIP=${CLIP:-.gpu-bundle/clip1080.mp4}
PARTS=${PARTS:-rtsp stream sound}
RTSP_CAMERAS=${RTSP_CAMERAS:-16}
RTSP_FORMAT=${RTSP_FORMAT:-nv12}
STEADY=${STEADY:-15}
TAP_FRAMES=${TAP_FRAMES:-60}
GPU_DEVICE=${GPU_DEVICE:-0}
PORT=${PORT:-18493}
STREAM_ARGS=${STREAM_ARGS:---seconds 10 --rounds 2}
RECEIVE_FRAMES=${RECEIVE_FRAMES:-300}
AV_MARKERS=${AV_MARKERS:-8}

bundle_start gpu-pipeline-check.log "GPU expected" zh-pipeline
bundle_unpack "$BUNDLE" "$tmp"
bundle_environment
Z=$B/bin/zerohop
gpu_arg=$GPU_DEVICE
[[ $expect_gpu == 1 ]] || gpu_arg=off
hz=$(getconf CLK_TCK)
has_part() { [[ " $PARTS " == *" $1 "* ]]; }

http_get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1" 2>/dev/null; }
# wait_up PID PORT: /stats answers within 60 s while PID lives.
wait_up() {
  for _ in $(seq 1 120); do
    kill -0 "$1" 2>/dev/null || return 1
    http_get "http://127.0.0.1:$2/stats" >/dev/null && return 0
    sleep 0.5
  done
  return 1
}
stop_serve() {  # PID LABEL
  kill -INT "$1" 2>/dev/null
  for _ in $(seq 1 150); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2>/dev/null; then fail "$2: serve still running 15 s after SIGINT"; kill -KILL "$1"; fi
  wait "$1" 2>/dev/null
  serve_pid=""
}

if has_part rtsp; then
  [[ -f $CLIP ]] || { fail "no clip $CLIP (see the header: it travels beside the bundle)"; }
  if [[ -f $CLIP ]]; then
    # FFmpeg from the bundle, with the bundle's libraries; the clip server itself keeps the machine's python3.
    mkdir -p "$tmp/ffbin"
    { echo '#!/bin/sh'; printf 'exec env LD_LIBRARY_PATH=%q %q "$@"\n' "$B/lib" "$B/bin/ffmpeg"; } > "$tmp/ffbin/ffmpeg"
    chmod +x "$tmp/ffbin/ffmpeg"
    clip_codec=$(env LD_LIBRARY_PATH="$B/lib" "$B/bin/ffmpeg" -hide_banner -i "$CLIP" 2>&1 | grep -qi 'hevc' && echo H.265 || echo H.264)
    clip_frames=$(env LD_LIBRARY_PATH="$B/lib" "$B/bin/ffmpeg" -hide_banner -i "$CLIP" -map 0:v -c copy -f null - 2>&1 |
                  sed -n 's/.*frame= *\([0-9]*\).*/\1/p' | tail -1)
    echo "clip: $CLIP, ${clip_frames:-?} frames (it loops)"

    rtsp_row() {  # N: N cameras on one serve, all playing the one clip server
      local n=$1 label="rtsp$1" srv_pid rport sp t0 t1 c0 c1
      step "RTSP -> NVDEC: $n camera(s) 1920x1080@30 $clip_codec, serve --gpu $gpu_arg --share"
      PATH="$tmp/ffbin:$PATH" python3 tests/rtsp/rtsp_clip_server.py --clip "$CLIP" --port 0 > "$OUT/clip-$label.log" 2>&1 &
      srv_pid=$!
      for _ in $(seq 1 100); do grep -q '^PORT ' "$OUT/clip-$label.log" && break; sleep 0.1; done
      rport=$(sed -n 's/^PORT //p' "$OUT/clip-$label.log")
      [[ -n $rport ]] || { fail "$label: the clip server did not listen: $(tail -3 "$OUT/clip-$label.log")"; kill "$srv_pid"; return; }
      local cams=()
      for ((i = 0; i < n; i++)); do cams+=(--camera "c$i=rtsp://127.0.0.1:$rport/c$i?format=$RTSP_FORMAT"); done
      env "${bundle_env[@]}" "$Z" serve "${cams[@]}" --gpu "$gpu_arg" --share --preset ultrafast --bitrate 2500 \
        --listen "127.0.0.1:$PORT" > "$OUT/serve-$label.log" 2>&1 &
      sp=$!
      serve_pid=$sp
      local running=0
      for ((t = 0; t < 120; t++)); do
        kill -0 "$sp" 2>/dev/null || break
        k=$(http_get "http://127.0.0.1:$PORT/stats" | python3 -c 'import json, sys; print(sum(1 for c in json.load(sys.stdin)["cameras"] if c["state"] == "running" and c["frames"] > 0))' 2>/dev/null)
        [[ ${k:-0} == "$n" ]] && { running=1; break; }
        sleep 0.5
      done
      if [[ $running != 1 ]]; then
        fail "$label: not every camera was running within 60 s"
        tail -30 "$OUT/serve-$label.log"
        stop_serve "$sp" "$label"; kill "$srv_pid"; wait "$srv_pid" 2>/dev/null
        return
      fi
      pass "$label: $n camera(s) running"
      grep -m2 -iE 'nvdec|NVDEC' "$OUT/serve-$label.log"
      sleep 4
      http_get "http://127.0.0.1:$PORT/stats" > "$OUT/stats-$label-0.json"; t0=$(date +%s.%N); c0=$(awk '{print $14 + $15}' "/proc/$sp/stat")
      sleep "$STEADY"
      http_get "http://127.0.0.1:$PORT/stats" > "$OUT/stats-$label-1.json"; t1=$(date +%s.%N); c1=$(awk '{print $14 + $15}' "/proc/$sp/stat")
      python3 - "$OUT/stats-$label-0.json" "$OUT/stats-$label-1.json" "$t0" "$t1" "$c0" "$c1" "$hz" "$expect_gpu" "$RTSP_FORMAT" <<'PY' || status=1
import json, sys
a, b = (json.load(open(p))["cameras"] for p in sys.argv[1:3])
t0, t1, c0, c1, hz = (float(x) for x in sys.argv[3:8])
expect_gpu = sys.argv[8] == "1"
want_path = "passthrough" if sys.argv[9] == "h264" else "gpu"
before = {c["name"]: c for c in a}
bad, rates = 0, []
stage_names = []
for c in b:
    for k in c.get("stages", {}):
        if k not in stage_names: stage_names.append(k)
print(f"{'camera':7} {'path':5} {'fps':>6} {'drops':>6} {'source':>6} " +
      " ".join(f"{k + ' p50/p99':>18}" for k in stage_names) + f" {'total p50/p99':>16}")
for c in b:
    p = before[c["name"]]
    frames = c["frames"] - p["frames"]
    drops = c["drops"] - p["drops"]
    source = c["source_drops"] - p["source_drops"]
    rate = frames / (t1 - t0)
    rates.append(rate)
    st = c.get("stages", {})
    cell = lambda s: f"{s.get('p50_ms', 0):7.2f}/{s.get('p99_ms', 0):7.2f} ms" if s else f"{'-':>18}"
    tot = c.get("total", {})
    print(f"{c['name']:7} {c['path']:5} {rate:6.2f} {drops:6d} {source:6d} " +
          " ".join(cell(st.get(k, {})) for k in stage_names) + f" {cell(tot):>16}")
    problems = []
    if expect_gpu and c["path"] != want_path: problems.append(f"path {c['path']}")
    if want_path == "passthrough":  # its pictures, decoded beside it while the tap reads (read after this)
        d = c.get("passthrough_decode") or {}
        print(f"  passthrough_decode: {d.get('decoder')}, available {d.get('available')} {d.get('unavailable', '')}")
        if expect_gpu and "NVDEC" not in str(d.get("decoder")): problems.append(f"pictures decoded by {d.get('decoder')}")
    if rate < 0.95 * 30: problems.append(f"{rate:.2f} fps < 95 % of 30")
    if c.get("restarts"): problems.append(f"{c['restarts']} restarts")
    if problems:
        bad += 1
        print(f"FAIL: camera {c['name']}: " + ", ".join(problems))
cpu = 100.0 * (c1 - c0) / hz / (t1 - t0)
print(f"{len(b)} camera(s): {sum(rates):.1f} frames/s in all, min {min(rates):.2f} fps; serve's CPU {cpu:.0f} % of one core, "
      f"{cpu / len(b):.1f} % per camera (RTSP receive, NVDEC submission, x264 on the host copy)")
sys.exit(1 if bad else 0)
PY
      command -v nvidia-smi >/dev/null &&
        nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | grep "^$sp," |
        awk -F, -v n="$n" '{gsub(/ MiB/, "", $2); printf "serve GPU memory: %d MiB, %.1f MiB per camera\n", $2, $2 / n}'
      nvidia-smi --query-gpu=utilization.decoder,utilization.gpu --format=csv 2>/dev/null | tail -1 | sed 's/^/decoder, GPU utilisation: /'
      local pids=()
      for ((i = 0; i < n; i++)); do
        env "${bundle_env[@]}" "$Z" tap "c$i" --count "$TAP_FRAMES" --timecode --json --timeout 5 \
          > "$OUT/tap-$label-c$i.jsonl" 2> "$OUT/tap-$label-c$i.err" &
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p"; done
      python3 - "$OUT" "$label" "$n" "${clip_frames:-0}" "$expect_gpu" <<'PY' || status=1
import json, sys
out, label, n, clip, expect_gpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
bad = 0
for i in range(n):
    lines = [json.loads(l) for l in open(f"{out}/tap-{label}-c{i}.jsonl") if l.startswith("{")]
    err = open(f"{out}/tap-{label}-c{i}.err").read()
    seqs = [l.get("timecode_seq") for l in lines]
    unreadable = sum(1 for s in seqs if s is None)
    back = [(a, b) for a, b in zip(seqs, seqs[1:]) if a is not None and b is not None and b <= a]
    loops = [x for x in back if clip and abs((x[0] - x[1]) - clip) < clip * 0.2 + 30]
    problems = []
    if len(lines) == 0: problems.append("no frames: " + err.strip().splitlines()[-1] if err.strip() else "no frames")
    if unreadable: problems.append(f"{unreadable} unreadable timecodes")
    if len(back) > len(loops) or len(loops) > 1: problems.append(f"timecode steps back {back[:3]}")
    if expect_gpu and "device memory" not in err: problems.append("not device memory: " + err.splitlines()[0] if err else "?")
    if problems:
        bad += 1
        print(f"FAIL: tap c{i}: " + "; ".join(problems))
print(f"tap --timecode, {n} reader(s) at once: {n - bad} of {n} read {len(lines)} frames each, every timecode "
      "readable and in order (the clip's loop excepted)" if bad == 0 else f"{bad} of {n} readers failed")
sys.exit(1 if bad else 0)
PY
      stop_serve "$sp" "$label"
      kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null
      grep -E ' (error|warning) ' "$OUT/serve-$label.log" | head -5
    }
    rtsp_row 1
    (( RTSP_CAMERAS > 1 )) && rtsp_row "$RTSP_CAMERAS"
  fi
fi

if has_part stream; then
  step "a program's own device frames (FrameStream --device) against serve's camera path, one run"
  if [[ -x $B/bin/zerohop_frame_stream_bench ]]; then
    env "${bundle_env[@]}" "$B/bin/zerohop_frame_stream_bench" --device --gpu "$gpu_arg" $STREAM_ARGS 2>&1 | tee "$OUT/frame-stream.txt"
    [[ ${PIPESTATUS[0]} == 0 ]] || fail "zerohop_frame_stream_bench exited non-zero"
  else
    fail "the bundle has no zerohop_frame_stream_bench (BUNDLE_EXTRA)"
  fi
fi

if has_part sound; then
  # view LABEL PORT EXTRA...: serve --gpu on the test camera, the video-only receiver's capture -> decoded.
  view() {
    local label=$1 port=$2; shift 2
    step "sound: serve --source test:1280x720@30 --gpu $gpu_arg $* ; zerohop-whep-receive --frames $RECEIVE_FRAMES"
    env "${bundle_env[@]}" "$Z" serve --source test:1280x720@30 --gpu "$gpu_arg" "$@" --listen "127.0.0.1:$port" > "$OUT/serve-$label.log" 2>&1 &
    local sp=$!
    serve_pid=$sp
    if ! wait_up "$sp" "$port"; then fail "$label: serve did not come up: $(grep -m1 error "$OUT/serve-$label.log")"; stop_serve "$sp" "$label"; return; fi
    timeout 60 env "${bundle_env[@]}" "$B/bin/zerohop-whep-receive" "http://127.0.0.1:$port/whep" --frames "$RECEIVE_FRAMES" \
      --timeout 30 > "$OUT/receive-$label.json" 2> "$OUT/receive-$label.err" || fail "$label: the receiver fell short: $(tail -2 "$OUT/receive-$label.err")"
    echo "$label: $(cat "$OUT/receive-$label.json")"
    if [[ $label == with-sound ]]; then
      step "sound: zerohop-av-sync-receive (H.264 + Opus, lip-synced by rtpbin) against the same serve"
      if [[ -x $B/bin/zerohop-av-sync-receive ]]; then
        timeout 90 env "${bundle_env[@]}" "$B/bin/zerohop-av-sync-receive" "http://127.0.0.1:$port/whep" --markers "$AV_MARKERS" \
          > "$OUT/av-sync.json" 2> "$OUT/av-sync.err" || fail "av-sync receiver: $(cat "$OUT/av-sync.json") $(tail -2 "$OUT/av-sync.err")"
        echo "av sync: $(cat "$OUT/av-sync.json")"
      else
        fail "the bundle has no zerohop-av-sync-receive (BUNDLE_EXTRA)"
      fi
    fi
    grep -m2 -E 'GPU path|CPU path|audio|Opus' "$OUT/serve-$label.log"
    stop_serve "$sp" "$label"
  }
  view no-sound "$PORT"
  view with-sound "$((PORT + 1))" --audio test
  python3 - "$OUT/receive-no-sound.json" "$OUT/receive-with-sound.json" <<'PY' || true
import json, sys
rows = []
for p in sys.argv[1:]:
    try: rows.append(json.load(open(p)))
    except Exception as e: rows.append({"error": str(e)})
def pick(d, *ks):
    for k in ks:
        if k in d: return d[k]
    return None
for name, d in zip(("without sound", "with --audio test"), rows):
    print(f"{name:18}: {json.dumps({k: v for k, v in d.items() if 'latency' in k or 'ms' in k or k in ('frames', 'error')})}")
PY
fi

if has_part ladder; then
  step "ladder: renditions scaled by CUDA"
  for x in zerohop_gpu_path_test zerohop_ladder_pictures_gpu_test zerohop_gpu_rendition_scale_bench; do
    [[ -x $B/bin/$x ]] || fail "the bundle has no $x (BUNDLE_EXTRA)"
  done
  if [[ -x $B/bin/zerohop_gpu_path_test ]]; then
    timeout 120 env "${bundle_env[@]}" "$B/bin/zerohop_gpu_path_test" --gtest_filter='CudaScaler*' 2>&1 | tail -6 |
      tee "$OUT/cuda-scaler.txt"
    grep -q '^\[  PASSED  \] 2 tests' "$OUT/cuda-scaler.txt" || fail "CudaScaler tests (see cuda-scaler.txt)"
  fi
  if [[ -x $B/bin/zerohop_ladder_pictures_gpu_test ]]; then
    timeout 120 env "${bundle_env[@]}" "$B/bin/zerohop_ladder_pictures_gpu_test" > "$OUT/ladder-pictures.txt" 2>&1
    grep -v 'libx264 @' "$OUT/ladder-pictures.txt" | grep -E 'GPU path|CUDA|rendition|Failure|Expected|actual|OK \]|FAILED|SKIPPED' | head -20
    grep -q '^\[  PASSED  \] 1 test' "$OUT/ladder-pictures.txt" || fail "LadderPictures on the GPU path (see ladder-pictures.txt)"
  fi
  if [[ -x $B/bin/zerohop_gpu_rendition_scale_bench ]]; then
    timeout 120 env "${bundle_env[@]}" "$B/bin/zerohop_gpu_rendition_scale_bench" --device "$GPU_DEVICE" \
      --iterations 300 --sizes 720p,1080p --out "$OUT/rendition-scale.md" || fail "rendition scale bench"
  fi
fi

if has_part nvdec; then
  step "nvdec: the NVDEC decoder on the committed clips (H.264 and H.265, bit-exact against libavcodec)"
  for x in zerohop_nvdec_unit_test zerohop_nvdec_source_test zerohop_passthrough_pictures_gpu_test; do
    if [[ -x $B/bin/$x ]]; then
      timeout 120 env "${bundle_env[@]}" ZEROHOP_NVDEC_DATA_DIR="$PWD/tests/gpu/data" "$B/bin/$x" > "$OUT/$x.txt" 2>&1
      grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|Failure|nvdec probe' "$OUT/$x.txt" | head -20
      grep -q '^\[  PASSED  \]' "$OUT/$x.txt" && ! grep -q '^\[  FAILED  \]\|^\[  SKIPPED \]' "$OUT/$x.txt" ||
        fail "$x (see $x.txt)"
    else
      fail "the bundle has no $x (BUNDLE_EXTRA)"
    fi
  done
fi

step "result"
[[ $status == 0 ]] && echo "gpu-pipeline-check: PASS" || echo "gpu-pipeline-check: FAIL"
exit $status
