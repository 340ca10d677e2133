#!/usr/bin/env bash
# gpu-serve-check.sh: run `zerohop serve` end to end from the bundle scripts/gpu-serve-bundle.sh made,
# on a machine without Debian's media libraries (the GPU machine), and check what it did.
#
# Usage (repository root or anywhere):
#   cmake --build build --target zerohop zerohop-whep-receive zerohop-camemu zerohop_camemu
#   scripts/gpu-serve-bundle.sh build            here, once: makes .gpu-bundle/zerohop-serve.tar.xz
#   run(carry: [".gpu-bundle"], command: "bash scripts/gpu-serve-check.sh")   on the GPU machine
#   bash scripts/gpu-serve-check.sh              here (no GPU): the CPU path, reported as such
#
# Steps: unpack the bundle into a temp dir; point the loader and GStreamer at it (LD_LIBRARY_PATH,
# GST_PLUGIN_SYSTEM_PATH, GST_PLUGIN_PATH, GST_PLUGIN_SCANNER, GST_REGISTRY); `zerohop probe`;
# `zerohop serve` on the built-in test camera with --gpu auto --encoder auto --share NAME for
# SERVE_SECONDS; meanwhile /stats (four samples) and /metrics over HTTP, and `zerohop tap NAME
# --count 30 --json` from a second process; then SIGINT.
#
# Checks (exit 1 if any fails; each failure is printed as "FAIL: ..."):
#   - the bundle's binaries find every library (ldd) and GStreamer finds serve's elements;
#   - the data path serve logs is the GPU path where a GPU is present (nvidia-smi -L lists one; override
#     with EXPECT_GPU=0|1), else the CPU path;
#   - on the GPU path: NVENC from VRAM, or x264 on the host copy with the fallback line saying why;
#   - /stats: frames encoded and sent, rising between samples; fps > 0; /metrics answers;
#   - tap read 30 frames, all valid, sequence numbers rising, from device memory on the GPU path
#     (host memory on the CPU path);
#   - serve exits 0 within 15 s of SIGINT and logs "stopping (SIGINT)".
# Then video, GPU path against CPU path (serve twice more on VIEW_SOURCE, `--gpu $GPU_DEVICE` and
# `--gpu off`; the GPU run is skipped, saying so, where no GPU is expected): the bundle's
# zerohop-whep-receive (tests/stream/whep_receive.cpp: GStreamer webrtcbin, libavcodec, the pixel
# timecode) negotiates over WHEP and decodes RECEIVE_FRAMES pictures; checks, for each path:
#   - the serve log names the path asked for, and no SRTP or pipeline error;
#   - every picture decoded, each with a readable timecode, within RECEIVE_TIMEOUT s;
#   - capture -> decoded p50 (the timecode's capture wall clock to the decoded picture, same machine)
#     under LATENCY_P50_BUDGET_MS;
#   - nothing in the bundle loaded a shared library from the machine but the C/C++ runtime's and the
#     NVIDIA driver's (LD_DEBUG=files: every library the loader initialised and who asked for it,
#     dlopen()ed ones included: one the bundle lacks shows here, on a machine that has it, before it
#     shows on the GPU machine as no video; what the machine's own libraries load is theirs).
#   It prints one table: frames, timecodes, sequence gaps, first frame, capture -> decoded p50/p99/max.
#
# Environment: OUT (results; the device tool sets it; default /tmp/gpu-serve-check), BUNDLE (default
# .gpu-bundle/zerohop-serve.tar.xz), SOURCE (default test:1280x720@30), PORT (default 18473),
# SERVE_SECONDS (default 20), EXPECT_GPU, SOAK_SECONDS (default 0: no soak), CAMEMU (default empty).
# WHEP_SOAK_SECONDS (default 0), WHEP_SOAK_WARMUP (default 30), WHEP_SOAK_SOURCE (default
# test:1280x720@30): after the checks, tests/soak/soak.py against the bundle's serve (WHEP sessions
# and tap readers churning; its verdict on RSS, fds and GPU memory; output in whep-soak.log).
# CAMEMU="--format mjpeg --size 1920x1080 --fps 30" runs serve under the bundle's emulated V4L2 camera
# (`zerohop-camemu CAMEMU -- zerohop serve ...`; SOURCE then defaults to
# v4l2:/dev/video0?memory=userptr): V4L2 capture into page-locked USERPTR buffers, and for MJPEG the
# check also wants serve's "decodes MJPEG to NV12 in VRAM with nvJPEG" line on the GPU path.
# Soak (SOAK_SECONDS > 0, after the checks' run and before SIGINT): readers come and go (`zerohop tap
# NAME --count 15` one after the other, each its own process and CUDA context) while every 10 s the
# script samples serve's GPU memory (nvidia-smi --query-compute-apps for serve's pid, else the GPU's
# memory.used between two taps), RSS, open fds and threads into soak.csv; it fails unless GPU memory
# and fds end where they were at the first sample and RSS grew < 5 %.
# VIEW_SOURCE (default test:1280x720@30), RECEIVE_FRAMES (default 300), RECEIVE_TIMEOUT (default 30),
# LATENCY_P50_BUDGET_MS (default 300: the browser test sees 30-60 ms on a loaded 2-core box),
# GPU_DEVICE (default 0), VIEW=0 skips the video comparison, VIEW_VP8=0 the GPU path's VP8 viewer (a third
# serve --gpu $GPU_DEVICE whose receiver offers VP8 only; the check also wants "encoder: VP8 started" in its log).
# Files in $OUT: gpu-serve-check.log (everything), probe.txt, serve.log, stats.jsonl, metrics.txt, tap.jsonl,
# and per path (gpu, cpu, gpu-vp8, share): serve-PATH.log, receive-PATH.json (the receiver's summary),
# receive-PATH.csv (one row per decoded picture), loaded-PATH.txt (the libraries serve, its plugin
# scanner and the receiver loaded).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

