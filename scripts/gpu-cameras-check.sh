#!/usr/bin/env bash
# gpu-cameras-check.sh: many emulated MJPEG cameras through one `zerohop serve` on the GPU path, from a
# bundle of scripts/gpu-serve-bundle.sh, with every camera's device ring read by `zerohop tap
# --timecode` in another process (the pixel timecode read from VRAM: the pictures themselves checked).
#
# Usage:
#   here, once:   cmake --build build --target zerohop zerohop-whep-receive zerohop-camemu zerohop_camemu
#                 scripts/gpu-serve-bundle.sh build
#   GPU machine:  run(carry: [".gpu-bundle"], command: "bash scripts/gpu-cameras-check.sh")
#
# What runs: zerohop-camemu --cameras CAMERAS --format mjpeg --size SIZE --fps FPS (N emulated V4L2
# devices in serve's own process, each drawing its own timecode into a JPEG it encodes with
# libjpeg-turbo) -- zerohop serve --camera cI=v4l2:/dev/videoI?memory=userptr ... --gpu GPU_DEVICE
# --share --batch-jpeg-from BATCH_FROM: capture into page-locked USERPTR buffers, one batched nvJPEG
# decoder for the GPU, NV12 in each camera's device ring, x264 on a host copy (the H200 has no NVENC).
# Checks (each "ok: ..." or "FAIL: ..."; exit 1 on any failure):
#   - every camera runs on the GPU path with the batched decoder (serve's log), none restarted;
#   - over STEADY_SECONDS of steady state (after WARMUP s, no readers) each camera delivers >= 97 % of
#     FPS and drops <= 0.1 % of its frames (/stats: frames, drops, source_drops);
#   - `zerohop tap cI --timecode --count TAP_FRAMES` for every camera at once: it attached to device
#     memory, and every frame's timecode was readable and in order (tap exits 0); odd cameras' readers with
#     --device-access copy (the device-to-device copy fallback; tap must say "copy"); the drops while the
#     readers start (each creates its CUDA context) are reported separately, not judged.
# Reported: fps and drops per camera, serve's CPU per camera (% of one core; it includes x264 and the
# emulated cameras' own JPEG encoding, which run in the same process), GPU memory of serve.
# Environment: OUT (default /tmp/gpu-cameras-check), BUNDLE (default .gpu-bundle/zerohop-serve.tar.xz),
# CAMERAS (10), SIZE (1920x1080), FPS (30), WARMUP (8), STEADY_SECONDS (20), TAP_FRAMES (90), BATCH_FROM (8),
# PRESET (ultrafast), BITRATE (2500), PORT (18483), GPU_DEVICE (0), EXPECT_GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-bundle-lib.sh

OUT=${OUT:-/tmp/gpu-cameras-check}
BUNDLE=${BUNDLE:-.gpu-bundle/zerohop-serve.tar.xz}
CAMERAS=${CAMERAS:-10}
SIZE=${SIZE:-1920x1080}
FPS=${FPS:-30}
WARMUP=${WARMUP:-8}
SECONDS_STEADY=${STEADY_SECONDS:-20}
TAP_FRAMES=${TAP_FRAMES:-90}
BATCH_FROM=${BATCH_FROM:-8}
PRESET=${PRESET:-ultrafast}
BITRATE=${BITRATE:-2500}
PORT=${PORT:-18483}
GPU_DEVICE=${GPU_DEVICE:-0}

bundle_start gpu-cameras-check.log "GPU expected" zh-cameras
bundle_unpack "$BUNDLE" "$tmp"
bundle_environment
Z=$B/bin/zerohop
[[ -x $B/bin/zerohop-camemu ]] || { echo "FAIL: the bundle has no zerohop-camemu (build it, re-bundle)"; exit 1; }

