#!/usr/bin/env python3
"""How many cameras one `zerohop serve` carries on this machine's CPU (x264, no GPU).

  scripts/bench-cameras-cpu.py [--cameras 2,4,6,8] [--seconds 12] [--size 640x360] [--fps 30]
                               [--rtsp [--hevc | --readers]] [--zerohop build/apps/zerohop/zerohop] [--out FILE]

--rtsp: the cameras are IP cameras instead, all playing one tests/rtsp/rtsp_clip_server.py (FFmpeg's RTP of a
libx264 clip at --size/--fps, an IDR a second, over TCP), each passed through (no decode, no encode): what
serve's RTSP ingest, timing and fan-out cost per camera. The clip server's own CPU (FFmpeg, Python) is not
serve's and is not counted. --rtsp --hevc: H.265 cameras (a libx265 clip), each decoded by libavcodec on the CPU
and encoded again by x264: what an H.265 camera costs without a GPU. --rtsp --readers: passed through, and each
camera's frame share read by a `zerohop tap` (serve --share): its H.264 is then also decoded beside the
passthrough on the CPU (libavcodec), and the row adds what that decode costs (the tap's own CPU is not serve's).

For each N: `zerohop serve --gpu off` with N built-in test cameras (--camera camK=test:SIZE@FPS), no
viewer (every camera still converts and encodes every frame); after a 3 s warm-up, /stats is read at
the start and the end of a --seconds window. Per row: the slowest camera's frame rate over the window,
frames dropped anywhere (source, encode queue, stage), the median over the cameras of their capture ->
send p50 / p99, and serve's CPU time (utime + stime from /proc) per camera, in % of one core.
A row "carries" N cameras when the slowest runs at >= 98 % of --fps and <= 0.1 % of frames dropped.
The test camera draws each frame on the CPU (its ingest stage), which a real camera does not: a box
with real cameras carries at least as many.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stats(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as r:
        return json.load(r)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dropped(cam):
    return cam.get("drops", 0) + cam.get("encoder_queue_drops", 0) + cam.get("source_drops", 0)


def clip_server(args):
    """tests/rtsp/rtsp_clip_server.py at --size/--fps: (process, its RTSP port)."""
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "..", "tests", "rtsp", "rtsp_clip_server.py"),
                             "--port", "0", "--size", args.size, "--fps", str(args.fps), "--keyint", str(args.fps),
                             "--seconds", "10", "--codec", "h265" if args.hevc else "h264"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60  # it encodes its clip first
    for line in proc.stdout:
        if line.startswith("PORT "):
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # keep it drained
            return proc, int(line.split()[1])
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError("the RTSP clip server did not start")


def run_row(args, n):
    port = free_port()
    cmd = [args.zerohop, "serve", "--gpu", "off", "--listen", f"127.0.0.1:{port}"]
    for k in range(n):
        source = f"rtsp://127.0.0.1:{args.rtsp_port}/cam{k}" if args.rtsp else f"test:{args.size}@{args.fps}"
        cmd += ["--camera", f"cam{k}={source}"]
    if args.readers:
        cmd += ["--share"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    taps = []
    try:
        limit = 15 + (n if args.rtsp else 0)  # an IP camera waits for its first IDR
        deadline = time.monotonic() + limit
        while True:  # up: every camera running
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited {proc.returncode}: {proc.stderr.read()[-400:]}")
            try:
                s = stats(port)
                if len(s.get("cameras", [])) == n and all(c.get("state") == "running" for c in s["cameras"]):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cameras did not all run within {limit:g} s")
            time.sleep(0.2)
        for k in range(n if args.readers else 0):  # each reader keeps its camera's pictures decoded
            taps.append(subprocess.Popen([args.zerohop, "tap", f"cam{k}", "--count", "1000000", "--timeout", "10"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(3)  # warm-up: encoders' first pictures
        a, cpu_a, t_a = stats(port), cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.seconds)
        b, cpu_b, t_b = stats(port), cpu_seconds(proc.pid), time.monotonic()
    finally:
        for t in taps:
            t.kill()
            t.wait()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
    span = t_b - t_a
    before = {c["name"]: c for c in a["cameras"]}
    fps, frames, drops, p50, p99, pictures, decode_ms = [], 0, 0, [], [], 0, []
    for c in b["cameras"]:
        c0 = before[c["name"]]
        df = c["frames"] - c0["frames"]
        fps.append(df / span)
        frames += df
        drops += dropped(c) - dropped(c0)
        p50.append(c["total"]["p50_ms"])
        p99.append(c["total"]["p99_ms"])
        d0, d1 = c0.get("passthrough_decode") or {}, c.get("passthrough_decode") or {}
        pictures += d1.get("pictures", 0) - d0.get("pictures", 0)
        if d1.get("pictures"):
            decode_ms.append(d1["decode_ms"]["p50"])
    return {
        "cameras": n,
        "min_fps": min(fps),
        "drop_pct": 100.0 * drops / max(1, frames + drops),
        "p50": statistics.median(p50),
        "p99": statistics.median(p99),
        "cpu_pct_per_camera": 100.0 * (cpu_b - cpu_a) / span / n,
        "pictures_per_s": pictures / span / n,
        "decode_ms": statistics.median(decode_ms) if decode_ms else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cameras", default="2,4,6,8")
    ap.add_argument("--seconds", type=float, default=12)
    ap.add_argument("--size", default="640x360")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--rtsp", action="store_true", help="IP cameras passed through, from one RTSP clip server")
    ap.add_argument("--hevc", action="store_true",
                    help="with --rtsp: H.265 cameras, each decoded by libavcodec and encoded again by x264")
    ap.add_argument("--readers", action="store_true",
                    help="with --rtsp: a frame-share reader per camera, so each is also decoded beside the passthrough")
    ap.add_argument("--zerohop", default="build/apps/zerohop/zerohop")
    ap.add_argument("--out")
    args = ap.parse_args()
    server = None
    if args.rtsp:
        server, args.rtsp_port = clip_server(args)
    try:
        return report(args)
    finally:
        if server:
            server.terminate()
            server.wait(10)


def report(args):
    rows = []
    for n in (int(x) for x in args.cameras.split(",")):
        try:
            r = run_row(args, n)
        except RuntimeError as e:
            print(f"{n} cameras: {e}", file=sys.stderr)
            return 1
        rows.append(r)
        print(f"  {n} cameras: slowest {r['min_fps']:.1f} fps, {r['drop_pct']:.2f} % dropped", flush=True)
    cores = os.cpu_count()
    kind = (f"IP cameras {args.size}@{args.fps} H.265 decoded (libavcodec) and encoded again (x264), RTSP over TCP"
            if args.rtsp and args.hevc else f"IP cameras {args.size}@{args.fps} H.264 passed through (RTSP over TCP)"
            + (", each read from its frame share: decoded beside the passthrough (libavcodec)" if args.readers else "")
            if args.rtsp
            else f"x264, test cameras {args.size}@{args.fps}")
    lines = [f"### Cameras on the CPU ({cores} cores, {kind}, {args.seconds:g} s a row)", "",
             "| cameras | slowest camera fps | dropped | capture -> send p50 / p99 ms (median camera) "
             "| CPU per camera (% of a core) |" + (" pictures/s per camera | decode p50 ms |" if args.readers else ""),
             "|---|---|---|---|---|" + ("---|---|" if args.readers else "")]
    carried = 0
    for r in rows:
        ok = r["min_fps"] >= 0.98 * args.fps and r["drop_pct"] <= 0.1
        carried = max(carried, r["cameras"]) if ok else carried
        lines.append(f"| {r['cameras']} | {r['min_fps']:.1f} | {r['drop_pct']:.2f} % | {r['p50']:.1f} / {r['p99']:.1f} "
                     f"| {r['cpu_pct_per_camera']:.1f} |" +
                     (f" {r['pictures_per_s']:.1f} | {r['decode_ms'] or 0:.2f} |" if args.readers else ""))
    lines += ["", f"Carried (slowest >= {0.98 * args.fps:.1f} fps, <= 0.1 % dropped): {carried} cameras."]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
