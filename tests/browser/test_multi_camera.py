#!/usr/bin/python3
"""Three cameras in one `zerohop serve`: emulated YUYV, MJPEG and H.264 (passthrough) cameras,
each its own pipeline behind /whep/NAME. Headless Chromium plays each camera in turn (?camera=NAME) at
>= 25 fps, reading the timecode from its frames; then the MJPEG camera is unplugged for a few seconds
(zerohop-camemu unplug-at) while the page plays the YUYV camera: that page and the server's frame rate
of the other two cameras stay >= 25 fps through the unplug, and the MJPEG camera comes back by itself
and plays again. The MJPEG camera also sends a corrupt frame every second, dropped in its own
pipeline only. `zerohop tap` reads each camera's share (and the pictures' timecodes), and /metrics has
every series per camera.

One browser plays the cameras one after another (three players at once are too much for a 2-core box);
the server's per-camera frame counters (/stats) show the cameras not played kept running meanwhile.

usage: test_multi_camera.py [--netns] --camemu ZEROHOP_CAMEMU [--artifacts DIR] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

FPS = 30
UNPLUG_AT_FRAME = 40 * FPS  # the MJPEG camera goes away 40 s after it starts streaming...
UNPLUGGED_MS = 6000         # ...for 6 s
MIN_FPS = 25.0
# name, camemu settings, serve source
CAMERAS = [
    ("yuyv", "format=yuyv,size=640x360", "v4l2:/dev/video0?format=yuyv&size=640x360&fps=30"),
    # ...and sends a corrupt JPEG (EOI zeroed) every 30th frame, which it alone drops.
    ("mjpeg", f"format=mjpeg,size=640x360,corrupt-every=30,unplug-at={UNPLUG_AT_FRAME}:{UNPLUGGED_MS}",
     "v4l2:/dev/video1?format=mjpeg&size=640x360&fps=30"),
    ("h264", "format=h264,size=640x360", "v4l2:/dev/video2?format=h264&size=640x360&fps=30"),
]

SNAPSHOT_JS = """
const z = window.zerohop;
if (!z) return null;
return {state: z.state, camera: z.camera, presented: z.framesPresented, read: z.timecodesRead,
        decoded: z.webrtc ? z.webrtc.framesDecoded : null, connects: z.connects, now: performance.now()};
"""


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=3) as r:
        return r.read().decode()


def camera_frames(base: str) -> dict[str, int]:
    """Frames each camera's pipeline has sent (from /stats); a camera not running counts -1."""
    doc = json.loads(get(base + "stats"))
    return {c["name"]: (c.get("frames", -1) if c.get("state") == "running" else -1) for c in doc["cameras"]}


def play(driver, base: str, name: str, seconds: float) -> tuple[float, float, int]:
    """Opens the page for camera NAME, waits for it to play, then measures `seconds` of playback.
    Returns (presented fps, share of presented frames whose timecode was read, frames decoded)."""
    driver.get(f"{base}?camera={name}")
    zb.wait_until(f"camera {name} plays",
                  lambda: (driver.execute_script(SNAPSHOT_JS) or {}).get("presented", 0) > 15, 30)
    s0 = driver.execute_script(SNAPSHOT_JS)
    time.sleep(seconds)  # the measuring window itself, not a wait for a condition
    s1 = driver.execute_script(SNAPSHOT_JS)
    dt = (s1["now"] - s0["now"]) / 1000.0
    presented = s1["presented"] - s0["presented"]
    read = s1["read"] - s0["read"]
    decoded = (s1["decoded"] or 0) - (s0["decoded"] or 0)
    if s1["camera"] != name:
        raise AssertionError(f"the page plays camera {s1['camera']!r}, asked for {name!r}")
    links = driver.execute_script(
        "return [...document.querySelectorAll('#cameras a')].map((a) => [a.dataset.camera, a.className])")
    if sorted(l[0] for l in links) != sorted(c[0] for c in CAMERAS) or [l[0] for l in links if l[1] == "current"] != [name]:
        raise AssertionError(f"the page's camera links are {links}, want one per camera with {name!r} current")
    return presented / dt, read / max(1, presented), decoded


