#!/usr/bin/python3
"""The viewer page warns when one stage dominates the latency, and only then.

Plays `zerohop serve` in headless Chromium through the real page, then rewrites the page's /stats answers
(a wrapper around window.fetch, computed from the page's own capture->display p50 at each poll):
  - "encode" made 70 % of capture->display: within 4 s the banner shows "encode dominates" with its
    share, and the legend marks the encode row;
  - the server's share spread evenly over its four stages (none >= 50 %, the network remainder ~0): the
    banner hides (skipped, with a note, if the browser's own jitter buffer or decode is >= 50 % by itself);
  - the real /stats again: the encode row is no longer marked (real encode is a few ms of ~40).

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
    const ms = window.__statsMode === 'encode'
      ? {ingest: 0.2, convert: 0.2, encode: 0.7 * e2e, send: 0.1}
      : {ingest: rest / 4, convert: rest / 4, encode: rest / 4, send: rest / 4};
    s.stages = {};
    let total = 0;
    for (const k of Object.keys(ms)) { s.stages[k] = {p50_ms: ms[k], p99_ms: ms[k]}; total += ms[k]; }
    s.total = {p50_ms: total, p99_ms: total};
    return new Response(JSON.stringify(s), {status: 200, headers: {'Content-Type': 'application/json'}});
  };
}
"""

STATE = """
const w = document.getElementById('warning');
const enc = document.getElementById('legend-encode');
const z = window.zerohop, r = z.webrtc || {};
return {hidden: w.hidden, text: w.textContent, encodeMarked: enc.classList.contains('dominant'),
        e2e: z.latencyP50, jitter: r.jitterBufferMs, decode: r.decodeMs, frames: z.framesPresented};
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
        driver = zb.start_chromium(chromium, chromedriver)
        driver.get(url)
        wait_state(driver, "the page plays and measures capture->display", lambda s: s["e2e"] and s["frames"] > 60, 30)

        driver.execute_script(FAKE_STATS, "encode")
        st = wait_state(driver, "the warning names encode", lambda s: not s["hidden"] and "encode dominates" in s["text"], 6)
        if not st["encodeMarked"]:
            raise AssertionError(f"the banner names encode but the legend row is not marked: {st}")
        print(f"encode at 70 %: banner \"{st['text']}\"")

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