step "serve: $CAMERAS emulated MJPEG cameras ${SIZE}@${FPS}"
cams=()
for ((i = 0; i < CAMERAS; i++)); do cams+=(--camera "c$i=v4l2:/dev/video$i?memory=userptr"); done
gpu_arg=(--gpu "$GPU_DEVICE")
[[ $expect_gpu == 1 ]] || gpu_arg=(--gpu off)
env "${bundle_env[@]}" "$B/bin/zerohop-camemu" --cameras "$CAMERAS" --format mjpeg --size "$SIZE" --fps "$FPS" -- \
  "$Z" serve "${cams[@]}" "${gpu_arg[@]}" --share --batch-jpeg-from "$BATCH_FROM" --preset "$PRESET" \
  --bitrate "$BITRATE" --listen "127.0.0.1:$PORT" > "$OUT/serve.log" 2>&1 &
serve_pid=$!

stats() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
  "http://127.0.0.1:$PORT/stats" 2>/dev/null; }
running=0
for ((t = 0; t < 120; t++)); do
  kill -0 "$serve_pid" 2>/dev/null || break
  n=$(stats | python3 -c 'import json, sys; print(sum(1 for c in json.load(sys.stdin)["cameras"] if c["state"] == "running" and c["frames"] > 0))' 2>/dev/null)
  [[ ${n:-0} == "$CAMERAS" ]] && { running=1; break; }
  sleep 0.5
done
if [[ $running != 1 ]]; then
  fail "not every camera was running within 60 s"
  tail -40 "$OUT/serve.log"
  exit 1
fi
pass "$CAMERAS cameras running"
sleep "$WARMUP"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$serve_pid/stat"; }
hz=$(getconf CLK_TCK)
# window LABEL SECONDS_FILE_PREFIX: /stats and serve's CPU before and after; the table and the verdict.
window_report() {
  python3 - "$OUT/stats-$1-0.json" "$OUT/stats-$1-1.json" "$2" "$3" "$4" "$5" "$hz" "$FPS" "$expect_gpu" <<'PY'
import json, sys
a, b = (json.load(open(p))["cameras"] for p in sys.argv[1:3])
t0, t1, c0, c1, hz, fps = (float(x) for x in sys.argv[3:9])
expect_gpu = sys.argv[9] == "1"
before = {c["name"]: c for c in a}
bad = 0
print(f"{'camera':8} {'path':5} {'fps':>6} {'frames':>7} {'drops':>6} {'source':>6} {'encq':>5} {'drop %':>7}"
      f" {'ingest p99':>10} {'convert p99':>11} {'total p99':>9}")
for c in b:
    p = before[c["name"]]
    frames = c["frames"] - p["frames"]
    pipeline = c["drops"] - p["drops"]
    source = c["source_drops"] - p["source_drops"]
    encq = c.get("encoder_queue_drops", 0) - p.get("encoder_queue_drops", 0)
    drops = pipeline + source
    rate = frames / (t1 - t0)
    pct = 100.0 * drops / max(1, frames + drops)
    st = c.get("stages", {})
    p99 = lambda k: st.get(k, {}).get("p99_ms", 0.0)
    print(f"{c['name']:8} {c['path']:5} {rate:6.2f} {frames:7d} {pipeline:6d} {source:6d} {encq:5d} {pct:7.3f}"
          f" {p99('ingest'):10.2f} {p99('convert'):11.2f} {c.get('total', {}).get('p99_ms', 0.0):9.2f}")
    problems = []
    if expect_gpu and c["path"] != "gpu": problems.append(f"path {c['path']}")
    if rate < 0.97 * fps: problems.append(f"{rate:.2f} fps < 97 % of {fps:g}")
    if pct > 0.1: problems.append(f"{pct:.3f} % dropped")
    if c["restarts"]: problems.append(f"{c['restarts']} restarts")
    if problems:
        bad += 1
        print(f"FAIL: camera {c['name']}: " + ", ".join(problems))
cpu = 100.0 * (c1 - c0) / hz / (t1 - t0)
print(f"serve's CPU: {cpu:.0f} % of one core in all, {cpu / len(b):.1f} % per camera "
      "(capture, ingest, decode submission, x264 on the host copy, and the emulated cameras' JPEG encoding)")
sys.exit(1 if bad else 0)
PY
}