def check_metrics(base: str, failures: list[str]) -> None:
    text = get(base + "metrics")
    try:
        from prometheus_client.parser import text_string_to_metric_families
        families = {f.name: f for f in text_string_to_metric_families(text)}
        frames = {s.labels.get("camera"): s.value for s in families["zerohop_frames"].samples}
        unlabelled = [s for f in families.values() for s in f.samples if "camera" not in s.labels]
    except ImportError:  # the parser is a nicety here; the series are checked by pattern
        frames = {m.group(1): float(m.group(2)) for m in re.finditer(r'^zerohop_frames_total\{camera="([^"]+)"\} (\S+)$', text, re.M)}
        unlabelled = [l for l in text.splitlines() if l and not l.startswith("#") and 'camera="' not in l]
    for name, _, _ in CAMERAS:
        if frames.get(name, 0) <= 0:
            failures.append(f"/metrics has no zerohop_frames_total for camera {name} (got {frames})")
    if unlabelled:
        failures.append(f"/metrics series without a camera label: {unlabelled[:3]}")


def check_taps(zerohop: str, failures: list[str]) -> None:
    # The raw cameras share frames as NAME; the H.264 camera (passthrough: never decoded) only NAME.h264.
    # Frame shares are read with --timecode: every picture's pixel timecode readable and in order.
    for share in ("yuyv", "mjpeg", "h264.h264", "yuyv.h264"):
        pictures = [] if share.endswith(".h264") else ["--timecode"]
        r = subprocess.run([zerohop, "tap", share, "--count", "5", "--timeout", "5", *pictures],
                           capture_output=True, text=True, timeout=30)
        lines = [l for l in r.stdout.splitlines() if l.startswith("seq ")]
        print(f"tap {share}: exit {r.returncode}, {len(lines)} frames")
        if r.returncode != 0 or len(lines) < 5:
            failures.append(f"zerohop tap {share}: exit {r.returncode}, {len(lines)} frames: {r.stderr.strip()[-300:]}")


