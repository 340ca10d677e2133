#!/usr/bin/python3
"""A viewer vanishes without DELETE: Chromium plays `zerohop serve`, then every Chromium process is
SIGKILLed (no DTLS close, no RTCP BYE, no WHEP DELETE). The server must notice by itself within
BOUND_S (ICE disconnected for 5 s, or 10 s without the RTCP receiver reports Chromium sends every
second: the floor that also covers GStreamer receivers' 2.5-7.5 s report interval) and free everything the session held: its descriptors and threads go back to what serve had
before the viewer came.

usage: test_viewer_vanishes.py [--netns] [--source test:640x360@30] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium)
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

BOUND_S = 14.0  # kRtcpSilence (10 s) + the 1 s reaper tick + slack for a busy 2-core machine


def viewers(base: str) -> int | None:
    try:
        with urllib.request.urlopen(base + "stats", timeout=2) as r:
            return json.load(r).get("viewers")
    except OSError:
        return None


def counts(pid: int) -> tuple[int, int]:
    """(open descriptors, threads) of a process."""
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def settled_counts(pid: int, still_s: float = 1.0, timeout: float = 10.0) -> tuple[int, int]:
    """counts(pid) once they have not changed for `still_s` (a teardown finishing); AssertionError
    when they keep changing for `timeout`."""
    t0 = time.monotonic()
    last, since = counts(pid), time.monotonic()
    while time.monotonic() - t0 < timeout:
        time.sleep(0.1)
        now = counts(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still_s:
            return now
    raise AssertionError(f"serve's descriptors and threads did not settle within {timeout:.0f} s (last {last})")


def thread_names(pid: int) -> list[str]:
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return sorted(names)


def warm_up(base: str, offer: bytes) -> None:
    """One WHEP session made and DELETEd over HTTP, so GStreamer's process-wide threads and caches
    (clock thread, DTLS context, plugin loading) exist before the baseline is taken."""
    req = urllib.request.Request(base + "whep", data=offer, method="POST",
                                 headers={"Content-Type": "application/sdp"})
    with urllib.request.urlopen(req, timeout=10) as r:
        location = r.headers["Location"]
    req = urllib.request.Request(base.rstrip("/") + location, method="DELETE")
    urllib.request.urlopen(req, timeout=10).close()


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children first found by their parent id in /proc/*/stat)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def main() -> int:
    ap = zb.serve_test_args(__doc__)
    ap.add_argument("--offer", default=str(Path(__file__).resolve().parents[1] / "stream/data/chromium_offer.sdp"),
                    help="a browser's SDP offer, for the warm-up session")
    args = zb.parse_serve_test_args(ap)
    chromium, chromedriver = zb.find_browser()
    serve = zb.start_serve_test(args, "vanish.serve.log")
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            print("FAIL: zerohop serve printed no 'open http://' line within 20 s\n" + serve.tail())
            return 1
        warm_up(url, Path(args.offer).read_bytes())
        zb.wait_until("the warm-up session ended", lambda: " ended: " in serve.output() and viewers(url) == 0, 10)
        base_fds, base_threads = settled_counts(serve.proc.pid)
        base_names = thread_names(serve.proc.pid)

        driver = zb.start_chromium(chromium, chromedriver)
        driver.get(url)
        zb.wait_until("the page plays", lambda: (driver.execute_script(
            "return window.zerohop ? window.zerohop.framesPresented : 0") or 0) > 15, 30)
        if viewers(url) != 1:
            raise AssertionError(f"server counts {viewers(url)} viewers while the page plays, want 1")
        time.sleep(3.0)  # a few seconds of play: several receiver reports from the viewer
        busy_fds, busy_threads = counts(serve.proc.pid)

        # Vanish: SIGKILL every process chromedriver started (the browser, its renderers, GPU, network).
        victims = descendants(driver.service.process.pid)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        t_kill = time.monotonic()
        print(f"killed {len(victims)} Chromium processes; serve had {busy_fds} fds, {busy_threads} threads "
              f"with the viewer ({base_fds}, {base_threads} before it)")

        zb.wait_until("the server counts 0 viewers after the kill", lambda: viewers(url) == 0, 30)
        took = time.monotonic() - t_kill
        log = serve.output()
        ends = [l.split(" ended: ", 1)[1] for l in log.splitlines() if " ended: " in l]
        reason = ends[-1] if len(ends) >= 2 else "?"  # the first is the warm-up's DELETE
        print(f"session ended {took:.1f} s after the kill: {reason}")
        if "DELETE" in reason:
            raise AssertionError(f"the session ended by a DELETE ({reason}): the viewer was not killed")
        if took > BOUND_S:
            raise AssertionError(f"the vanished viewer was reaped after {took:.1f} s, bound {BOUND_S:.0f} s")

        # Nothing left behind: descriptors and threads back to the level before the viewer came
        # (teardown finishes on the loop thread; GLib may keep idle pool threads a few seconds).
        zb.wait_until(f"descriptors back to {base_fds} (now {counts(serve.proc.pid)[0]})",
                      lambda: counts(serve.proc.pid)[0] <= base_fds, 5)
        try:
            zb.wait_until(f"threads back to {base_threads}", lambda: counts(serve.proc.pid)[1] <= base_threads, 20)
        except AssertionError as e:
            names = thread_names(serve.proc.pid)
            extra = [n for n in set(names) if names.count(n) > base_names.count(n)]
            raise AssertionError(f"{e} (now {counts(serve.proc.pid)[1]}, more of: {', '.join(extra)})") from None
        fds, threads = counts(serve.proc.pid)
        print(f"after: {fds} fds, {threads} threads")
        rc, stop_s = serve.stop(3.0)
        if rc != 0:
            raise AssertionError(f"serve exited with {rc} after SIGINT (took {stop_s:.1f} s)")
    except AssertionError as e:
        print(f"FAIL: {e}")
        print("serve output (tail):\n" + serve.tail(40))
        return 1
    finally:
        if driver is not None:
            try:
                driver.service.process.kill()  # the browser is gone; quit() would wait on it
            except OSError:
                pass
        serve.stop(2.0)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