OUT=${OUT:-/tmp/gpu-serve-check}
BUNDLE=${BUNDLE:-.gpu-bundle/zerohop-serve.tar.xz}
CAMEMU=${CAMEMU:-}
if [[ -n $CAMEMU ]]; then SOURCE=${SOURCE:-v4l2:/dev/video0?memory=userptr}; else SOURCE=${SOURCE:-test:1280x720@30}; fi
PORT=${PORT:-18473}
SERVE_SECONDS=${SERVE_SECONDS:-20}
SOAK_SECONDS=${SOAK_SECONDS:-0}
WHEP_SOAK_SECONDS=${WHEP_SOAK_SECONDS:-0}
WHEP_SOAK_WARMUP=${WHEP_SOAK_WARMUP:-30}
VIEW=${VIEW:-1}
VIEW_SOURCE=${VIEW_SOURCE:-test:1280x720@30}
RECEIVE_FRAMES=${RECEIVE_FRAMES:-300}
RECEIVE_TIMEOUT=${RECEIVE_TIMEOUT:-30}
LATENCY_P50_BUDGET_MS=${LATENCY_P50_BUDGET_MS:-300}
GPU_DEVICE=${GPU_DEVICE:-0}
SHARE=zhcheck$$
. scripts/gpu-bundle-lib.sh  # fail, pass, step, bundle_start, bundle_unpack, bundle_environment
bundle_start gpu-serve-check.log "expect the GPU path" zh-serve
bundle_unpack "$BUNDLE" "$tmp"
bundle_environment
zh() { env "${bundle_env[@]}" "$B/bin/zerohop" "$@"; }