step "steady state, no readers, over $SECONDS_STEADY s"
stats > "$OUT/stats-alone-0.json"; t0=$(date +%s.%N); c0=$(cpu_ticks)
sleep "$SECONDS_STEADY"
stats > "$OUT/stats-alone-1.json"; t1=$(date +%s.%N); c1=$(cpu_ticks)
if window_report alone "$t0" "$t1" "$c0" "$c1"; then pass "every camera at its rate with <= 0.1 % dropped"; else status=1; fi

step "tap every camera's share with --timecode ($TAP_FRAMES frames each, all at once)"
stats > "$OUT/stats-taps-0.json"; t0=$(date +%s.%N); c0=$(cpu_ticks)
tap_pids=()
# Odd cameras' readers take the device-to-device copy (--device-access copy, the fallback for GPUs
# without peer access), so its timecodes are checked from the reader's own buffer too.
access() { (( $1 % 2 )) && echo copy || echo auto; }
for ((i = 0; i < CAMERAS; i++)); do
  env "${bundle_env[@]}" "$Z" tap "c$i" --count "$TAP_FRAMES" --timecode --json --timeout 5 \
    --device-access "$(access "$i")" > "$OUT/tap-c$i.jsonl" 2> "$OUT/tap-c$i.err" &
  tap_pids+=($!)
done
taps_ok=0
for ((i = 0; i < CAMERAS; i++)); do
  if wait "${tap_pids[$i]}"; then rc=0; else rc=$?; fi
  frames=$(grep -c '"timecode_seq":[0-9]' "$OUT/tap-c$i.jsonl")
  if [[ $rc != 0 ]]; then
    fail "tap c$i: exit $rc: $(tail -2 "$OUT/tap-c$i.err" | tr '\n' ' ')"
  elif [[ $expect_gpu == 1 ]] && ! grep -q 'device memory' "$OUT/tap-c$i.err"; then
    fail "tap c$i: the share is not in device memory: $(head -1 "$OUT/tap-c$i.err")"
  elif [[ $expect_gpu == 1 && $(access "$i") == copy ]] && ! grep -qE 'read on GPU [0-9]+: copy' "$OUT/tap-c$i.err"; then
    fail "tap c$i: --device-access copy, but tap says: $(sed -n 2p "$OUT/tap-c$i.err")"
  else
    taps_ok=$((taps_ok + 1))
    echo "tap c$i ($(access "$i")): $frames frames ($(grep timecodes "$OUT/tap-c$i.err"))"
  fi
done
[[ $taps_ok == "$CAMERAS" ]] && pass "every camera's share read in another process, every timecode readable and in order"
stats > "$OUT/stats-taps-1.json"; t1=$(date +%s.%N); c1=$(cpu_ticks)
echo "while $CAMERAS readers attached (each its own process and CUDA context) and read:"
window_report taps "$t0" "$t1" "$c0" "$c1" || echo "note: frames dropped while the readers started (reported, not a failure)"

if [[ $expect_gpu == 1 ]]; then
  if ((BATCH_FROM > 0 && CAMERAS >= BATCH_FROM)); then
    grep -q 'batches of up to' "$OUT/serve.log" && pass "serve used the batched nvJPEG decoder" ||
      fail "serve's log never names the batched decoder ('batches of up to')"
  else
    echo "(fewer than BATCH_FROM=$BATCH_FROM cameras: each camera decodes on its own nvJPEG decoder, as serve chooses)"
  fi
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | grep "^$serve_pid," |
    awk -F, -v n="$CAMERAS" '{gsub(/ MiB/, "", $2); printf "serve GPU memory: %d MiB, %.1f MiB per camera\n", $2, $2 / n}'
fi
grep -E ' (error|warn) ' "$OUT/serve.log" | head -5

step "stop"
kill -INT "$serve_pid"
for ((t = 0; t < 30; t++)); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$serve_pid" 2>/dev/null; then fail "serve still running 15 s after SIGINT"; else wait "$serve_pid"; pass "serve stopped"; fi
serve_pid=""
echo
[[ $status == 0 ]] && echo "gpu-cameras-check: PASS" || echo "gpu-cameras-check: FAIL"
exit $status
