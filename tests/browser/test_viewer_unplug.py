#!/usr/bin/python3
"""The camera is unplugged while a viewer watches: `zerohop serve` from the emulated camera
(zerohop-camemu --unplug-at=N:MS) keeps running, the viewer's WebRTC session stays up (no
reconnect), the picture stops while the camera is gone and resumes by itself when it comes back.

usage: test_viewer_unplug.py [--netns] --camemu ZEROHOP_CAMEMU ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

UNPLUG_AT_FRAME = 240   # 8 s into the stream at 30 fps
UNPLUGGED_MS = 2500


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--camemu", required=True)
    ap.add_argument("--netns", action="store_true")
    ap.add_argument("--artifacts", default=None)
    args = ap.parse_args()
    chromium, chromedriver = zb.find_browser()
    if args.netns:
        zb.enter_private_network()
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    port = zb.free_port()
    wrap = [args.camemu, "--format", "mjpeg", "--size", "640x480", "--fps", "30",
            f"--unplug-at={UNPLUG_AT_FRAME}:{UNPLUGGED_MS}", "--"]
    serve = zb.Serve(args.zerohop, ["--source", "v4l2:/dev/video0?format=mjpeg&size=640x480&fps=30",
                                    "--listen", f"127.0.0.1:{port}"], out / "unplug.serve.log", wrap=wrap)
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            print("FAIL: serve printed no 'open http://' line\n" + serve.tail())
            return 1
        driver = zb.start_chromium(chromium, chromedriver)
        driver.get(url)

        def zh(expr: str):
            return driver.execute_script(f"return window.zerohop ? window.zerohop.{expr} : null")

        # Sample presented frames every 100 ms for 16 s: before, during and after the unplug.
        samples = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 16:
            samples.append((time.monotonic() - t0, zh("framesPresented") or 0))
            time.sleep(0.1)
        log = serve.output()
        lost = "camera lost" in log or "disconnected" in log
        back = "capture resumed" in log or "camera is back" in log
        # The longest stretch without a new frame, and frames after it.
        longest, gap_end = 0.0, 0.0
        last_t, last_n = samples[0]
        for t, n in samples[1:]:
            if n != last_n:
                if t - last_t > longest:
                    longest, gap_end = t - last_t, t
                last_t, last_n = t, n
        after = samples[-1][1] - next((n for t, n in samples if t >= gap_end), samples[-1][1])
        connects = zh("connects")
        print(f"longest stall {longest:.1f} s (ended at {gap_end:.1f} s), {after} frames after it, "
              f"page connects {connects}, state {zh('state')}, server log lost={lost} back={back}")
        failures = []
        if not (lost and back):
            failures.append("serve did not log the camera going away and coming back")
        if longest < UNPLUGGED_MS / 1000 * 0.6:
            failures.append(f"no stall of about {UNPLUGGED_MS} ms was seen (longest {longest:.1f} s): did the unplug happen?")
        if after < 60:
            failures.append(f"only {after} frames after the camera came back")
        if connects != 1:
            failures.append(f"the page connected {connects} times: the WebRTC session should survive the unplug")
        if failures:
            raise AssertionError("; ".join(failures))
    except AssertionError as e:
        print(f"FAIL: {e}")
        if driver is not None:
            driver.save_screenshot(str(out / "unplug.png"))
        print("serve output (tail):\n" + serve.tail(40))
        return 1
    finally:
        if driver is not None:
            driver.quit()
        serve.stop(2.0)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