# Every library the bundle's programs need resolves, and none but the C/C++ runtime and the NVIDIA
# driver comes from the machine.
env "${bundle_env[@]}" ldd "$B/bin/zerohop" "$B/bin/zerohop-whep-receive" "$B"/gst/*.so "$B/libexec/gst-plugin-scanner" \
  "$B"/lib/libsoftokn3.so "$B"/lib/libfreeblpriv3.so > "$tmp/ldd.txt" 2>&1
missing=$(grep 'not found' "$tmp/ldd.txt" | sort -u)
[[ -z $missing ]] && pass "every library resolves" || fail "libraries not found: $missing"
echo "from the machine: $(awk '/=> \// && $3 !~ /zerohop-serve\/lib/ {print $1}' "$tmp/ldd.txt" | sort -u | tr '\n' ' ')"
for e in appsrc rtph264pay webrtcbin dtlssrtpenc srtpenc nicesink rtpbin rtph264depay h264parse appsink; do
  if [[ -x $B/bin/gst-inspect-1.0 ]] && ! env "${bundle_env[@]}" "$B/bin/gst-inspect-1.0" "$e" >/dev/null 2>&1; then
    fail "GStreamer element $e not found in the bundle"
  fi
done

step "zerohop probe"
zh probe > "$OUT/probe.txt" 2>&1
echo "(rc $?)"
cat "$OUT/probe.txt"

step "zerohop serve --source $SOURCE --gpu auto --encoder auto --share $SHARE (${SERVE_SECONDS} s)"
# env execs zerohop in the forked child: $! is serve's own pid, which SIGINT goes to.
camera=()
if [[ -n $CAMEMU ]]; then
  [[ -x $B/bin/zerohop-camemu ]] || { echo "FAIL: CAMEMU is set but the bundle has no zerohop-camemu (build it, re-bundle)"; exit 1; }
  read -r -a camemu_args <<< "$CAMEMU"
  camera=("$B/bin/zerohop-camemu" "${camemu_args[@]}" --)
  echo "camera: zerohop-camemu $CAMEMU"
fi
env "${bundle_env[@]}" "${camera[@]}" "$B/bin/zerohop" serve --source "$SOURCE" --gpu auto --encoder auto --share "$SHARE" --listen "127.0.0.1:$PORT" \
  --status-interval 5 > "$OUT/serve.log" 2>&1 &
serve_pid=$!
now_ms() { echo $(($(date +%s%N) / 1000000)); }
started=$(now_ms)
http_get() {  # PATH: the body on stdout; non-zero if no answer
  python3 - "http://127.0.0.1:$PORT$1" <<'EOF'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=3) as r:
    sys.stdout.write(r.read().decode())
EOF
}
up=0
for _ in $(seq 1 60); do
  kill -0 "$serve_pid" 2>/dev/null || break
  # /stats answers as soon as the port is bound; the frame share exists once the first frame is
  # through (a tap started earlier finds no publisher), so wait for frames > 0.
  if frames=$(http_get /stats 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("frames", 0))') &&
     [[ $frames -gt 0 ]]; then up=1; break; fi
  sleep 0.5
done
if [[ $up -ne 1 ]]; then
  fail "serve did not report an encoded frame on /stats within 30 s"
  cat "$OUT/serve.log"
  kill -INT "$serve_pid" 2>/dev/null
  wait "$serve_pid"
  serve_pid=""
  exit 1
fi
echo "first frame sent after $(($(now_ms) - started)) ms"

zh tap "$SHARE" --count 30 --json --timeout 10 > "$OUT/tap.jsonl" 2> "$tmp/tap.err" &
tap_pid=$!
: > "$OUT/stats.jsonl"
sleep 0.5  # one sample while tap reads (share_readers), then three spread over the run
http_get /stats >> "$OUT/stats.jsonl" && echo >> "$OUT/stats.jsonl"
sample_at=(4 $((SERVE_SECONDS / 2)) $((SERVE_SECONDS - 2)))
for t in "${sample_at[@]}"; do
  while (($(now_ms) - started < t * 1000)); do sleep 0.2; done
  if body=$(http_get /stats); then echo "$body" >> "$OUT/stats.jsonl"; else fail "/stats did not answer at ${t} s"; fi
done
http_get /metrics > "$OUT/metrics.txt" || fail "/metrics did not answer"
wait "$tap_pid"
tap_rc=$?
while (($(now_ms) - started < SERVE_SECONDS * 1000)); do sleep 0.2; done

gpu_mem_mib() {  # serve's own GPU memory (MiB) where nvidia-smi lists its pid, else the GPU's memory.used
  local v
  v=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      awk -F', *' -v p="$serve_pid" '$1 == p {print $2}')
  [[ -n $v ]] && { echo "$v process"; return; }
  v=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
  [[ -n $v ]] && { echo "$v gpu"; return; }
  echo "- none"
}
soak_status=""
if ((SOAK_SECONDS > 0)); then
  step "soak: ${SOAK_SECONDS} s, readers coming and going"
  echo "t_s,gpu_mem_mib,gpu_mem_scope,rss_kib,fds,threads,taps,tap_failures,frames" > "$OUT/soak.csv"
  soak_start=$(now_ms)
  taps=0
  tap_failures=0
  next_sample=0
  while (($(now_ms) - soak_start < SOAK_SECONDS * 1000)); do
    if (($(now_ms) - soak_start >= next_sample * 1000)); then
      read -r mem scope < <(gpu_mem_mib)
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$serve_pid/status")
      fds=$(find "/proc/$serve_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
      threads=$(awk '/^Threads:/ {print $2}' "/proc/$serve_pid/status")
      frames=$(http_get /stats 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin).get("frames", 0))')
      echo "$next_sample,$mem,$scope,$rss,$fds,$threads,$taps,$tap_failures,$frames" | tee -a "$OUT/soak.csv"
      next_sample=$((next_sample + 10))
    fi
    if zh tap "$SHARE" --count 15 --timeout 5 > /dev/null 2>> "$tmp/soak-tap.err"; then
      taps=$((taps + 1))
    else
      tap_failures=$((tap_failures + 1))
    fi
  done
  soak_status=$(python3 - "$OUT/soak.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
if len(rows) < 3:
    bad.append(f"only {len(rows)} soak samples")
else:
    first, last = rows[0], rows[-1]
    if first["gpu_mem_mib"] != "-" and last["gpu_mem_mib"] != first["gpu_mem_mib"]:
        bad.append(f"GPU memory ({first['gpu_mem_scope']}) {first['gpu_mem_mib']} -> {last['gpu_mem_mib']} MiB")
    if int(last["fds"]) > int(first["fds"]):
        bad.append(f"fds {first['fds']} -> {last['fds']}")
    growth = int(last["rss_kib"]) / int(first["rss_kib"]) - 1
    if growth >= 0.05:
        bad.append(f"RSS {first['rss_kib']} -> {last['rss_kib']} KiB (+{growth:.1%})")
    if int(last["tap_failures"]) > 0:
        bad.append(f"{last['tap_failures']} of {int(last['taps']) + int(last['tap_failures'])} taps failed")
    print(f"soak: {len(rows)} samples, {last['taps']} readers came and went, GPU memory ({first['gpu_mem_scope']}) "
          f"{first['gpu_mem_mib']} -> {last['gpu_mem_mib']} MiB, RSS {first['rss_kib']} -> {last['rss_kib']} KiB "
          f"({growth:+.1%}), fds {first['fds']} -> {last['fds']}, threads {first['threads']} -> {last['threads']}, "
          f"frames {first['frames']} -> {last['frames']}")
for b in bad:
    print("FAIL: soak:", b)
EOF
)
  echo "$soak_status"
  tail -3 "$tmp/soak-tap.err" 2>/dev/null
fi

step "SIGINT"
kill -INT "$serve_pid"
serve_rc=timeout
for _ in $(seq 1 150); do
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    wait "$serve_pid"
    serve_rc=$?
    serve_pid=""
    break
  fi
  sleep 0.1
done
echo "serve exit status: $serve_rc"
echo "--- serve.log"
cat "$OUT/serve.log"
echo "--- tap (rc $tap_rc)"
cat "$tmp/tap.err"
head -3 "$OUT/tap.jsonl"
echo "..."
tail -2 "$OUT/tap.jsonl"
echo "--- /stats samples"
cat "$OUT/stats.jsonl"
echo "--- /metrics (first 40 lines)"
head -40 "$OUT/metrics.txt"

step "checks"
log=$OUT/serve.log
if [[ $expect_gpu -eq 1 ]]; then
  grep -q 'GPU path: ' "$log" && pass "GPU path: $(grep -o 'GPU path: .*' "$log" | head -1)" \
    || fail "a GPU is present but serve did not take the GPU path: $(grep -oE '(CPU path|no conversion)[^"]*' "$log" | head -1)"
  if grep -q 'NVENC encodes the frames from VRAM' "$log"; then
    pass "encoder: NVENC from VRAM"
  elif line=$(grep -o 'x264 on a host copy of each GPU frame, because .*' "$log" | head -1) && [[ -n $line ]]; then
    [[ $line =~ because\ NVENC\ is\ unavailable:\ .{8,} ]] && pass "encoder fallback: $line" \
      || fail "the x264 fallback line does not say why NVENC is unavailable: $line"
  else
    fail "no encoder choice line for the GPU path in serve.log"
  fi
  if [[ $CAMEMU == *mjpeg* ]]; then
    grep -q 'decodes MJPEG to NV12 in VRAM with nvJPEG' "$log" \
      && pass "MJPEG: $(grep -o 'decodes MJPEG to NV12 in VRAM with nvJPEG.*' "$log" | head -1)" \
      || fail "MJPEG camera on the GPU path, but serve did not say nvJPEG decodes it"
    # The emulated camera writes a restart marker every MCU row: on the JPEG engines its frames must be
    # split into strips (GPUs without engines decode on the hybrid backends, which do not split).
    if ! grep -qE 'nvJPEG [0-9.]+ hardware' "$log"; then :
    elif line=$(grep -oE 'each is decoded as [0-9]+ strips on the JPEG engines' "$log" | head -1) && [[ -n $line ]]; then
      pass "MJPEG restart strips: $line"
    else
      fail "MJPEG from the emulated camera (a restart marker every MCU row) was not split into strips: $(grep -o 'MJPEG: the camera.*' "$log" | head -1)"
    fi
  fi
  grep -q "sharing frames (NV12 in GPU memory) as '$SHARE'" "$log" && pass "frames shared in GPU memory" \
    || fail "serve did not say it shares NV12 frames in GPU memory"
else
  grep -qE 'CPU path' "$log" && pass "no GPU here: $(grep -oE 'CPU path.*' "$log" | head -1)" \
    || fail "no GPU expected, but serve did not log the CPU path"
fi
grep -q 'stopping (SIGINT)' "$log" || fail "serve did not log 'stopping (SIGINT)'"
if [[ -n $soak_status ]]; then
  grep -q '^FAIL: soak' <<< "$soak_status" && status=1
  echo "$soak_status"
fi
[[ $serve_rc == 0 ]] && pass "serve exited 0 after SIGINT" || fail "serve exit status after SIGINT: $serve_rc"

python3 - "$OUT/stats.jsonl" "$OUT/metrics.txt" "$expect_gpu" <<'EOF' || status=1
import json, sys
samples = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
gpu = sys.argv[3] == "1"
bad = []
if len(samples) < 2:
    bad.append(f"only {len(samples)} /stats samples")
else:
    frames = [s["frames"] for s in samples]
    if not all(b > a for a, b in zip(frames, frames[1:])):
        bad.append(f"/stats frames do not rise: {frames}")
    last = samples[-1]
    if last["fps"] <= 0:
        bad.append(f"/stats fps {last['fps']}")
    if "encode" not in last["stages"]:
        bad.append("/stats has no encode stage")
    enc = last["encoder"]
    want_path = "gpu" if gpu else "cpu"
    if last.get("path") != want_path:
        bad.append(f"/stats path {last.get('path')!r}, want {want_path!r}")
    if gpu and not ("from VRAM" in enc or "host copy of the GPU frame" in enc):
        bad.append(f"/stats encoder is not on the GPU path: {enc!r}")
    print(f"/stats: encoder {enc!r}, frames {frames}, fps {last['fps']:.1f}, drops {last['drops']}, "
          f"share_readers {[s['share_readers'] for s in samples]}, total p50 {last['total']['p50_ms']:.2f} ms "
          f"p99 {last['total']['p99_ms']:.2f} ms")
    for name, st in last["stages"].items():
        print(f"  {name:8s} p50 {st['p50_ms']:.3f} ms  p99 {st['p99_ms']:.3f} ms  ({st['samples']} samples)")
metrics = open(sys.argv[2]).read()
if "zerohop_" not in metrics:
    bad.append("/metrics has no zerohop_ series")
if f'path="{"gpu" if gpu else "cpu"}"' not in metrics:
    bad.append("/metrics zerohop_info does not carry path=" + ("gpu" if gpu else "cpu"))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF

grep -q "device memory" "$tmp/tap.err" && tap_mem=device || tap_mem=$(grep -oE '[a-z]+ memory' "$tmp/tap.err" | head -1)
[[ $tap_rc -eq 0 ]] || fail "tap exit status $tap_rc: $(tail -1 "$tmp/tap.err")"
if [[ $expect_gpu -eq 1 ]]; then
  [[ $tap_mem == device ]] && pass "tap attached to device memory" || fail "tap read from '$tap_mem', not device memory"
else
  echo "note: tap read from ${tap_mem:-?} (CPU path)"
fi
python3 - "$OUT/tap.jsonl" <<'EOF' || status=1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
seq = [r["seq"] for r in rows]
bad = []
if len(rows) != 30:
    bad.append(f"tap printed {len(rows)} frames, not 30")
if not all(b > a for a, b in zip(seq, seq[1:])):
    bad.append(f"tap sequence numbers do not rise: {seq}")
if not all(r["valid"] for r in rows):
    bad.append(f"{sum(not r['valid'] for r in rows)} tapped frames were overwritten while read")
if rows:
    lat = sorted(r["publish_to_read_ms"] for r in rows)
    print(f"tap: {len(rows)} frames, seq {seq[0]}..{seq[-1]}, {rows[0]['format']} {rows[0]['width']}x{rows[0]['height']}, "
          f"publish->read median {lat[len(lat) // 2]:.3f} ms max {lat[-1]:.3f} ms")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF

if [[ $WHEP_SOAK_SECONDS -gt 0 ]]; then
  # tests/soak/soak.py starts its own serve (through a wrapper that gives the bundle's environment to
  # zerohop only: python3 keeps the machine's libraries; exec keeps the pid soak.py samples) on the
  # test camera, with WHEP sessions (a real Chromium offer, negotiated, then DELETEd) and tap readers
  # coming and going; it fails on RSS growth >= 5 %, fd growth, GPU memory not flat, or lost frames.
  step "WHEP + reader soak on the GPU path: tests/soak/soak.py, ${WHEP_SOAK_SECONDS} s"
  wrap=$tmp/zerohop-wrapped
  { echo '#!/bin/sh'; printf 'exec env'; printf ' %q' "${bundle_env[@]}" "$B/bin/zerohop"; echo ' "$@"'; } > "$wrap"
  chmod +x "$wrap"
  timeout $((WHEP_SOAK_SECONDS + 240)) python3 tests/soak/soak.py "$wrap" tests/stream/data/chromium_offer.sdp \
    --seconds "$WHEP_SOAK_SECONDS" --warmup "$WHEP_SOAK_WARMUP" --source "${WHEP_SOAK_SOURCE:-test:1280x720@30}" \
    --report-every 60 2>&1 | tee "$OUT/whep-soak.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] && pass "WHEP + reader soak" || fail "WHEP + reader soak (whep-soak.log)"
fi

# The C/C++ runtime and the NVIDIA driver come from the machine; any other library that serve or the
# receiver loads from outside the bundle at the bundle's request is one the bundle lacks.
machine_lib='/(ld-linux-x86-64|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libnss_[a-z]+|libstdc\+\+|libgcc_s|libcuda|libnvidia-[a-z-]+|libnvcuvid|libnvjpeg|libcudart)\.so|/gconv/'
# view_run LABEL GPU_ARG PORT [CODEC]: serve on VIEW_SOURCE with --gpu GPU_ARG on 127.0.0.1:PORT; the bundle's receiver
# decodes RECEIVE_FRAMES pictures over WHEP (CODEC vp8: offering VP8 only, as Firefox ESR does); then the library
# check and SIGINT. Results in $OUT/*-LABEL.*.
view_run() {
  local label=$1 gpu=$2 port=$3 codec=${4:-h264} log pid rc up=0 gaps n_inside nss_libs
  log=$OUT/serve-$label.log
  step "video, $label path: zerohop serve --source $VIEW_SOURCE --gpu $gpu; zerohop-whep-receive --frames $RECEIVE_FRAMES --codec $codec"
  # LD_DEBUG=files: the loader logs every library it initialises, the ones dlopen()ed and closed again
  # too (NSS loads its token for SRTP set-up and unloads it), per process (serve, gst-plugin-scanner).
  rm -f "$OUT/ld-$label".*
  env "${bundle_env[@]}" LD_DEBUG=files LD_DEBUG_OUTPUT="$OUT/ld-$label" \
    "$B/bin/zerohop" serve --source "$VIEW_SOURCE" --gpu "$gpu" --encoder auto \
    --listen "127.0.0.1:$port" --status-interval 5 > "$log" 2>&1 &
  pid=$!
  serve_pid=$pid  # for cleanup()
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=3)' \
        "http://127.0.0.1:$port/stats" 2>/dev/null; then up=1; break; fi
    sleep 0.5
  done
  if [[ $up -ne 1 ]]; then
    if kill -0 "$pid" 2>/dev/null; then fail "$label path: serve did not answer /stats within 30 s"
    else fail "$label path: serve --gpu $gpu exited before answering: $(grep -m1 'error' "$log")"; fi
    cat "$log"
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    serve_pid=""
    return
  fi
  timeout $((RECEIVE_TIMEOUT + 20)) env "${bundle_env[@]}" LD_DEBUG=files LD_DEBUG_OUTPUT="$OUT/ld-$label.receiver" \
    "$B/bin/zerohop-whep-receive" "http://127.0.0.1:$port/whep" \
    --frames "$RECEIVE_FRAMES" --timeout "$RECEIVE_TIMEOUT" --frames-log "$OUT/receive-$label.csv" --codec "$codec" \
    > "$OUT/receive-$label.json" 2> "$OUT/receive-$label.err"
  rc=$?
  echo "receiver exit status $rc: $(cat "$OUT/receive-$label.json")"
  tail -5 "$OUT/receive-$label.err"
  [[ $rc -eq 0 ]] || fail "$label path: the receiver did not get $RECEIVE_FRAMES decodable pictures with timecodes (receive-$label.json)"
  kill -INT "$pid"
  rc=timeout
  for _ in $(seq 1 150); do
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; rc=$?; break; fi
    sleep 0.1
  done
  [[ $rc == timeout ]] && kill -KILL "$pid" 2>/dev/null
  serve_pid=""
  [[ $rc == 0 ]] || fail "$label path: serve exit status after SIGINT: $rc"
  python3 - "$B" "$machine_lib" "$OUT/loaded-$label.txt" "$OUT/ld-$label".* <<'EOF' > "$tmp/libs.txt"
# LD_DEBUG=files logs "file=NAME [0];  needed by|dynamically loaded by BY [0]" and "calling init: PATH".
# A library from outside the bundle is a gap when something in the bundle asked for it; one the
# machine's own libraries asked for (glibc's NSS modules and gconv, the NVIDIA driver's) is theirs.
import os, re, sys
bundle, machine, listing, logs = sys.argv[1] + "/", re.compile(sys.argv[2]), sys.argv[3], sys.argv[4:]
by, loaded = {}, set()
for f in logs:
    for line in open(f, errors="replace"):
        m = re.search(r"file=(\S+) \[\d+\];  (?:needed by|dynamically loaded by) (\S+)", line)
        if m:
            by.setdefault(os.path.basename(m.group(1)), m.group(2))
        m = re.search(r"calling init: (\S+)", line)
        if m:
            loaded.add(m.group(1))
open(listing, "w").write("".join(p + "\n" for p in sorted(loaded)))
inside = [p for p in loaded if p.startswith(bundle)]
outside = sorted(p for p in loaded if not p.startswith(bundle))
gaps = [f"{p} (for {by.get(os.path.basename(p), '?')})" for p in outside
        if not machine.search(p) and (by.get(os.path.basename(p), "").startswith(bundle) or
                                      not os.path.isabs(by.get(os.path.basename(p), "/")))]
theirs = [os.path.basename(p) for p in outside if machine.search(p)]
others = [f"{os.path.basename(p)} (for {os.path.basename(by.get(os.path.basename(p), '?'))})" for p in outside
          if not machine.search(p) and f"{p} (for {by.get(os.path.basename(p), '?')})" not in gaps]
nss = sorted({os.path.basename(p) for p in inside if re.search(r"/lib(softokn3|freeblpriv3|nssdbm3)\.so$", p)})
print(f"inside {len(inside)} {' '.join(nss) or 'none'}")
print("theirs " + " ".join(theirs + others))
print("gaps " + "; ".join(gaps))
EOF
  rm -f "$OUT/ld-$label".*
  read -r _ n_inside nss_libs < <(grep '^inside ' "$tmp/libs.txt")
  gaps=$(sed -n 's/^gaps //p' "$tmp/libs.txt")
  if [[ ! -s $OUT/loaded-$label.txt ]]; then
    fail "$label path: no LD_DEBUG output from serve and the receiver"
  elif [[ -n $gaps ]]; then
    fail "$label path: the bundle lacks libraries serve or the receiver loaded from the machine (add them to gpu-serve-bundle.sh): $gaps"
  else
    pass "$label path: serve and the receiver loaded $n_inside libraries from the bundle (NSS's token: $nss_libs), and from the machine only: $(sed -n 's/^theirs //p' "$tmp/libs.txt")"
  fi
  if grep -qE 'Could not initialize SRTP|pipeline error' "$log"; then
    fail "$label path: $(grep -oE '(Could not initialize SRTP|pipeline error).*' "$log" | head -1)"
  fi
  if [[ $codec == vp8 ]]; then
    grep -q 'encoder: VP8 started' "$log" && pass "$label path: $(grep -o 'encoder: VP8 started.*' "$log" | head -1)" \
      || fail "$label path: serve did not start the VP8 encode for a VP8-only viewer"
  fi
  if [[ $label == gpu* || $label == share ]]; then
    grep -q 'GPU path: ' "$log" && pass "gpu path: $(grep -o 'GPU path: .*' "$log" | head -1)" \
      || fail "serve --gpu $gpu did not take the GPU path: $(grep -oE '(CPU path|error).*' "$log" | head -1)"
  else
    grep -q 'CPU path' "$log" && pass "cpu path: $(grep -oE 'CPU path.*' "$log" | head -1)" \
      || fail "serve --gpu off did not log the CPU path"
  fi
}

# wait_share NAME: prints NAME's socket path once a publisher has created it (at most 10 s).
wait_share() {
  local dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/zerohop}
  local sock=${dir:-/tmp/zerohop-$(id -u)}/$1.sock
  for _ in $(seq 1 100); do [[ -S $sock ]] && break; sleep 0.1; done
  echo "$sock"
}

if [[ $VIEW -eq 1 ]]; then
  if [[ $expect_gpu -eq 1 ]]; then
    view_run gpu "$GPU_DEVICE" $((PORT + 1))
  else
    step "video, gpu path: skipped"
    echo "skip: the GPU path is not measured here: no GPU (nvidia-smi lists none; EXPECT_GPU=1 forces it)"
  fi
  view_run cpu off $((PORT + 2))
  # A viewer without H.264 (Firefox ESR's offer) on the GPU path: VP8 from a host copy of the NV12 frame
  # (with NVENC, downloaded only while it watches).
  if [[ $expect_gpu -eq 1 && ${VIEW_VP8:-1} -eq 1 ]]; then view_run gpu-vp8 "$GPU_DEVICE" $((PORT + 5)) vp8; fi
  if [[ $expect_gpu -eq 1 && ${SHARE_SOURCE:-1} -eq 1 ]]; then
    # serve --source share:NAME on a device share: an upstream serve publishes its GPU path's NV12
    # frames in VRAM, a second serve takes them as its camera (GPU path again) and the receiver decodes.
    step "device share as a source: serve --share zhup (GPU path) -> serve --source share:zhup"
    env "${bundle_env[@]}" "$B/bin/zerohop" serve --source "$VIEW_SOURCE" --gpu "$GPU_DEVICE" --share zhup \
      --listen "127.0.0.1:$((PORT + 3))" --status-interval 60 > "$OUT/serve-upstream.log" 2>&1 &
    upstream=$!
    sock=$(wait_share zhup)
    if [[ -S $sock ]]; then
      saved_source=$VIEW_SOURCE
      VIEW_SOURCE=share:zhup
      view_run share "$GPU_DEVICE" $((PORT + 4))
      VIEW_SOURCE=$saved_source
      grep -q "share 'zhup' (cuda-" "$OUT/serve-share.log" && pass "share source: $(grep -oE "share 'zhup' \(cuda-[^)]*\)[^;]*" "$OUT/serve-share.log" | head -1)" \
        || fail "serve --source share:zhup did not read a device share (serve-share.log)"
    else
      fail "the upstream serve --share zhup published no share (serve-upstream.log)"
    fi
    kill -INT "$upstream" 2>/dev/null
    wait "$upstream" 2>/dev/null
  fi
  if [[ $expect_gpu -eq 1 && -x ${C_PUBLISHER:-} ]]; then
    step "zerohop tap reads the C publisher's device frames ($C_PUBLISHER)"
    "$C_PUBLISHER" tapcam device 300 > "$OUT/c_publisher-tap.log" 2>&1 &
    cpub=$!
    sock=$(wait_share tapcam)
    tap_out=$(timeout 30 env "${bundle_env[@]}" "$B/bin/zerohop" tap tapcam --count 10 --json --timeout 10 2>&1)
    echo "$tap_out" | tail -2
    [[ $(grep -c '"format":"nv12"' <<<"$tap_out") -eq 10 ]] && pass "zerohop tap read 10 device frames of the C publisher" \
      || fail "zerohop tap did not read 10 device NV12 frames of the C publisher"
    kill "$cpub" 2>/dev/null
    wait "$cpub" 2>/dev/null
  fi
  step "video: capture -> decoded, GPU path against CPU path"
  python3 - "$OUT" "$LATENCY_P50_BUDGET_MS" "$expect_gpu" "$RECEIVE_FRAMES" <<'EOF' || status=1
import json, os, sys
out, budget, gpu, want = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
bad = []
print(f"{'path':7s} {'frames':>7s} {'timecodes':>9s} {'seq gaps':>8s} {'size':>9s} {'first ms':>8s} "
      f"{'p50 ms':>7s} {'p99 ms':>7s} {'max ms':>7s}")
rows = {}
for path in ("gpu", "cpu", "share", "gpu-vp8"):
    f = os.path.join(out, f"receive-{path}.json")
    if path in ("share", "gpu-vp8") and not os.path.exists(f):
        continue
    if path == "gpu" and not gpu:
        print(f"{path:7s} skipped: no GPU here")
        continue
    try:
        r = json.loads(open(f).read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError) as e:
        bad.append(f"{path} path: no receiver summary ({e})")
        continue
    rows[path] = r
    lat = r["latency_ms"]
    print(f"{path:7s} {r['frames_decoded']:7d} {r['timecodes_read']:9d} {r['seq_missing']:8d} "
          f"{str(r['width']) + 'x' + str(r['height']):>9s} {r['first_frame_ms']:8.0f} {lat['p50']:7.1f} "
          f"{lat['p99']:7.1f} {lat['max']:7.1f}")
    if r["error"]:
        bad.append(f"{path} path: {r['error']}")
    if r["frames_decoded"] < want:
        bad.append(f"{path} path: {r['frames_decoded']} of {want} pictures decoded")
    if r["timecodes_read"] and not (0 <= lat["p50"] <= budget):
        bad.append(f"{path} path: capture -> decoded p50 {lat['p50']:.1f} ms, budget {budget:.0f} ms")
if "gpu" in rows and "cpu" in rows:
    g, c = rows["gpu"]["latency_ms"], rows["cpu"]["latency_ms"]
    print(f"GPU path against CPU path: p50 {g['p50']:.1f} vs {c['p50']:.1f} ms ({g['p50'] - c['p50']:+.1f}), "
          f"p99 {g['p99']:.1f} vs {c['p99']:.1f} ms ({g['p99'] - c['p99']:+.1f})")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
fi

step "result"
if [[ $status -eq 0 ]]; then
  echo "gpu-serve-check: OK ($([[ $expect_gpu -eq 1 ]] && echo "GPU path" || echo "CPU path: no GPU here"))"
else
  echo "gpu-serve-check: FAILED"
fi
exit $status
