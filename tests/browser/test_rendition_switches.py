#!/usr/bin/python3
"""A rendition switch costs the viewer no freeze: `zerohop serve --renditions on` (full, 1/2 and 1/4
size), headless Chromium on the viewer page, and the viewer's own choice of its highest rung through the
page (window.zerohop.chooseRendition: POST to its session's layer URL) --switches times, each to another
rung. Each switch must show in the video element's size (videoHeight: the decoded picture's) within --switch-s,
on the same track (one WHEP session, /stats counts the switches); over all of them Chromium's freezeCount
may rise by at most --max-freezes (issue 37's goal: unchanged over 10 switches), and the page must keep
decoding. Per switch it prints the time from the choice to the new size and the longest gap between
presented frames around it (the page's longGaps, > 200 ms).

usage: test_rendition_switches.py [--netns] [--source test:640x360@30] [--switches 10] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no chromium/chromedriver/selenium)
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

STATE = """
const z = window.zerohop, w = (z && z.webrtc) || {}, v = document.getElementById('video');
return z ? {state: z.state, frames: z.framesPresented, decoded: w.framesDecoded, freezes: w.freezeCount, plis: w.pliCount,
            height: v.videoHeight, width: v.videoWidth, layer: z.layerUrl,
            session: z.sessionId,
            gaps: z.longGaps.length, lastGap: z.longGaps.length ? z.longGaps[z.longGaps.length - 1] : null,
            now: performance.now(), connects: z.connects} : null;
"""

CHOOSE = """
const done = arguments[arguments.length - 1];
window.zerohop.chooseRendition(arguments[0]).then(done, (e) => done('error: ' + e));
"""


def viewer_stats(base: str, session: str) -> dict:
    with urllib.request.urlopen(base + "stats", timeout=2) as r:
        s = json.load(r)
    for v in s.get("viewer_sessions", []):
        if v.get("id") == session:
            return {"rung": v.get("rung"), "switches": v.get("rung_switches"), "ladder": s.get("renditions", [])}
    return {"ladder": s.get("renditions", [])}


def main() -> int:
    ap = zb.serve_test_args(__doc__)
    ap.add_argument("--switches", type=int, default=10)
    ap.add_argument("--switch-s", type=float, default=5.0, help="bound on each switch: choice -> the new size decoded")
    ap.add_argument("--hold-s", type=float, default=1.0, help="playback on each rung after its first frame")
    ap.add_argument("--max-freezes", type=int, default=0)
    args = zb.parse_serve_test_args(ap)
    chromium, chromedriver = zb.find_browser()
    if args.netns:
        zb.enter_private_network()
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--renditions", "on",
                                    "--listen", f"127.0.0.1:{zb.free_port()}"], out / "rendition_switches.serve.log")
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            raise AssertionError("zerohop serve printed no 'open http://' line within 20 s")
        driver = zb.start_chromium(chromium, chromedriver, extra_flags=("--window-size=800,600",))
        driver.set_script_timeout(10)
        driver.get(url)
        state = lambda: driver.execute_script(STATE)  # noqa: E731
        zb.wait_until("the page plays with a layer URL", lambda: (s := state()) and s["frames"] > 30 and s["layer"]
                      and s["height"], 30)
        first = state()
        ladder = viewer_stats(url, first["session"])["ladder"]
        heights = [r["height"] for r in ladder]
        if len(heights) != 3:
            raise AssertionError(f"/stats lists {len(heights)} renditions, want 3 (--renditions on): {ladder}")
        if first["height"] != heights[0]:
            raise AssertionError(f"the viewer starts at {first['height']} lines, not rung 0's {heights[0]}")
        print(f"playing {first['width']}x{first['height']}; ladder {heights}; layer URL {first['layer']}")

        # Each switch to another rung: down two, up one, ... (rung 0 as null, automatic, every other time).
        order = [1, 2, 0, 2, 1, 0, 1, 2, 0, 2, 1, 0]
        rung_before = 0
        freezes_before, decoded_before = first["freezes"] or 0, first["decoded"] or 0
        for i in range(args.switches):
            rung = order[i % len(order)]
            if rung == rung_before:
                rung = (rung + 1) % 3
            choice = None if rung == 0 and i % 2 == 0 else rung
            before = state()
            t0 = time.monotonic()
            status = driver.execute_async_script(CHOOSE, choice)
            if status != 200:
                raise AssertionError(f"switch {i + 1}: the layer POST answered {status}")
            zb.wait_until(f"switch {i + 1} to rung {rung} ({heights[rung]} lines)",
                          lambda: state()["height"] == heights[rung], args.switch_s, 0.05)
            took = time.monotonic() - t0
            time.sleep(args.hold_s)
            after = state()
            new_gaps = after["gaps"] - before["gaps"]
            print(f"switch {i + 1}: rung {rung_before} -> {rung} ({'automatic' if choice is None else 'chosen'}) in "
                  f"{took * 1000:.0f} ms; Chromium freezes {after['freezes']}; page gaps > 200 ms: {new_gaps}"
                  + (f" (last {after['lastGap']['ms']:.0f} ms)" if new_gaps else ""))
            rung_before = rung
        last = state()
        vs = viewer_stats(url, last["session"])
        freezes = (last["freezes"] or 0) - freezes_before
        decoded = (last["decoded"] or 0) - decoded_before
        plis = (last["plis"] or 0) - (first["plis"] or 0)
        print(f"{args.switches} switches: Chromium freezeCount +{freezes}, PLIs +{plis}, {decoded} frames decoded, "
              f"/stats switches {vs.get('switches')}, WHEP connects {last['connects']}")
        if last["connects"] != first["connects"] or last["session"] != first["session"]:
            raise AssertionError("the page reconnected during the switches: a switch must keep the session")
        if vs.get("switches") != args.switches:
            raise AssertionError(f"/stats counts {vs.get('switches')} switches for this viewer, want {args.switches}")
        if freezes > args.max_freezes:
            raise AssertionError(f"Chromium counted {freezes} freezes over {args.switches} switches "
                                 f"(at most {args.max_freezes})")
        min_decoded = 20 * args.switches * args.hold_s
        if decoded < min_decoded:
            raise AssertionError(f"only {decoded} frames decoded over the switches (want >= {min_decoded:.0f})")
    except AssertionError as e:
        zb.note_if_loaded()
        return zb.report_failure(str(e), serve, [driver] if driver else [], out, "rendition_switches")
    finally:
        if driver:
            driver.quit()
        serve.stop(2.0)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
