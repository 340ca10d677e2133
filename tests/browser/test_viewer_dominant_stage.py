#!/usr/bin/python3
"""The viewer page warns when one stage dominates the latency, and only then; on a laptop screen its
latency chart is in view.

Plays `zerohop serve` in headless Chromium through the real page in a 1280x800 window, checks that the
chart is inside the viewport, then rewrites the page's /stats answers (a wrapper around window.fetch,
computed from the page's own capture->display p50 at each poll) and, for the last two modes, its
capture->receive figure (abs-capture-time; the page splits network from display with it):
  - "encode" made 70 % of capture->display: within 4 s the banner shows "encode dominates" with its
    share, and the legend marks the encode row;
  - "display": the server's stages tiny, the frame received at 10 % of capture->display: the wait is the
    browser's compositor and screen, and the banner names display, never the network (the legend shows
    "network" and "display" apart, not "network + display"; skipped, with a note, if the browser's own
    jitter buffer and decode are >= 35 %);
  - "even": 20 % left for display, the rest spread evenly over the server's four stages (none >= 50 %, the
    network ~0): the banner hides (skipped, with a note, if the browser's own jitter buffer or decode is
    >= 50 % by itself);
  - the real figures again: the encode row is no longer marked (real encode is a few ms of ~40).

usage: test_viewer_dominant_stage.py [--netns] [--source test:640x360@30] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

FAKE_STATS = r"""
window.__statsMode = arguments[0];
if (!window.__realFetch) {
  window.__realFetch = window.fetch;
  window.fetch = async (input, init) => {
    const resp = await window.__realFetch(input, init);
    const url = typeof input === 'string' ? input : input.url;
    if (!url.endsWith('/stats') || !window.__statsMode) return resp;
    const s = await resp.json();
    const z = window.zerohop, w = z.webrtc || {};
    const e2e = z.latencyP50;
    if (e2e === null || e2e === undefined) return new Response(JSON.stringify(s));
    const rest = Math.max(0, e2e - (w.jitterBufferMs || 0) - (w.decodeMs || 0));
    const received = Math.max(0, rest - 0.2 * e2e);  // 'even': 20 % of capture->display left for display
    const ms = window.__statsMode === 'encode' ? {ingest: 0.2, convert: 0.2, encode: 0.7 * e2e, send: 0.1}
      : window.__statsMode === 'display' ? {ingest: 0.1, convert: 0.1, encode: 0.1, send: 0.1}
      : {ingest: received / 4, convert: received / 4, encode: received / 4, send: received / 4};
    s.stages = {};
    let total = 0;
    for (const k of Object.keys(ms)) { s.stages[k] = {p50_ms: ms[k], p99_ms: ms[k]}; total += ms[k]; }
    s.total = {p50_ms: total, p99_ms: total};
    return new Response(JSON.stringify(s), {status: 200, headers: {'Content-Type': 'application/json'}});
  };
  // capture->receive as the page measures it (abs-capture-time), or the mode's: 'encode' as its stages
  // end, 'display' 10 % of capture->display, 'even' all of it but the 20 % left for display.
  const z = window.zerohop;
  let measured = z.captureToReceiveP50;
  Object.defineProperty(z, 'captureToReceiveP50', {
    get() {
      const e2e = z.latencyP50, w = z.webrtc || {};
      if (!e2e || !window.__statsMode) return measured;
      if (window.__statsMode === 'encode') return 0.7 * e2e + 0.5;  // received as the stages end: no network
      if (window.__statsMode === 'display') return 0.1 * e2e;
      return Math.max(0, e2e - (w.jitterBufferMs || 0) - (w.decodeMs || 0) - 0.2 * e2e);
    },
    set(v) { measured = v; },
  });
}
"""

STATE = """
const w = document.getElementById('warning');
const enc = document.getElementById('legend-encode');
const net = document.getElementById('legend-network'), disp = document.getElementById('legend-display');
const z = window.zerohop, r = z.webrtc || {};
const chart = document.getElementById('chart').getBoundingClientRect();
return {hidden: w.hidden, text: w.textContent, encodeMarked: enc.classList.contains('dominant'),
        e2e: z.latencyP50, jitter: r.jitterBufferMs, decode: r.decodeMs, frames: z.framesPresented,
        networkName: net.querySelector('.name').textContent, displayShown: !disp.hidden,
        displayMarked: disp.classList.contains('dominant'), networkMarked: net.classList.contains('dominant'),
        chartBottom: chart.bottom, chartTop: chart.top, viewport: [window.innerWidth, window.innerHeight]};
