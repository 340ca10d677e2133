#!/usr/bin/python3
"""VP8 viewers benchmark (docs/benchmarks.md, "VP8 viewers"): what a viewer without H.264 costs serve.

One `zerohop serve --gpu off` (test camera, 720p30 by default, x264 superfast at 2500 kb/s); viewers are
tests/stream's zerohop-whep-receive (GStreamer webrtcbin + libavcodec, lighter than a browser), added one
after another: none, one H.264, then one VP8 (so both encodes run), then a second VP8. For each step,
over --seconds: serve's CPU (utime+stime from /proc/PID/stat, % of one core), the VP8 encode's own CPU
per frame (/stats vp8.encode_cpu_ms_mean over the window), and the encoded fps of each encode.

usage: scripts/bench-vp8-viewers.py [--zerohop build/apps/zerohop/zerohop]
                                    [--receiver build/tests/stream/zerohop-whep-receive]
                                    [--source test:1280x720@30] [--seconds 10]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import zerohop_browser as zb  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_e2e", ROOT / "scripts" / "bench-e2e.py")
bench_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_e2e)
cpu_seconds = bench_e2e.cpu_seconds


def stats(base: str) -> dict:
    with urllib.request.urlopen(base + "stats", timeout=2) as r:
        return json.load(r)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerohop", default=str(ROOT / "build/apps/zerohop/zerohop"))
    ap.add_argument("--receiver", default=str(ROOT / "build/tests/stream/zerohop-whep-receive"))
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()

    out = zb.artifacts_dir(Path.cwd())
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--gpu", "off", "--listen", f"127.0.0.1:{zb.free_port()}"],
                     out / "bench_vp8.serve.log")
    receivers: list[subprocess.Popen] = []
    rows = []
    try:
        url = serve.wait_url(20)
        if not url:
            print("serve did not start:\n" + serve.tail())
            return 1
        print(f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} CPUs, "
              f"load {os.getloadavg()[0]:.1f}; serve {args.source} --gpu off", flush=True)
        steps = [("none", None), ("1 H.264", "h264"), ("1 H.264 + 1 VP8", "vp8"), ("1 H.264 + 2 VP8", "vp8")]
        for name, codec in steps:
            if codec:
                receivers.append(subprocess.Popen(
                    [args.receiver, url + "whep", "--codec", codec, "--frames", "1000000", "--timeout", "3600"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                want = len(receivers)
                zb.wait_until(f"{want} viewers connected",
                              lambda: sum(v["connected"] for v in stats(url)["viewer_sessions"]) == want, 20)
            time.sleep(2.0)  # the first keyframe and the encoder's start settle
            s0, c0, t0 = stats(url), cpu_seconds(serve.proc.pid), time.monotonic()
            time.sleep(args.seconds)
            s1, c1, t1 = stats(url), cpu_seconds(serve.proc.pid), time.monotonic()
            dt = t1 - t0
            vp8_frames = s1["vp8"]["frames"] - s0["vp8"]["frames"]
            vp8_cpu_ms = None
            if vp8_frames > 0:
                total1 = (s1["vp8"]["encode_cpu_ms_mean"] or 0) * s1["vp8"]["frames"]
                total0 = (s0["vp8"]["encode_cpu_ms_mean"] or 0) * s0["vp8"]["frames"]
                vp8_cpu_ms = (total1 - total0) / vp8_frames
            row = {"viewers": name, "serve_cpu_pct": 100.0 * (c1 - c0) / dt,
                   "h264_fps": (s1["frames"] - s0["frames"]) / dt, "vp8_fps": vp8_frames / dt,
                   "vp8_encode_cpu_ms_per_frame": vp8_cpu_ms, "vp8_running": s1["vp8"]["running"],
                   "codecs": [v["codec"] for v in s1["viewer_sessions"]]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        for r in receivers:
            r.terminate()
        for r in receivers:
            try:
                r.wait(5)
            except subprocess.TimeoutExpired:
                r.kill()
        serve.stop(3.0)
    print("\n| viewers | serve CPU, % of one core | H.264 fps | VP8 fps | VP8 encode CPU per frame |")
    print("|---|---|---|---|---|")
    for r in rows:
        ms = f"{r['vp8_encode_cpu_ms_per_frame']:.1f} ms" if r["vp8_encode_cpu_ms_per_frame"] else "–"
        print(f"| {r['viewers']} | {r['serve_cpu_pct']:.1f} | {r['h264_fps']:.1f} | {r['vp8_fps']:.1f} | {ms} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
