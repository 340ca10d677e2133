#!/usr/bin/python3
"""A/V sync benchmark (docs/benchmarks.md, "Sound: audio against video"): `zerohop serve --source TEST
--audio test` and zerohop-av-sync-receive (tests/stream/whep_av_sync.cpp), a GStreamer webrtcbin WHEP
viewer that decodes the H.264 and the Opus and times each marker frame of the test camera against the
test tone's click on rtpbin's lip-synced timeline. Each session starts a fresh serve, so the camera's
exposure phase (where the marker instant falls in the marker frame's exposure) differs between sessions;
the offsets of all sessions are pooled.

Prints, over all markers: click - marker p50 and p90 (positive: audio late), |click - marker| p50 and
p90, and click - marker less the exposure phase (what encoders, RTP/RTCP and rtpbin add), with the
command line, the machine and the commit.

usage: scripts/bench-av-sync.py [--zerohop build/apps/zerohop/zerohop]
                                [--receiver build/tests/stream/zerohop-av-sync-receive]
                                [--source test:1280x720@30] [--markers 30] [--sessions 3] [--out FILE]
Loopback only; needs what the build needs (GStreamer webrtcbin, opusdec, libavcodec).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))]


def session(zerohop: str, receiver: str, source: str, markers: int) -> dict:
    port = free_port()
    serve = subprocess.Popen([zerohop, "serve", "--source", source, "--gpu", "off", "--audio", "test",
                              "--listen", f"127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=2).read()
                break
            except OSError:
                if serve.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"serve did not answer /stats: {serve.stderr.read() if serve.poll() is not None else ''}")
                time.sleep(0.2)
        timeout = markers * 1.5 + 15
        r = subprocess.run([receiver, f"http://127.0.0.1:{port}/whep", "--markers", str(markers), "--timeout",
                            str(timeout)], capture_output=True, text=True, timeout=timeout + 30)
        lines = r.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if lines else {"error": "no output: " + r.stderr[-500:]}
        if r.returncode != 0:
            raise SystemExit(f"receiver exit {r.returncode}: {result.get('error')}")
        return result
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=15)
        except subprocess.TimeoutExpired:
            serve.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerohop", default=str(ROOT / "build/apps/zerohop/zerohop"))
    ap.add_argument("--receiver", default=str(ROOT / "build/tests/stream/zerohop-av-sync-receive"))
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--markers", type=int, default=30, help="markers in all (one a second)")
    ap.add_argument("--sessions", type=int, default=3, help="fresh serve runs the markers are spread over")
    ap.add_argument("--out", help="also write the summary as JSON here")
    a = ap.parse_args()
    per = max(1, a.markers // a.sessions)
    offsets: list[float] = []
    less_phase: list[float] = []
    sessions = []
    for i in range(a.sessions):
        r = session(a.zerohop, a.receiver, a.source, per)
        sessions.append(r)
        offsets += r["offsets_ms"]
        less_phase.append(r["offset_less_phase_ms"]["p50"])
        print(f"session {i + 1}: {r['matched']} markers, click - marker p50 {r['offset_ms']['p50']} ms, "
              f"exposure phase {r['exposure_phase_ms']['p50']} ms, less phase {r['offset_less_phase_ms']['p50']} ms",
              flush=True)
    absolute = [abs(v) for v in offsets]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    summary = {
        "command": " ".join(shlex.quote(x) for x in sys.argv),
        "source": a.source,
        "markers": len(offsets),
        "sessions": a.sessions,
        "click_minus_marker_ms": {"p50": percentile(offsets, 50), "p90": percentile(offsets, 90),
                                  "min": min(offsets), "max": max(offsets)},
        "abs_ms": {"p50": percentile(absolute, 50), "p90": percentile(absolute, 90)},
        "less_exposure_phase_ms_per_session": less_phase,
        "less_exposure_phase_ms_median": statistics.median(less_phase),
        "machine": f"{platform.node()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "commit": commit,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(json.dumps(summary, indent=1))
    print(f"audio - video over {len(offsets)} markers ({a.sessions} sessions, {a.source}): "
          f"p50 {summary['click_minus_marker_ms']['p50']:.1f} ms, p90 {summary['click_minus_marker_ms']['p90']:.1f} ms; "
          f"|offset| p50 {summary['abs_ms']['p50']:.1f} ms, p90 {summary['abs_ms']['p90']:.1f} ms; "
          f"less the exposure phase {summary['less_exposure_phase_ms_median']:.1f} ms")
    if a.out:
        Path(a.out).write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
