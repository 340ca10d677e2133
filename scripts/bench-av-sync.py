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

--rtsp puts an IP camera between (issue 38): a first serve (the test camera and tone, `--share`) feeds
GStreamer's RTSP server (tests/rtsp/rtsp_camera.py --share NAME --audio share: the picture through x264,
the tone's Opus packets as they are, both stamped with their capture instants), and the serve measured
takes `--source rtsp://...?latency=0 --audio rtsp`: its capture instants come from the camera's sender
reports, its Opus is passed on as it came. Then the offset is what the RTSP hop and its clock mapping add
(with the first serve's and the camera's encode).

--browser SECONDS adds headless Chromium (the viewer page with ?audio=1, in a private network namespace,
as root): over that window, after 6 s of playing, the video's getStats estimatedPlayoutTimestamp (the sender's NTP time of
the frame shown) minus the audio's, read from one report a second (positive: audio late). That is
Chromium's own estimate of its lip sync, not the marker against the click; with it each track's mean
jitter buffer delay over the window (Chromium lip-syncs by holding the earlier track back there), and each
track's capture -> playout: the wall clock of the report (as NTP) less the track's estimatedPlayoutTimestamp
(serve's sender reports map RTP to its capture wall clock, and both ends share this machine's clock); the
video's is checked against the page's own capture -> display (its pixel timecodes), printed beside.
And the page's own timing of the marker against the click (web/avsync.js): each marker frame on screen
(requestVideoFrameCallback's expectedDisplayTime) against its click where the page's audio graph plays it
(an AudioWorklet on the received track, mapped by AudioContext.getOutputTimestamp, so it includes the
graph's output latency), the click's capture -> playout, the marker frame's capture -> display and the
exposure phase (the marker instant less the frame's capture: 0 to one frame period), zerohop only.
--page-args adds query arguments to the page (lipsync=1).

--reference (with --browser) runs the same window against the plain GStreamer sender too
(tests/browser/gst_whep_reference.py --audio: x264enc and audiotestsrc -> opusenc -> webrtcbin, its sender
reports mapped to capture as serve's are), --rounds times each, alternating, with the same serve arguments
(--audio-frame-ms among them): both senders in one run, each round its own line and the medians at the end.

usage: scripts/bench-av-sync.py [--zerohop build/apps/zerohop/zerohop]
                                [--receiver build/tests/stream/zerohop-av-sync-receive]
                                [--source test:1280x720@30] [--markers 30] [--sessions 3]
                                [--rtsp] [--browser SECONDS [--reference] [--rounds N]] [--out FILE]
Loopback only; needs what the build needs (GStreamer webrtcbin, opusdec, libavcodec); --browser needs
chromium, chromium-driver and python3-selenium (scripts/install-deps.sh).
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
REFERENCE_PY = ROOT / "tests" / "browser" / "gst_whep_reference.py"
sys.path.insert(0, str(ROOT / "tests" / "browser"))
import zerohop_browser as zb  # noqa: E402
WARM_UP_S = 6.0  # --browser: seconds of playing before the window
NTP_MINUS_UNIX_MS = 2_208_988_800_000  # getStats' estimatedPlayoutTimestamp is NTP time (since 1900), in ms


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))]


def session(zerohop: str, receiver: str, source: str, markers: int, extra: list[str], rtsp: bool) -> dict:
    port = free_port()
    camera = zb.ShareFedRtspCamera(zerohop, source, sound=True) if rtsp else None
    served = ["--source", camera.url, "--audio", "rtsp"] if camera else ["--source", source, "--audio", "test"]
    serve = subprocess.Popen([zerohop, "serve", *served, "--gpu", "off", "--listen", f"127.0.0.1:{port}", *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # Until /stats answers; through a camera, until its picture and sound flow too (a viewer that joins
        # before them waits out the camera's start, and lost its first markers).
        deadline = time.monotonic() + 30
        while True:
            try:
                stats = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=2).read())
                if not rtsp or (stats.get("frames", 0) > 30 and (stats.get("audio") or {}).get("packets", 0) > 0):
                    break
            except (OSError, ValueError):
                pass
            if serve.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not answer /stats with frames and sound in 30 s: "
                                 f"{serve.stderr.read() if serve.poll() is not None else ''}")
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
        if camera:
            camera.stop()


