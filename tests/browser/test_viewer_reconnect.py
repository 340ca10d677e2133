#!/usr/bin/python3
"""The viewer page's session handling against a real `zerohop serve`, in headless Chromium:

1. plays, and the server counts one viewer;
2. "Stop" ends the WHEP session (DELETE): the server's viewer count drops to 0;
3. "Reconnect" plays again;
4. serve is stopped (SIGINT) and started again on the same port: the page notices, retries with back-off
   and plays again on its own.

usage: test_viewer_reconnect.py [--netns] [--source test:640x360@30] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402


def viewers(base: str) -> int | None:
    try:
        with urllib.request.urlopen(base + "stats", timeout=2) as r:
            return json.load(r).get("viewers")
    except (OSError, ValueError):
        return None


def wait(pred, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--source", default="test:640x360@30")
    ap.add_argument("--netns", action="store_true")
    ap.add_argument("--netns-lan", action="store_true")
    ap.add_argument("--serve-arg", action="append", default=[], metavar="ARG",
                    help="extra argument for zerohop serve (repeatable), e.g. --serve-arg=--web-root=web")
    ap.add_argument("--artifacts", default=None)
    args = ap.parse_args()
    if not Path(args.zerohop).exists():
        print(f"FAIL: {args.zerohop} does not exist (build the zerohop target)")
        return 1
    chromium, chromedriver = zb.find_browser()
    if args.netns or args.netns_lan:
        zb.enter_private_network(lan=args.netns_lan)
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    port = zb.free_port()
    serve_args = ["--source", args.source, "--listen", f"127.0.0.1:{port}", *args.serve_arg]
    serve = zb.Serve(args.zerohop, serve_args, out / "reconnect.serve1.log")
    driver = None
    step = "start"

    def state() -> str:
        return driver.execute_script("return window.zerohop && window.zerohop.state")

    def presented() -> int:
        return driver.execute_script("return window.zerohop ? window.zerohop.framesPresented : 0")

    def playing_after(frames: int) -> bool:
        return state() == "playing" and presented() > frames + 15

    try:
        url = serve.wait_url(20)
        if not url:
            print("FAIL: zerohop serve printed no 'open http://' line within 20 s\n" + serve.tail())
            return 1
        driver = zb.start_chromium(chromium, chromedriver)
        driver.get(url)

        step = "1. first playback"
        if not wait(lambda: playing_after(0), 30):
            raise AssertionError("the page did not play within 30 s")
        if not wait(lambda: viewers(url) == 1, 3):
            raise AssertionError(f"server reports {viewers(url)} viewers while the page plays, want 1")
        print("1. playing; server counts 1 viewer")

        step = "2. stop"
        driver.find_element("id", "stop").click()
        if not wait(lambda: viewers(url) == 0, 3):
            raise AssertionError(f"after Stop the server still reports {viewers(url)} viewers (no DELETE?)")
        if state() != "stopped":
            raise AssertionError(f"after Stop the page is '{state()}', want 'stopped'")
        print("2. Stop: session deleted, server counts 0 viewers")

        step = "3. reconnect button"
        before = presented()
        driver.find_element("id", "reconnect").click()
        if not wait(lambda: playing_after(before), 20):
            raise AssertionError(f"Reconnect did not bring playback back within 20 s (state '{state()}')")
        print("3. Reconnect: playing again")

        step = "4. server restart"
        rc, took = serve.stop(2.0)
        if rc != 0:
            raise AssertionError(f"serve exited {rc} after SIGINT ({took:.2f} s)")
        if not wait(lambda: state() in ("retrying", "connecting", "disconnected"), 15):
            raise AssertionError(f"15 s after the server stopped the page still says '{state()}'")
        print(f"4. server stopped: page went to '{state()}'")
        serve = zb.Serve(args.zerohop, serve_args, out / "reconnect.serve2.log")
        if not serve.wait_url(20):
            raise AssertionError("the restarted zerohop serve printed no 'open http://' line\n" + serve.tail())
        before = presented()
        if not wait(lambda: playing_after(before), 30):
            raise AssertionError(f"the page did not resume within 30 s of the server restart (state '{state()}', "
                                 f"error {driver.execute_script('return window.zerohop.error')})")
        print(f"   server restarted: page resumed on its own "
              f"({driver.execute_script('return window.zerohop.connects')} connection attempts in all)")
    except AssertionError as e:
        print(f"FAIL: {step}: {e}")
        if driver is not None:
            driver.save_screenshot(str(out / "reconnect.png"))
            print(zb.browser_console(driver))
        print("serve output (tail):\n" + serve.tail())
        return 1
    finally:
        serve.stop(2.0)
        if driver is not None:
            driver.quit()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