def main() -> int:
    ap = zb.serve_test_args(__doc__)  # its --source is not used: the cameras are below
    ap.add_argument("--camemu", required=True)
    args = zb.parse_serve_test_args(ap)
    chromium, chromedriver = zb.find_browser()
    if args.netns:
        zb.enter_private_network()
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    wrap = [args.camemu, "--fps", str(FPS)]
    for _, settings, _ in CAMERAS:
        wrap += ["--camera", settings]
    wrap.append("--")
    serve_args = ["--listen", f"127.0.0.1:{zb.free_port()}", "--share"]
    for name, _, source in CAMERAS:
        serve_args += ["--camera", f"{name}={source}"]
    serve = zb.Serve(args.zerohop, serve_args, out / "multi_camera.serve.log", wrap=wrap)
    started = time.monotonic()
    driver = None
    failures: list[str] = []
    try:
        base = serve.wait_url(20)
        if not base:
            return zb.report_failure("serve printed no 'open http://' line", serve)
        zb.wait_until("every camera running",
                      lambda: all(n >= 0 for n in camera_frames(base).values()), 20)
        check_taps(args.zerohop, failures)
        check_metrics(base, failures)
        driver = zb.start_chromium(chromium, chromedriver)

        # 1. Each camera plays (the MJPEG one first: it is unplugged later).
        for name in ("mjpeg", "h264", "yuyv"):
            fps, read, decoded = play(driver, base, name, 4.0)
            print(f"camera {name}: {fps:.1f} fps presented, timecode read from {100 * read:.0f} %, {decoded} decoded")
            if fps < MIN_FPS:
                failures.append(f"camera {name}: {fps:.1f} fps presented, want >= {MIN_FPS}")
            if read < 0.8:
                failures.append(f"camera {name}: timecode read from {100 * read:.0f} % of presented frames, want >= 80 %")
            if decoded <= 0:
                failures.append(f"camera {name}: Chromium decoded no frame")
        if time.monotonic() - started > UNPLUG_AT_FRAME / FPS - 3:
            failures.append("the box was too slow: the cameras were still being played one by one when the unplug came")

        # 2. The page stays on the YUYV camera while the MJPEG camera goes away and comes back:
        # samples of the server's frame counters and the page's presented frames, 4 times a second.
        samples = []  # (t, {camera: frames}, presented)
        deadline = started + UNPLUG_AT_FRAME / FPS + UNPLUGGED_MS / 1000 + 25
        while time.monotonic() < deadline:
            samples.append((time.monotonic(), camera_frames(base), driver.execute_script(SNAPSHOT_JS)["presented"]))
            # Done once the MJPEG camera has stalled and then sent 2 s of frames again.
            stall = longest_stall(samples, "mjpeg")
            if stall and stall[1] - stall[0] > 2 and samples[-1][0] - stall[1] > 2:
                break
            time.sleep(0.25)
        stall = longest_stall(samples, "mjpeg")
        if not stall or stall[1] - stall[0] < 0.6 * UNPLUGGED_MS / 1000:
            failures.append(f"no stall of the MJPEG camera of about {UNPLUGGED_MS} ms was seen (longest "
                            f"{(stall[1] - stall[0]) if stall else 0:.1f} s): did the unplug happen?")
        else:
            # Inside the stall (0.5 s trimmed each side) the other cameras and the page run at full rate.
            inside = [s for s in samples if stall[0] + 0.5 <= s[0] <= stall[1] - 0.5]
            t0, f0, p0 = inside[0]
            t1, f1, p1 = inside[-1]
            dt = t1 - t0
            for name in ("yuyv", "h264"):
                fps = (f1[name] - f0[name]) / dt
                print(f"while mjpeg was unplugged ({dt:.1f} s): camera {name} sent {fps:.1f} fps")
                if fps < MIN_FPS:
                    failures.append(f"camera {name} sent {fps:.1f} fps while mjpeg was unplugged, want >= {MIN_FPS}")
            page_fps = (p1 - p0) / dt
            print(f"while mjpeg was unplugged: the page played yuyv at {page_fps:.1f} fps")
            if page_fps < MIN_FPS:
                failures.append(f"the yuyv page presented {page_fps:.1f} fps while mjpeg was unplugged, want >= {MIN_FPS}")
        log = serve.output()
        if "camera lost" not in log and "disconnected" not in log:
            failures.append("serve did not log the MJPEG camera going away")

        # 3. The MJPEG camera came back and plays again.
        fps, read, decoded = play(driver, base, "mjpeg", 4.0)
        print(f"camera mjpeg after the replug: {fps:.1f} fps presented, {decoded} decoded")
        if fps < MIN_FPS:
            failures.append(f"camera mjpeg after the replug: {fps:.1f} fps presented, want >= {MIN_FPS}")
        cams = {c["name"]: c for c in json.loads(get(base + "stats"))["cameras"]}
        if any(c.get("state") != "running" for c in cams.values()):
            failures.append("a camera is not running at the end: " + json.dumps(cams)[:400])
        errors = {name: c.get("source_errors") for name, c in cams.items()}
        print(f"source errors (corrupt frames dropped) per camera: {errors}")
        if not errors.get("mjpeg") or errors.get("yuyv") or errors.get("h264"):
            failures.append(f"corrupt frames should be counted for mjpeg alone: {errors}")
    except AssertionError as e:
        failures.append(str(e))
    finally:
        if failures:
            zb.report_failure("; ".join(failures), serve, [driver] if driver else [], out, "multi_camera")
        zb.quit_browser(driver)
        rc, _ = serve.stop(5.0)
        if rc != 0 and not failures:
            failures.append(f"serve exited {rc} on SIGINT\n" + serve.tail())
    return zb.verdict(failures)


def longest_stall(samples, name: str):
    """(start, end) of the longest stretch in which camera NAME sent no frame, or None."""
    best = None
    last_t, last_n = None, None
    for t, frames, _ in samples:
        n = frames.get(name, -1)
        if last_n is None or n != last_n:
            if last_t is not None and (best is None or t - last_t > best[1] - best[0]):
                best = (last_t, t)
            last_t, last_n = t, n
    if last_t is not None and samples and (best is None or samples[-1][0] - last_t > best[1] - best[0]):
        best = (last_t, samples[-1][0])
    return best


if __name__ == "__main__":
    sys.exit(main())