"""


def wait_state(driver, what: str, cond, timeout: float) -> dict:
    """The page's state once `cond(state)` holds; AssertionError (with the last state) otherwise."""
    last = {}

    def check() -> bool:
        last.update(driver.execute_script(STATE))
        return bool(cond(last))
    try:
        zb.wait_until(what, check, timeout, 0.25)
    except AssertionError as e:
        raise AssertionError(f"{e}; page shows {last}") from None
    return dict(last)


def check_display(driver) -> None:
    """Mode "display": the banner names display, the legend tells network and display apart."""
    st = wait_state(driver, "the warning names display", lambda s: not s["hidden"] and "display" in s["text"]
                    and s["displayMarked"], 6)
    if "network" in st["text"] or st["networkMarked"] or st["networkName"] != "network" or not st["displayShown"]:
        raise AssertionError(f"the browser's display wait is told as network: {st}")
    print(f"display at ~90 %: banner \"{st['text']}\"; legend network row named {st['networkName']!r}")


def main() -> int:
    args = zb.parse_serve_test_args(zb.serve_test_args(__doc__))
    chromium, chromedriver = zb.find_browser()
    if args.netns:
        zb.enter_private_network()
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    port = zb.free_port()
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{port}"],
                     out / "dominant_stage.serve.log")
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            raise AssertionError("zerohop serve printed no 'open http://' line within 20 s")
        driver = zb.start_chromium(chromium, chromedriver, extra_flags=("--window-size=1280,800",))
        driver.get(url)
        st = wait_state(driver, "the page plays and measures capture->display", lambda s: s["e2e"] and s["frames"] > 60, 30)
        if st["chartTop"] < 0 or st["chartBottom"] > st["viewport"][1]:
            raise AssertionError(f"the latency chart ({st['chartTop']:.0f}-{st['chartBottom']:.0f} px) is not in the "
                                 f"{st['viewport'][0]}x{st['viewport'][1]} viewport of a 1280x800 window")
        print(f"1280x800 window: the chart at {st['chartTop']:.0f}-{st['chartBottom']:.0f} px of {st['viewport'][1]}")

        driver.execute_script(FAKE_STATS, "encode")
        st = wait_state(driver, "the warning names encode", lambda s: not s["hidden"] and "encode dominates" in s["text"], 6)
        if not st["encodeMarked"]:
            raise AssertionError(f"the banner names encode but the legend row is not marked: {st}")
        print(f"encode at 70 %: banner \"{st['text']}\"")

        driver.execute_script(FAKE_STATS, "display")
        st = driver.execute_script(STATE)
        if (st["jitter"] or 0) + (st["decode"] or 0) >= 0.35 * (st["e2e"] or 0):
            print(f"note: the browser's own jitter buffer and decode are over a third of the latency ({st}); display check skipped")
        else:
            check_display(driver)

        driver.execute_script(FAKE_STATS, "even")
        st = driver.execute_script(STATE)
        e2e = st["e2e"] or 0
        if (st["jitter"] or 0) >= 0.5 * e2e or (st["decode"] or 0) >= 0.5 * e2e:
            print(f"note: the browser's own jitter buffer/decode is half the latency ({st}); hidden-banner check skipped")
        else:
            st = wait_state(driver, "the banner hides when no stage dominates", lambda s: s["hidden"], 6)
            print(f"server share spread over 4 stages: banner hidden (e2e {st['e2e']:.1f} ms)")

        driver.execute_script(FAKE_STATS, None)
        st = wait_state(driver, "real stats: encode no longer marked", lambda s: not s["encodeMarked"], 6)
        print(f"real /stats: encode not marked; banner {'hidden' if st['hidden'] else repr(st['text'])}")
    except AssertionError as e:
        return zb.report_failure(str(e), serve, [driver] if driver else [], out, "dominant_stage")
    finally:
        if driver:
            driver.quit()
        serve.stop(2.0)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
