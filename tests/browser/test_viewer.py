#!/usr/bin/python3
"""The spine's browser test: `zerohop serve` streams the test camera, headless Chromium plays it through
the viewer page (web/index.html) and reads the timecode from every presented frame.

Asserts, over a 10 s window of playback: >= 25 fps presented (--min-fps; --min-decoded-fps also bounds the
frames Chromium decoded, WebRTC framesDecoded, e.g. >= 55 for a 60 fps source), no freeze (no gap > 500 ms between presented
frames and no new WebRTC freezeCount), timecodes read from >= 90 % of presented frames, and a
capture->display latency p50 of at most 150 ms (a loaded 2-core machine measures 30-60 ms, so a 3x
regression fails; p99 is printed, not bounded). Saves a screenshot and serve's
log. Finally stops serve with SIGINT (a viewer still connected) and asserts it exits 0 within 2 s.

With --https, serve gets a self-signed certificate made with the openssl CLI (--tls-cert/--tls-key), the
printed URL must be https://, and Chromium (which ignores certificate errors for this run) plays the page
from the https origin: the same assertions then hold over TLS.

usage: test_viewer.py [--netns] [--https] [--source test:1280x720@30] [--seconds 10] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

SNAPSHOT_JS = """
const z = window.zerohop;
if (!z) return null;
return {state: z.state, error: z.error, connects: z.connects, framesPresented: z.framesPresented,
        frameCallbacks: z.frameCallbacks, timecodesRead: z.timecodesRead, timecodeErrors: z.timecodeErrors,
        staleReads: z.staleReads, latencyCount: z.latencyCount,
        freezes: z.freezes, maxGapMs: z.maxGapMs, longGaps: z.longGaps, fps: z.fps,
        latencyP50: z.latencyP50, latencyP99: z.latencyP99, latencyMs: z.latencyMs.slice(),
        sequenceGaps: z.sequenceGaps, stripReader: z.stripReader, stripReadMisses: z.stripReadMisses, iceState: z.iceState, webrtc: z.webrtc, playback: z.playback, lastStats: z.lastStats,
        audio: z.audio,
        now: performance.now()};
