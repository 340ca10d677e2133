#!/usr/bin/python3
"""Fan-out benchmark (docs/benchmarks.md, "Many viewers"), two parts in one run, on this machine:

1. CPU per added viewer with the built-in WHEP fan-out: one `zerohop serve` (test camera, 720p30 by
   default), 0, 1, 2 and 4 headless-Chromium viewers added one after another; for each count, serve's CPU
   (utime+stime from /proc/PID/stat, % of one core) over --seconds, and the viewers' presented fps.
2. Added latency through Janus vs direct WHEP: one `zerohop serve --janus` feeding a Janus started from its
   Debian package (tests/browser/janus_harness.py), one Chromium playing the Janus mountpoint and one playing
   serve's WHEP directly, at the same time, with the same page and the same timecode meter (viewer.js's
   reader): capture->display p50/p99 of each and the difference.

usage: scripts/bench-fanout.py [--zerohop build/apps/zerohop/zerohop] [--source test:1280x720@30]
                               [--seconds 10] [--out FILE]
Run as root (private network namespace with a veth pair: Janus ignores loopback for ICE). Needs chromium,
chromium-driver, python3-selenium and janus (scripts/install-deps.sh).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import janus_harness as jh  # noqa: E402
import zerohop_browser as zb  # noqa: E402

# CPU accounting from /proc, as the end-to-end benchmark does it (scripts/bench-e2e.py).
_spec = importlib.util.spec_from_file_location("bench_e2e", ROOT / "scripts" / "bench-e2e.py")
bench_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_e2e)
cpu_seconds, tree_cpu_seconds, cpu_delta = bench_e2e.cpu_seconds, bench_e2e.tree_cpu_seconds, bench_e2e.cpu_delta


def stats(base: str) -> dict:
    with urllib.request.urlopen(base + "stats", timeout=2) as r:
        return json.load(r)


def wait_playing(drivers, timeout=30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(jh.meter(d)["frames"] > 30 for d in drivers):
            return
        time.sleep(0.2)
    raise RuntimeError(f"viewers not playing within {timeout} s: {[jh.meter(d) for d in drivers]}")


def measure(serve: zb.Serve, url: str, drivers, seconds: float) -> dict:
    before = [(jh.meter(d), time.monotonic()) for d in drivers]
    b0 = [tree_cpu_seconds(d.service.process.pid) for d in drivers]
    f0, c0, t0 = stats(url)["frames"], cpu_seconds(serve.proc.pid), time.monotonic()
    time.sleep(seconds)
    c1, t1, f1 = cpu_seconds(serve.proc.pid), time.monotonic(), stats(url)["frames"]
    browsers = sum(cpu_delta(b, tree_cpu_seconds(d.service.process.pid)) for b, d in zip(b0, drivers))
    fps = [(jh.meter(d)["frames"] - b["frames"]) / (time.monotonic() - tb) for d, (b, tb) in zip(drivers, before)]
    lat = [jh.latency_since(d, b["n"]) for d, (b, _) in zip(drivers, before)]
    return {"cpu": 100 * (c1 - c0) / (t1 - t0), "browsers": 100 * browsers / (t1 - t0), "encoded": (f1 - f0) / (t1 - t0),
            "fps": fps, "latency": lat}


def fmt(v, digits=1):
    return "–" if v is None else f"{v:.{digits}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerohop", default=str(ROOT / "build" / "apps" / "zerohop" / "zerohop"))
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--counts", type=int, nargs="+", default=[0, 1, 2, 4])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    chromium, chromedriver = zb.find_browser()
    if not jh.find_janus():
        zb.skip("needs janus (apt-get install janus)")
    if not zb.enter_private_network(lan=True):
        zb.skip("needs a private network namespace (root)")
    logs = Path("/tmp/zerohop-bench-fanout")
    logs.mkdir(exist_ok=True)
    lines = [f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} cores, "
             f"load average at start {os.getloadavg()[0]:.1f}, source {args.source}, {args.seconds:.0f} s per step", ""]

    # 1. CPU per added viewer, built-in fan-out.
    port = zb.free_port()
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}",
                                    "--status-interval", "10"], logs / "cpu.serve.log")
    drivers = []
    rows = []
    try:
        url = serve.wait_url(20)
        time.sleep(2)
        for n in sorted(args.counts):
            while len(drivers) < n:
                d = zb.start_chromium(chromium, chromedriver)
                drivers.append(d)
                jh.play_whep(d, url)
            if drivers:
                wait_playing(drivers)
            time.sleep(2)
            m = measure(serve, url, drivers, args.seconds)
            rows.append((n, m))
            print(f"{n} viewers: serve CPU {m['cpu']:.1f} %, browsers {m['browsers']:.0f} %, encoded "
                  f"{m['encoded']:.1f} fps, viewer fps {[round(f, 1) for f in m['fps']]}", flush=True)
    finally:
        for d in drivers:
            d.quit()
        serve.stop(3)
    lines += ["| WHEP viewers | serve CPU, % of one core | per viewer added since 0 | encoded fps | viewers' fps (min) "
              "| all Chromium processes, % of one core |",
              "|---|---|---|---|---|---|"]
    base = rows[0][1]["cpu"] if rows and rows[0][0] == 0 else None
    for n, m in rows:
        per = (m["cpu"] - base) / n if base is not None and n else None
        lines.append(f"| {n} | {m['cpu']:.1f} | {fmt(per)} | {m['encoded']:.1f} | {fmt(min(m['fps'])) if m['fps'] else '–'} "
                     f"| {m['browsers']:.0f} |")

    # 2. Janus vs direct WHEP, same serve, same time.
    janus = jh.Janus(logs / "janus.log")
    port = zb.free_port()
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}",
                                    "--janus", f"{jh.JANUS_IP}:{janus.rtp_port}?rtcp={janus.rtcp_port}",
                                    "--status-interval", "10"], logs / "janus.serve.log")
    drivers = []
    try:
        url = serve.wait_url(20)
        time.sleep(1.5)
        direct, via = zb.start_chromium(chromium, chromedriver), zb.start_chromium(chromium, chromedriver)
        drivers = [direct, via]
        jh.play_whep(direct, url)
        sub = jh.play_janus(via, janus)
        wait_playing(drivers)
        time.sleep(3)
        sub.keepalive()
        m = measure(serve, url, drivers, args.seconds)
    finally:
        for d in drivers:
            d.quit()
        serve.stop(3)
        janus.stop()
    p = {k: (zb.percentile(x, 0.5), zb.percentile(x, 0.99), len(x)) for k, x in zip(("direct", "janus"), m["latency"])}
    print(f"direct WHEP p50/p99 {p['direct'][:2]} ms, through Janus {p['janus'][:2]} ms", flush=True)
    lines += ["", "| path (same serve, same time) | capture→display p50 | p99 | samples | viewer fps |",
              "|---|---|---|---|---|",
              f"| direct WHEP | {fmt(p['direct'][0])} | {fmt(p['direct'][1])} | {p['direct'][2]} | {m['fps'][0]:.1f} |",
              f"| through Janus (RTP → streaming plugin → WebRTC) | {fmt(p['janus'][0])} | {fmt(p['janus'][1])} | "
              f"{p['janus'][2]} | {m['fps'][1]:.1f} |"]
    if p["direct"][0] is not None and p["janus"][0] is not None:
        lines.append(f"| **added by Janus** | **{p['janus'][0] - p['direct'][0]:+.1f}** | "
                     f"{p['janus'][1] - p['direct'][1]:+.1f} | | |")
    lines.append(f"\nserve CPU with --janus and one direct viewer: {m['cpu']:.1f} % of one core")
    text = "\n".join(lines)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