def browser_window(zerohop: str, source: str, seconds: float, extra: list[str], jitter: dict,
                   rtsp: bool, page_args: str = "") -> list[float]:
    """Video minus audio estimatedPlayoutTimestamp (ms) of each getStats report over `seconds`; each
    track's mean jitter buffer delay over the window into `jitter`, and the page's capture -> display p50
    (its pixel timecodes) at the end of the window as jitter["capture_to_display_p50_ms"]."""
    chromium, chromedriver = zb.find_browser()
    zb.enter_private_network()
    out = zb.artifacts_dir(Path.cwd())
    port = zb.free_port()
    camera = zb.ShareFedRtspCamera(zerohop, source, sound=True) if rtsp else None
    served = ["--source", camera.url, "--audio", "rtsp"] if camera else ["--source", source, "--audio", "test"]
    reference = zerohop.endswith(".py")
    served += [] if reference else ["--gpu", "off"]
    serve = zb.Serve(zerohop, [*served, "--listen", f"127.0.0.1:{port}", *extra],
                     out / ("bench_av_sync.reference.log" if reference else "bench_av_sync.serve.log"))
    driver = None
    diffs: list[float] = []
    playout: dict[str, list[float]] = {"video": [], "audio": []}
    try:
        url = serve.wait_url(20)
        if not url:
            raise SystemExit("serve printed no URL in 20 s:\n" + serve.tail())
        driver = zb.start_chromium(chromium, chromedriver, None, ("--autoplay-policy=no-user-gesture-required",))
        driver.get(url + "?audio=1" + (f"&{page_args}" if page_args else ""))
        read = ("const z = window.zerohop; return z && z.audio && z.webrtc ? "
                "[z.webrtc.timestamp, z.webrtc.estimatedPlayoutTimestamp, z.audio.estimatedPlayoutTimestamp, "
                "z.webrtc.reportWallMs] : null;")
        buffers = ("const z = window.zerohop; return [z.audio.jitterBufferDelay, z.audio.jitterBufferEmittedCount, "
                   "z.webrtc.jitterBufferDelay, z.webrtc.jitterBufferEmittedCount];")
        zb.wait_until("both tracks' estimatedPlayoutTimestamp", lambda: (lambda r: r and r[1] and r[2])(
            driver.execute_script(read)), 30)
        time.sleep(WARM_UP_S)  # Chromium moves its lip sync over a few seconds, from the first sender report
        seen = set()
        b0 = driver.execute_script(buffers)
        pairs0 = driver.execute_script("const a = window.zerohop.avSync; return a ? a.pairs : 0;") or 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            r = driver.execute_script(read)
            if r and r[1] and r[2] and r[0] not in seen:
                seen.add(r[0])
                diffs.append(r[1] - r[2])
                if r[3]:  # capture -> playout of each track: the report's wall clock (as NTP) less its time
                    now_ntp = r[3] + NTP_MINUS_UNIX_MS
                    playout["video"].append(now_ntp - r[1])
                    playout["audio"].append(now_ntp - r[2])
            time.sleep(0.25)
        b1 = driver.execute_script(buffers)
        # The page's own timing (web/avsync.js): each marker frame on screen against the click its audio
        # graph plays, over this window (zerohop's test camera and tone only: the reference has no markers).
        a = driver.execute_script("return window.zerohop.avSync;") or {}
        window_pairs = (a.get("last") or [])[-max(0, (a.get("pairs") or 0) - pairs0):] if a.get("pairs") else []
        jitter["page_pairs"] = len(window_pairs)
        jitter["page_output_latency_ms"] = a.get("outputLatencyMs")
        for key, name in (("clickMinusMarker", "page_click_minus_marker_p50_ms"),
                          ("audio", "page_audio_capture_to_playout_p50_ms"),
                          ("video", "page_marker_capture_to_display_p50_ms"), ("phase", "page_exposure_phase_ms")):
            values = [p[key] for p in window_pairs if p.get(key) is not None]
            jitter[name] = percentile(values, 50) if values else None
        per = lambda d, n: 1000 * d / n if n > 0 else None  # noqa: E731
        jitter["audio_ms"] = per(b1[0] - b0[0], b1[1] - b0[1])
        jitter["video_ms"] = per(b1[2] - b0[2], b1[3] - b0[3])
        jitter["capture_to_display_p50_ms"] = driver.execute_script("return window.zerohop.latencyP50;")
        for track, values in playout.items():
            jitter[f"{track}_capture_to_playout_p50_ms"] = percentile(values, 50) if values else None
    finally:
        serve.stop(2.0)
        zb.quit_browser(driver)
        if camera:
            camera.stop()
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerohop", default=str(ROOT / "build/apps/zerohop/zerohop"))
    ap.add_argument("--receiver", default=str(ROOT / "build/tests/stream/zerohop-av-sync-receive"))
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--markers", type=int, default=30, help="markers in all (one a second)")
    ap.add_argument("--sessions", type=int, default=3, help="fresh serve runs the markers are spread over (0: none)")
    ap.add_argument("--serve-args", default="", help="more arguments for serve, e.g. '--playout-delay 100,200'")
    ap.add_argument("--rtsp", action="store_true",
                    help="through an IP camera (GStreamer's RTSP server fed by a first serve's share)")
    ap.add_argument("--browser", type=float, default=0, metavar="SECONDS",
                    help="also read Chromium's estimatedPlayoutTimestamp of both tracks for SECONDS")
    ap.add_argument("--page-args", default="",
                    help="--browser: more query arguments for the viewer page, e.g. 'lipsync=1' (the picture may "
                         "wait for the sound)")
    ap.add_argument("--reference", action="store_true",
                    help="with --browser: the same window against the plain GStreamer sender too, alternating")
    ap.add_argument("--rounds", type=int, default=1, help="with --browser: windows per sender")
    ap.add_argument("--out", help="also write the summary as JSON here")
    a = ap.parse_args()
    per = max(1, a.markers // max(1, a.sessions))
    extra = shlex.split(a.serve_args)
    offsets: list[float] = []
    less_phase: list[float] = []
    sessions = []
    for i in range(a.sessions):
        r = session(a.zerohop, a.receiver, a.source, per, extra, a.rtsp)
        sessions.append(r)
        offsets += r["offsets_ms"]
        less_phase.append(r["offset_less_phase_ms"]["p50"])
        print(f"session {i + 1}: {r['matched']} markers, click - marker p50 {r['offset_ms']['p50']} ms, "
              f"exposure phase {r['exposure_phase_ms']['p50']} ms, less phase {r['offset_less_phase_ms']['p50']} ms",
              flush=True)
    absolute = [abs(v) for v in offsets]
    if not offsets:
        offsets = absolute = less_phase = [float("nan")]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    summary = {
        "command": " ".join(shlex.quote(x) for x in sys.argv),
        "source": a.source + (" through an RTSP camera" if a.rtsp else ""),
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
    if a.reference and (a.rtsp or a.browser <= 0):
        raise SystemExit("--reference is for the browser window (--browser SECONDS) of the test camera (no --rtsp)")
    senders = [("zerohop", a.zerohop)] + ([("reference", str(REFERENCE_PY))] if a.reference else [])
    rounds: dict[str, list[dict]] = {name: [] for name, _ in senders}
    for r in range(max(1, a.rounds) if a.browser > 0 else 0):
        for name, binary in senders:
            jitter: dict = {}
            diffs = browser_window(binary, a.source, a.browser, extra, jitter, a.rtsp, a.page_args)
            sync = ({"reports": len(diffs), "p50": percentile(diffs, 50), "p90": percentile(diffs, 90),
                     "min": min(diffs), "max": max(diffs)} if diffs else {"reports": 0})
            rounds[name].append({"video_minus_audio_playout_ms": sync, "jitter": jitter})
            print(f"{name} round {r + 1}: Chromium, video - audio estimatedPlayoutTimestamp: " + json.dumps(sync) +
                  "; jitter buffers " + json.dumps(jitter), flush=True)
    if a.browser > 0:
        summary["chromium_rounds"] = rounds
        last = rounds["zerohop"][-1]
        summary["chromium_video_minus_audio_playout_ms"] = last["video_minus_audio_playout_ms"]
        summary["chromium_jitter_buffer_ms"] = last["jitter"]
        for name in rounds:
            med = lambda key: statistics.median(  # noqa: E731
                [x["jitter"][key] for x in rounds[name] if x["jitter"].get(key) is not None] or [float("nan")])
            print(f"{name}, median of {len(rounds[name])} rounds: audio capture -> playout "
                  f"{med('audio_capture_to_playout_p50_ms'):.0f} ms, audio jitter buffer {med('audio_ms'):.1f} ms, "
                  f"video - audio {statistics.median([x['video_minus_audio_playout_ms'].get('p50', float('nan')) for x in rounds[name]]):.0f} ms, "
                  f"page capture -> display {med('capture_to_display_p50_ms'):.1f} ms; the page's click - marker "
                  f"{med('page_click_minus_marker_p50_ms'):.0f} ms (exposure phase {med('page_exposure_phase_ms'):.0f} ms), "
                  f"click capture -> playout {med('page_audio_capture_to_playout_p50_ms'):.0f} ms")
    if a.out:
        Path(a.out).write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