"""


def wait_for(driver, predicate_js: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.execute_script(predicate_js):
            return True
        time.sleep(0.2)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop", help="path to the zerohop binary")
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--seconds", type=float, default=10.0, help="measured playback window")
    ap.add_argument("--min-fps", type=float, default=25.0, help="frames presented per second (the page's fps)")
    ap.add_argument("--min-decoded-fps", type=float, default=0.0,
                    help="frames decoded per second (WebRTC framesDecoded over the window); 0: not checked")
    ap.add_argument("--netns", action="store_true", help="run in a private network namespace (loopback only)")
    ap.add_argument("--netns-lan", action="store_true",
                    help="like --netns, plus a veth pair so ICE has a non-loopback address")
    ap.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for zerohop serve (repeatable), e.g. --serve-arg=--web-root=web")
    ap.add_argument("--wrap", default="",
                    help="command prefix for serve, e.g. 'zerohop-camemu --format mjpeg --size 1280x720 --'")
    ap.add_argument("--command", default="",
                    help="run this program instead of `zerohop serve`: a command line whose {listen} becomes "
                         "HOST:PORT (e.g. a program streaming its own frames through zerohop::FrameStream)")
    ap.add_argument("--expect-encoder", default="",
                    help="fail unless the server's /stats encoder name contains this (e.g. passthrough)")
    ap.add_argument("--expect-log", action="append", default=[], metavar="TEXT",
                    help="fail unless serve's log contains this (repeatable), e.g. '2 thread(s)'")
    ap.add_argument("--max-latency-p50", type=float, default=150.0, metavar="MS",
                    help="fail when the capture->display latency p50 is above this")
    ap.add_argument("--min-timecodes", type=float, default=0.9,
                    help="share of presented frames whose timecode must be read")
    ap.add_argument("--https", action="store_true",
                    help="serve over HTTPS with a self-signed certificate (serve --tls-cert/--tls-key)")
    zb.add_machine_speed_option(ap)
    ap.add_argument("--artifacts", default=None, help="screenshot/log folder (default $ZEROHOP_TEST_ARTIFACTS or cwd)")
    args = ap.parse_args()

    if not Path(args.zerohop).exists():
        print(f"FAIL: {args.zerohop} does not exist (build the zerohop target)")
        return 1
    chromium, chromedriver = zb.find_browser()
    zb.require_x264_fps(args.min_machine_x264_fps, f"{args.min_fps:.0f} fps presented")
    if args.netns or args.netns_lan:
        zb.enter_private_network(lan=args.netns_lan)
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    tag = "viewer_" + "".join(c if c.isalnum() else "_" for c in args.source).strip("_")

    port = zb.free_port()
    chromium_flags: tuple[str, ...] = ()
    if args.https:
        tag += "_https"
        cert, key = out / f"{tag}.crt", out / f"{tag}.key"
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                               "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext",
                               "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                              capture_output=True, text=True)
        if made.returncode != 0:
            print(f"FAIL: openssl req failed (scripts/install-deps.sh installs openssl): {made.stderr}")
            return 1
        args.serve_arg += ["--tls-cert", str(cert), "--tls-key", str(key)]
        chromium_flags = ("--ignore-certificate-errors",)
    if args.command:
        tag = "viewer_" + "".join(c if c.isalnum() else "_" for c in Path(args.command.split()[0]).name)
        serve = zb.Serve(args.command.replace("{listen}", f"127.0.0.1:{port}").split(), [],
                         out / f"{tag}.serve.log", wrap=args.wrap.split())
    else:
        serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}", *args.serve_arg],
                         out / f"{tag}.serve.log", wrap=args.wrap.split())
    failures: list[str] = []
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            rc = serve.proc.poll()
            print(f"FAIL: zerohop serve printed no 'open http://' line within 20 s (exit code {rc})")
            print(serve.tail())
            return 1
        print(f"serve: {' '.join(serve.cmd)} -> {url}", flush=True)
        if args.https and not url.startswith("https://"):
            print(f"FAIL: serve --tls-cert printed {url}, want an https:// URL")
            return 1

        driver = zb.start_chromium(chromium, chromedriver, out / f"{tag}.chromedriver.log", chromium_flags)
        driver.get(url)
        if not wait_for(driver, "return !!window.zerohop && window.zerohop.state === 'playing'", 30):
            snap = driver.execute_script(SNAPSHOT_JS)
            print(f"FAIL: the page did not start playing within 30 s: state={snap and snap['state']} "
                  f"error={snap and snap['error']} connection={snap and snap['iceState']}")
            print(f"webrtc: {json.dumps(snap and snap['webrtc'])}\nserver /stats: {json.dumps(snap and snap['lastStats'])}")
            sdp = driver.execute_script("return window.zerohop && window.zerohop.sdp")
            if sdp:
                print("offer:\n" + sdp["offer"] + "\nanswer:\n" + sdp["answer"])
            driver.save_screenshot(str(out / f"{tag}.png"))
            print(zb.browser_console(driver))
            print("serve output:\n" + serve.tail())
            return 1
        time.sleep(1.0)  # let the jitter buffer and the first keyframe settle before measuring
        s0 = driver.execute_script(SNAPSHOT_JS)
        time.sleep(args.seconds)
        s1 = driver.execute_script(SNAPSHOT_JS)
        driver.save_screenshot(str(out / f"{tag}.png"))

        dt = (s1["now"] - s0["now"]) / 1000.0
        presented = s1["framesPresented"] - s0["framesPresented"]
        callbacks = s1["frameCallbacks"] - s0["frameCallbacks"]
        read = s1["timecodesRead"] - s0["timecodesRead"]
        fps = presented / dt if dt > 0 else 0.0
        gaps = [g for g in s1["longGaps"] if g["at"] > s0["now"]]
        max_gap = max([g["ms"] for g in gaps], default=0.0)
        freezes_page = s1["freezes"] - s0["freezes"]
        w0, w1 = s0.get("webrtc") or {}, s1.get("webrtc") or {}
        freeze_count = (w1.get("freezeCount") or 0) - (w0.get("freezeCount") or 0)
        stale = s1["staleReads"] - s0["staleReads"]
        samples = s1["latencyCount"] - s0["latencyCount"]
        latency = s1["latencyMs"][-samples:] if samples > 0 else []
        p50, p99 = zb.percentile(latency, 0.5), zb.percentile(latency, 0.99)

        print(f"window {dt:.1f} s: {presented} frames presented ({fps:.1f} fps), {callbacks} frame callbacks, "
              f"{read} timecodes read ({100.0 * read / max(1, presented):.1f} % of presented), "
              f"{s1['timecodeErrors'] - s0['timecodeErrors']} unreadable, {stale} stale (late callback), "
              f"{s1['sequenceGaps'] - s0['sequenceGaps']} sequence numbers skipped, read through "
              f"{s1.get('stripReader')} (WebCodecs missed {s1.get('stripReadMisses')} frames since the start)")
        print(f"freezes: page {freezes_page} (max gap {max_gap:.0f} ms), webrtc freezeCount +{freeze_count}; "
              f"webrtc: framesDecoded={w1.get('framesDecoded')} framesDropped={w1.get('framesDropped')} "
              f"nack={w1.get('nackCount')} pli={w1.get('pliCount')} codec={w1.get('codec')} "
              f"decoder={w1.get('decoderImplementation')} jitterBuffer={w1.get('jitterBufferMs')} ms")
        if p50 is not None:
            print(f"capture->display latency over {len(latency)} frames: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
                  f"min {min(latency):.1f} ms, max {max(latency):.1f} ms")
        print("server /stats: " + json.dumps(s1.get("lastStats")))

        if fps < args.min_fps:
            failures.append(f"{fps:.1f} fps presented, want >= {args.min_fps}")
        if freezes_page or max_gap > 500:
            failures.append(f"{freezes_page} freeze(s): longest gap between presented frames {max_gap:.0f} ms")
        if freeze_count > 0:
            failures.append(f"WebRTC reported {freeze_count} freeze(s) (freezeCount)")
        if s1.get("stripReader") != "webcodecs":  # Chromium decodes in software here: WebCodecs must work
            failures.append(f"the page read the timecode through {s1.get('stripReader')!r}, not WebCodecs "
                            "(its console says why)")
        if presented and read < args.min_timecodes * presented:
            failures.append(f"timecodes read from {read} of {presented} presented frames, "
                            f"want >= {100 * args.min_timecodes:.0f} %")
        encoder = (s1.get("lastStats") or {}).get("encoder", "")
        if args.expect_encoder and args.expect_encoder not in encoder:
            failures.append(f"server /stats encoder is {encoder!r}, want one containing {args.expect_encoder!r}")
        for text in args.expect_log:
            if text not in serve.output():
                failures.append(f"serve's log has no {text!r}")
        decoded = (w1.get("framesDecoded") or 0) - (w0.get("framesDecoded") or 0)
        # getStats is polled once a second: the rate is over the reports' own timestamps, not the window's.
        stats_dt = ((w1.get("timestamp") or 0) - (w0.get("timestamp") or 0)) / 1000.0
        decoded_fps = decoded / stats_dt if stats_dt > 0 else 0.0
        server_fps = (s1.get("lastStats") or {}).get("fps")
        print(f"decoded {decoded} frames in {stats_dt:.1f} s of getStats ({decoded_fps:.1f} fps); "
              f"server encodes {server_fps} fps")
        if decoded <= 0:
            failures.append("Chromium decoded no frame in the window (webrtc framesDecoded did not grow)")
        elif decoded_fps < args.min_decoded_fps:
            failures.append(f"{decoded_fps:.1f} fps decoded by Chromium, want >= {args.min_decoded_fps} "
                            f"(server encodes {server_fps} fps; framesDropped {w1.get('framesDropped')})")
        if not latency:
            failures.append("no capture->display latency sample was measured")
        elif any(abs(v) > 10_000 for v in latency):
            failures.append(f"implausible latency samples (|x| > 10 s): clocks or timecode decoding are wrong")
        elif p50 > args.max_latency_p50:
            failures.append(f"capture->display latency p50 {p50:.1f} ms, want <= {args.max_latency_p50:.0f} ms")
        if failures:
            print(zb.browser_console(driver))
            zb.note_if_loaded()
    finally:
        # Stop serve while the viewer is still connected: that is the harder case for a clean shutdown.
        rc, took = serve.stop(2.0)
        zb.quit_browser(driver)
    print(f"serve: SIGINT -> exit code {rc} after {took:.2f} s")
    if rc is None:
        failures.append("zerohop serve did not exit within 2 s of SIGINT (killed)")
    elif rc != 0:
        failures.append(f"zerohop serve exited with code {rc} after SIGINT, want 0")
    if failures and serve.tail():
        print("serve output (tail):\n" + serve.tail())
    print(f"artifacts: {out / (tag + '.png')}, {out / (tag + '.serve.log')}")
    return zb.verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
