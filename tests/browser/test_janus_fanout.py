#!/usr/bin/python3
"""`zerohop serve --janus HOST:PORT?mountpoint=ID` feeds a real Janus (the Debian package, started here with a generated
configuration: streaming plugin, one RTP mountpoint of H.264 with an RTCP port and Opus, HTTP transport) and
headless Chromium plays the mountpoint through Janus's streaming API:
  - serve runs with --keyint 0 (keyframes only on request), so the picture can only start if Janus's
    keyframe request (RTCP PLI/FIR to its mountpoint's rtcpport) reaches the encoder: /stats counts it;
  - every viewer decodes >= 25 fps and reads the timecode from the frames (they are serve's frames);
  - every viewer hears the camera's sound (serve --audio test: the Opus goes to the mountpoint's audio
    port, learnt from Janus): at least a second of samples, at most 5 % concealed;
  - serve encodes once (its frame rate stays the source's) and has no WHEP viewer of its own;
  - Janus is restarted while serve keeps sending: a new viewer plays again.
serve asks Janus's HTTP API for the mountpoint's ports (an unknown mountpoint makes serve exit, saying so).
Janus ignores loopback for ICE, so this runs in a private network namespace with a veth pair.

usage: test_janus_fanout.py [--netns] [--source test:640x360@30] [--viewers 1] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no janus, chromium, chromedriver or selenium)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import janus_harness as jh  # noqa: E402
import zerohop_browser as zb  # noqa: E402


def stats(base: str) -> dict:
    with urllib.request.urlopen(base + "stats", timeout=2) as r:
        return json.load(r)


def main() -> int:
    ap = zb.serve_test_args(__doc__)
    ap.add_argument("--viewers", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = zb.parse_serve_test_args(ap)
    if not jh.find_janus():
        zb.skip("the Janus test needs janus with its streaming plugin and HTTP transport (apt-get install janus)")
    chromium, chromedriver = zb.find_browser()
    if not args.netns or not zb.enter_private_network(lan=True):
        zb.skip("Janus ignores loopback for ICE: this test needs a private network namespace (root) for its veth pair")
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    janus = jh.Janus(out / "janus_fanout.janus.log")
    port = zb.free_port()
    janus_api = f"{jh.JANUS_IP}:{janus.http_port}"
    # An unknown mountpoint: serve asks Janus's API at start and refuses to run, saying why.
    wrong = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{zb.free_port()}",
                                    "--janus", f"{janus_api}?mountpoint={jh.MOUNTPOINT_ID + 1}"],
                     out / "janus_fanout.wrong.serve.log")
    try:
        wrong.proc.wait(15)
    except subprocess.TimeoutExpired:
        pass
    # The API form: serve learns the mountpoint's video port, rtcpport and pt from Janus.
    # With the test tone: serve also learns the mountpoint's audio port and sends the Opus there.
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}", "--keyint", "0",
                                    "--audio", "test", "--janus", f"{janus_api}?mountpoint={jh.MOUNTPOINT_ID}",
                                    "--status-interval", "5"], out / "janus_fanout.serve.log")
    drivers = []
    try:
        rc = wrong.proc.poll()
        said = f"mountpoint {jh.MOUNTPOINT_ID + 1}"
        if rc not in (None, 0):  # its last words may still be in the pipe
            zb.wait_until("serve's error message", lambda: said in wrong.output(), 2)
        if rc in (None, 0) or said not in wrong.output():
            raise AssertionError(f"serve --janus ...?mountpoint={jh.MOUNTPOINT_ID + 1} (no such mountpoint) should "
                                 f"exit non-zero naming it; exit {rc}, said:\n{wrong.tail(5)}")
        print("unknown mountpoint refused: " + wrong.tail(1).strip())
        url = serve.wait_url(20)
        if not url:
            raise AssertionError("zerohop serve printed no 'open http://' line within 20 s")
        forced0 = stats(url)["keyframes_forced"]
        time.sleep(1.5)  # a few RTCP reports, so Janus knows where to send its keyframe requests
        for _ in range(args.viewers):
            d = zb.start_chromium(chromium, chromedriver)
            drivers.append(d)
            jh.play_janus(d, janus)
        zb.wait_until("every viewer plays through Janus", lambda: all(jh.meter(d)["frames"] > 15 for d in drivers), 20)
        s0 = stats(url)
        if s0["keyframes_forced"] <= forced0:
            raise AssertionError("the picture started but serve forced no keyframe: whose keyframe was it?")
        before = [jh.meter(d) for d in drivers]
        dec0 = [d.execute_async_script("decoded().then(arguments[0])") for d in drivers]
        t0 = time.monotonic()
        time.sleep(args.seconds)
        elapsed = time.monotonic() - t0
        after = [jh.meter(d) for d in drivers]
        dec = [(d.execute_async_script("decoded().then(arguments[0])") - n) / elapsed for d, n in zip(drivers, dec0)]
        s1 = stats(url)
        encoded = (s1["frames"] - s0["frames"]) / elapsed
        lat = [jh.latency_since(d, b["n"]) for d, b in zip(drivers, before)]
        p50 = [round(zb.percentile(x, 0.5), 1) if x else None for x in lat]
        print(f"through Janus: decoded fps {[round(x, 1) for x in dec]}, presented "
              f"{[round((a['frames'] - b['frames']) / elapsed, 1) for a, b in zip(after, before)]} fps, timecodes read "
              f"{[a['read'] - b['read'] for a, b in zip(after, before)]}, capture->display p50 {p50} ms; serve encoded "
              f"{encoded:.1f} fps, forced {s1['keyframes_forced']} keyframes, WHEP viewers {s1['viewers']}")
        for i, f in enumerate(dec):
            if f < 25:
                raise AssertionError(f"viewer {i} decodes only {f:.1f} fps through Janus")
            if after[i]["read"] - before[i]["read"] < 0.8 * f * elapsed:
                raise AssertionError(f"viewer {i} read the timecode in too few frames: not serve's picture?")
        heard = [d.execute_async_script("heard().then(arguments[0])") for d in drivers]
        print(f"sound through Janus: samples {[h['samples'] for h in heard]}, concealed "
              f"{[h['concealed'] for h in heard]}")
        for i, h in enumerate(heard):
            # The tone has played since the picture started: at least a second of it, little concealed.
            if h["samples"] < 48000:
                raise AssertionError(f"viewer {i} heard {h['samples']} samples of the camera's sound through Janus")
            if h["concealed"] > 0.05 * h["samples"]:
                raise AssertionError(f"viewer {i}: {h['concealed']} of {h['samples']} samples concealed")
        if s1["viewers"] != 0:
            raise AssertionError(f"serve counts {s1['viewers']} WHEP viewers; Janus viewers must not be serve's")
        source_fps = float(args.source.rsplit("@", 1)[1]) if "@" in args.source else 30.0
        if encoded > source_fps * 1.15:
            raise AssertionError(f"serve encoded {encoded:.1f} fps for a {source_fps:.0f} fps source")

        # Janus restarts (same configuration) while serve keeps sending: a new viewer gets a picture again,
        # which again needs Janus's keyframe request to reach serve (--keyint 0).
        for d in drivers:
            d.quit()
        drivers = []
        janus.stop()
        janus = jh.Janus(out / "janus_fanout.janus-restarted.log")
        time.sleep(1.5)
        d = zb.start_chromium(chromium, chromedriver)
        drivers.append(d)
        jh.play_janus(d, janus)
        took = zb.wait_until("a viewer plays through the restarted Janus", lambda: jh.meter(d)["frames"] > 15, 20)
        print(f"Janus restarted: a new viewer plays after {took:.1f} s")
    except (AssertionError, RuntimeError) as e:
        return zb.report_failure(str(e), serve, drivers, out, "janus_fanout")
    finally:
        for d in drivers:
            d.quit()
        serve.stop(2.0)
        wrong.stop(1.0)
        janus.stop()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
