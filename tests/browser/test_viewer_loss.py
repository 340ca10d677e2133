#!/usr/bin/python3
"""Loss resilience end to end: `zerohop serve` streams to headless Chromium through the viewer page while
nftables, inside the test's private network namespace, drops UDP packets (RTP, RTX, RTCP, STUN alike, both
directions: the rules sit on the output hook of loopback). serve runs with --keyint 0 (IDRs only on
request), so a picture that comes back after an unrepairable loss proves the PLI -> IDR path.

Phase 1, --seconds of ~5 % random loss: >= 20 fps presented, no gap > 1 s between presented frames, at
most --max-freezes (1) of Chromium's freezes (a repair lost once costs one without the second copy a short
round trip gets, retransmission_budget.hpp),
frames keep being decoded, packets were lost, retransmissions asked for (Chromium's nackCount grew) and
received (retransmittedPacketsReceived grew: RTX works).
On loopback NACK/RTX repairs all of it (Chromium 156 sent no PLI here even through a 3 s RTX blackout).
With --audio (serve --audio test, the page's ?audio=1) the sound goes through the same loss, which Chromium
does not NACK: the sound plays on (samples keep coming: >= 90 % of the window's), serve's Opus in-band FEC
was set for the loss its viewer reported (/stats audio fec_loss_percent > 0), and Chromium conceals no
more than it lost (concealed samples <= the lost packets' share + 1 point). Measured here (2026-12-06):
~5 % of the sound's packets lost, 4.2-5.0 % of its samples concealed, the same with the page asking for an
80 ms audio jitter buffer: in Chromium's counters the FEC (set for 3-6 %) rebuilt little; why is not known.

usage: test_viewer_loss.py --netns [--source test:640x360@30] [--seconds 20] [--loss 5] [--outage-ms 4500] [--audio] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium, no nft, no private namespace)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402
from test_viewer import SNAPSHOT_JS, wait_for  # noqa: E402

TABLE = "zerohop_loss"


def nft(*args: str) -> None:
    subprocess.run(["nft", *args], check=True, capture_output=True, text=True)


def add_udp_loss(percent: int) -> None:
    """Drops `percent` % of UDP packets at random, in this (private) network namespace only."""
    nft("add", "table", "inet", TABLE)
    nft("add", "chain", "inet", TABLE, "out", "{ type filter hook output priority 0 ; policy accept ; }")
    nft("add", "rule", "inet", TABLE, "out", "meta", "l4proto", "udp", "numgen", "random", "mod", "100",
        "<", str(percent), "counter", "drop")


def udp_outage(ms: int) -> None:
    """Drops every UDP packet for `ms` milliseconds (a chain of its own, removed afterwards)."""
    nft("add", "chain", "inet", TABLE, "outage", "{ type filter hook output priority -1 ; policy accept ; }")
    nft("add", "rule", "inet", TABLE, "outage", "meta", "l4proto", "udp", "drop")
    time.sleep(ms / 1000.0)
    nft("delete", "chain", "inet", TABLE, "outage")


def dropped_packets() -> int:
    out = subprocess.run(["nft", "list", "table", "inet", TABLE], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "counter packets" in line:
            return int(line.split("counter packets")[1].split()[0])
    return 0


def playback(a: dict, b: dict) -> tuple[float, float]:
    """(fps presented, longest gap in ms) between two page snapshots."""
    dt = (b["now"] - a["now"]) / 1000.0
    fps = (b["framesPresented"] - a["framesPresented"]) / dt if dt > 0 else 0.0
    gaps = [g["ms"] for g in b["longGaps"] if g["at"] > a["now"]]
    return fps, max(gaps, default=0.0)


def grew(a: dict, b: dict, key: str) -> int:
    """How much a WebRTC inbound-rtp counter grew between two page snapshots."""
    return ((b.get("webrtc") or {}).get(key) or 0) - ((a.get("webrtc") or {}).get(key) or 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop", help="path to the zerohop binary")
    ap.add_argument("--source", default="test:640x360@30")
    ap.add_argument("--seconds", type=float, default=20.0, help="phase 1: random loss only")
    ap.add_argument("--loss", type=int, default=5, help="percent of UDP packets dropped at random")
    ap.add_argument("--outage-ms", type=int, default=4500, help="phase 2: every UDP packet dropped this long")
    ap.add_argument("--min-fps", type=float, default=20.0)
    ap.add_argument("--max-gap-ms", type=float, default=1000.0)
    ap.add_argument("--max-freezes", type=int, default=1,
                    help="Chromium's freezeCount may grow this much in phase 1 (issue 37: at most 1 a minute at 3 %% "
                         "loss over 5 minutes is the benchmark's; this is a generous bound for 20 s at 5 %%)")
    ap.add_argument("--netns", action="store_true", help="run in a private network namespace (required)")
    ap.add_argument("--audio", action="store_true", help="the test tone too, through the same loss")
    ap.add_argument("--serve-arg", action="append", default=[], metavar="ARG")
    ap.add_argument("--wrap", default="", help="command prefix for serve (e.g. the emulated camera)")
    ap.add_argument("--artifacts", default=None)
    args = ap.parse_args()

    if not Path(args.zerohop).exists():
        print(f"FAIL: {args.zerohop} does not exist (build the zerohop target)")
        return 1
    chromium, chromedriver = zb.find_browser()
    if not shutil.which("nft"):
        zb.skip("the loss test needs nft (apt-get install nftables)")
    # Dropping packets is only acceptable in a namespace of our own: never on the host's loopback.
    if not args.netns or not zb.enter_private_network():
        zb.skip("the loss test needs a private network namespace (root or user namespaces)")
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    tag = "loss_" + "".join(c if c.isalnum() else "_" for c in args.source).strip("_")

    port = zb.free_port()
    sound = ["--audio", "test"] if args.audio else []
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}", "--keyint", "0",
                                    *sound, *args.serve_arg], out / f"{tag}.serve.log", wrap=args.wrap.split())
    failures: list[str] = []
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            print(f"FAIL: zerohop serve printed no 'open http://' line within 20 s\n{serve.tail()}")
            return 1
        driver = zb.start_chromium(chromium, chromedriver, out / f"{tag}.chromedriver.log")
        driver.get(url + ("?audio=1" if args.audio else ""))
        if not wait_for(driver, "return !!window.zerohop && window.zerohop.state === 'playing'", 30):
            print("FAIL: the page did not start playing within 30 s (before any loss)")
            print(zb.browser_console(driver) + "\nserve output:\n" + serve.tail())
            return 1
        snap = lambda: driver.execute_script(SNAPSHOT_JS)  # noqa: E731
        time.sleep(2.0)
        add_udp_loss(args.loss)
        print(f"nftables: dropping {args.loss} % of UDP packets at random from now on", flush=True)
        time.sleep(2.0)  # the first losses are repaired before the window opens
        s0 = snap()
        time.sleep(args.seconds)
        s1 = snap()
        dropped = dropped_packets()
        nft("flush", "chain", "inet", TABLE, "out")  # phase 2 alone: the keyframe request must not be lost
        udp_outage(args.outage_ms)
        print(f"nftables: random loss off, every UDP packet dropped for {args.outage_ms} ms", flush=True)
        time.sleep(3.0)
        s2 = snap()
        time.sleep(3.0)
        s3 = snap()
        driver.save_screenshot(str(out / f"{tag}.png"))
        st1, st3 = s1.get("lastStats") or {}, s3.get("lastStats") or {}
        forced = (st3.get("keyframes_forced") or 0) - (st1.get("keyframes_forced") or 0)

        fps1, gap1 = playback(s0, s1)
        print(f"phase 1, {args.seconds:.0f} s of {args.loss} % random UDP loss: {fps1:.1f} fps presented, longest gap "
              f"{gap1:.0f} ms; packetsLost +{grew(s0, s1, 'packetsLost')} nackCount +{grew(s0, s1, 'nackCount')} "
              f"retransmittedPacketsReceived +{grew(s0, s1, 'retransmittedPacketsReceived')} "
              f"pliCount +{grew(s0, s1, 'pliCount')} framesDecoded +{grew(s0, s1, 'framesDecoded')} "
              f"freezeCount +{grew(s0, s1, 'freezeCount')}")
        fps3, gap3 = playback(s2, s3)
        print(f"phase 2, {args.outage_ms} ms outage: pliCount +{grew(s1, s3, 'pliCount')} firCount "
              f"+{grew(s1, s3, 'firCount')}, server keyframes_forced +{forced}; 3-6 s after it: {fps3:.1f} fps, "
              f"longest gap {gap3:.0f} ms; nftables dropped {dropped} packets at random in phase 1")
        print("server /stats: " + json.dumps(st3))
        if args.audio:
            a0, a1 = s0.get("audio") or {}, s1.get("audio") or {}
            lost = (a1.get("packetsLost") or 0) - (a0.get("packetsLost") or 0)
            received = (a1.get("packetsReceived") or 0) - (a0.get("packetsReceived") or 0)
            samples = (a1.get("totalSamplesReceived") or 0) - (a0.get("totalSamplesReceived") or 0)
            concealed = (a1.get("concealedSamples") or 0) - (a0.get("concealedSamples") or 0)
            lost_pct = 100.0 * lost / (lost + received) if lost + received > 0 else 0.0
            concealed_pct = 100.0 * concealed / samples if samples > 0 else 100.0
            fec = (st1.get("audio") or {}).get("fec_loss_percent")
            print(f"phase 1, the sound: {lost} of {lost + received} packets lost ({lost_pct:.1f} %), "
                  f"{concealed_pct:.2f} % of {samples} samples concealed; serve's FEC set for {fec} % loss")
            if lost <= 0:
                failures.append("phase 1: no sound packet was lost: the loss did not reach the sound")
            if not fec:
                failures.append(f"phase 1: serve's Opus FEC was not set for the viewer's loss (fec_loss_percent {fec})")
            if samples < 0.9 * 48000 * args.seconds:
                failures.append(f"phase 1: the sound stalled: {samples} samples in {args.seconds:.0f} s (48 kHz)")
            if concealed_pct > lost_pct + 1.0:
                failures.append(f"phase 1: {concealed_pct:.2f} % of the sound concealed with {lost_pct:.1f} % of "
                                "its packets lost: more than the loss explains")

        if dropped == 0:
            failures.append("nftables dropped no packet: the loss rule did not apply")
        if fps1 < args.min_fps:
            failures.append(f"phase 1: {fps1:.1f} fps presented under loss, want >= {args.min_fps}")
        if gap1 > args.max_gap_ms:
            failures.append(f"phase 1: the picture froze for {gap1:.0f} ms (> {args.max_gap_ms:.0f})")
        if grew(s0, s1, "framesDecoded") <= 0:
            failures.append("phase 1: no frame decoded under loss")
        if grew(s0, s1, "freezeCount") > args.max_freezes:
            failures.append(f"phase 1: Chromium counted {grew(s0, s1, 'freezeCount')} freezes under loss "
                            f"(> {args.max_freezes}): repairs came too late")
        if grew(s0, s1, "packetsLost") <= 0 or grew(s0, s1, "nackCount") <= 0:
            failures.append("phase 1: no loss seen or no retransmission asked for (packetsLost/nackCount)")
        if grew(s0, s1, "retransmittedPacketsReceived") <= 0:
            failures.append("phase 1: no retransmission (RTX) arrived (retransmittedPacketsReceived did not grow)")
        # serve's side: its repairs for this viewer, on loopback's short round trip sent twice.
        viewers = st3.get("viewer_sessions") or []
        repairs = sum(v.get("repairs") or 0 for v in viewers)
        twice = sum(v.get("repairs_twice") or 0 for v in viewers)
        print(f"server: {repairs} repairs, {twice} of them sent twice, "
              f"{sum(v.get('repairs_passed_over') or 0 for v in viewers)} passed over")
        if repairs <= 0 or twice <= 0:
            failures.append(f"serve's /stats counts {repairs} repairs, {twice} sent twice: want both > 0 on loopback")
        if grew(s1, s3, "pliCount") <= 0 and forced <= 0:
            failures.append("phase 2: no keyframe was requested after the outage (pliCount, keyframes_forced)")
        if fps3 < args.min_fps or gap3 > args.max_gap_ms:
            failures.append(f"phase 2: the picture did not recover within 3 s of the outage ({fps3:.1f} fps, "
                            f"longest gap {gap3:.0f} ms in the 3 s after)")
        if failures:
            print(zb.browser_console(driver))
    finally:
        rc, took = serve.stop(2.0)
        zb.quit_browser(driver)
    if rc != 0:
        failures.append(f"zerohop serve exited with {rc} after SIGINT, want 0")
    if failures:
        print("serve output (tail):\n" + serve.tail())
    return zb.verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
