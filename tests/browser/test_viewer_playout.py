#!/usr/bin/python3
"""Playout that does not wait, and time to first frame, as headless Chromium sees them.

Two `zerohop serve` at once (640x360@30): A with the default playout delay (0,0), B with
`--playout-delay 200,300`. One Chromium plays A through the viewer page, then B.

A, asserted:
  - the answer has a=extmap lines for playout-delay, abs-capture-time and transport-wide-cc with the ids
    Chromium offered them at, and a=rtcp-fb transport-cc; Chromium's transport-cc feedback reaches the
    sender (/stats: twcc_packets_received > 0 for this session);
  - abs-capture-time in effect: Chromium reports captureTimestamp per synchronization source, and the
    page's capture->display from it agrees with the pixel timecode's within 5 ms (two independent clocks
    of the same frames);
  - playout-delay 0,0 honoured: the jitter buffer holds frames < 50 ms on average (getStats
    jitterBufferDelay / jitterBufferEmittedCount, over the last second);
  - time to first frame: over --connects connections (Reconnect), the page's POST -> first frame on
    screen (requestVideoFrameCallback) has a median < --ttff-budget-ms (default 1500, what a loaded 2-core
    box still meets), and /stats names the session with connect_ms and first_frame_ms (POST -> first
    keyframe packet sent), which is shorter than what the page saw.
B, asserted: the 200 ms minimum is honoured: jitter buffer >= 150 ms per frame and capture->display >= 180 ms.

usage: test_viewer_playout.py [--netns] [--connects 3] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

URIS = {
    "playout-delay": "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay",
    "abs-capture-time": "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time",
    "transport-wide-cc": "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
}

STATE_JS = """
const z = window.zerohop, w = z.webrtc || {};
return {state: z.state, frames: z.framesPresented, pixel: z.latencyP50, abs: z.absCaptureP50,
        absCount: z.absCaptureCount, receive: z.captureToReceiveP50, jitter: w.jitterBufferMs,
        toPresent: z.receiveToPresentationP50, toDisplay: z.presentationToDisplayP50,
        ttff: z.timesToFirstFrame.slice(), answerMs: z.answerMs, sessionId: z.sessionId, server: z.serverStart,
        sdp: z.sdp, error: z.error,
        twcc: ((z.lastStats && z.lastStats.viewer_sessions || []).find((v) => v.id === z.sessionId) || {})
              .twcc_packets_received};
"""


def state(driver) -> dict:
    return driver.execute_script(STATE_JS)


def wait_state(driver, what: str, cond, timeout: float) -> dict:
    last = {}

    def check() -> bool:
        last.clear()
        last.update(state(driver))
        return bool(cond(last))
    try:
        zb.wait_until(what, check, timeout, 0.2)
    except AssertionError as e:
        brief = {k: v for k, v in last.items() if k != "sdp"}
        raise AssertionError(f"{e}; page shows {brief}") from None
    return dict(last)


def check_answer(sdp: dict) -> list[str]:
    """The answer's extmap lines for our three URIs, at the offer's ids."""
    problems = []
    for name, uri in URIS.items():
        offered = re.search(rf"a=extmap:(\d+) {re.escape(uri)}\r?\n", sdp["offer"])
        if not offered:
            problems.append(f"Chromium did not offer {name} (the page asks for abs-capture-time)")
            continue
        if f"a=extmap:{offered.group(1)} {uri}" not in sdp["answer"]:
            problems.append(f"the answer lacks a=extmap:{offered.group(1)} {uri}")
    if not re.search(r"a=rtcp-fb:\d+ transport-cc", sdp["answer"]):
        problems.append("the answer lacks a=rtcp-fb:<pt> transport-cc")
    return problems


def main() -> int:
    ap = zb.serve_test_args(__doc__)
    ap.add_argument("--connects", type=int, default=3, help="connections whose time to first frame is measured")
    ap.add_argument("--ttff-budget-ms", type=float, default=1500.0)
    args = zb.parse_serve_test_args(ap)
    chromium, chromedriver = zb.find_browser()
    if args.netns:
        zb.enter_private_network()
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    # One serve at a time: a second one encoding beside A would take CPU from A's figures.
    live = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{zb.free_port()}"],
                    out / "playout_live.serve.log")
    held = None
    driver = None
    serve = live
    try:
        url = live.wait_url(20)
        if not url:
            raise AssertionError("zerohop serve printed no 'open http://' line within 20 s")
        driver = zb.start_chromium(chromium, chromedriver)

        # A: 0,0 and the time to first frame.
        driver.get(url)
        st = wait_state(driver, "A plays with abs-capture-time and the timecode read",
                        lambda s: s["frames"] > 60 and s["pixel"] and s["abs"] and s["jitter"] is not None, 30)
        problems = check_answer(st["sdp"])
        if problems:
            raise AssertionError("; ".join(problems) + "\nanswer:\n" + st["sdp"]["answer"])
        print("answer: playout-delay, abs-capture-time, transport-wide-cc at the offer's ids; rtcp-fb transport-cc")
        st = wait_state(driver, "/stats shows Chromium's transport-cc feedback for this session",
                        lambda s: (s["twcc"] or 0) > 0, 5)
        print(f"transport-wide-cc: the last feedback window reported {st['twcc']} packets received")
        if abs(st["abs"] - st["pixel"]) > 5:
            raise AssertionError(f"capture->display from abs-capture-time {st['abs']:.1f} ms and from the pixel "
                                 f"timecode {st['pixel']:.1f} ms differ by more than 5 ms")
        print(f"capture->display p50: pixel timecode {st['pixel']:.1f} ms, abs-capture-time {st['abs']:.1f} ms "
              f"({st['absCount']} frames), of which capture->receive {st['receive']:.1f} ms, ->compositor "
              f"{st['toPresent']:.1f} ms, ->on screen {st['toDisplay']:.1f} ms")
        if st["jitter"] >= 50:
            raise AssertionError(f"playout-delay 0,0: the jitter buffer held frames {st['jitter']:.1f} ms (>= 50)")
        print(f"playout-delay 0,0: jitter buffer {st['jitter']:.2f} ms per frame")

        answers = [st["answerMs"]]  # POST -> answer, per connection
        for i in range(1, args.connects):
            driver.execute_script("document.getElementById('reconnect').click()")
            answers.append(wait_state(driver, f"connection {i + 1} shows its first frame",
                                      lambda s, n=i + 1: len(s["ttff"]) >= n, 15)["answerMs"])
        st = wait_state(driver, "/stats names this session's start-up times",
                        lambda s: s["server"] and s["server"].get("first_frame_ms") is not None, 5)
        ttff = st["ttff"]
        median = statistics.median(ttff)
        print(f"time to first frame over {len(ttff)} connections (POST -> first frame on screen): median "
              f"{median:.0f} ms, each {', '.join(f'{t:.0f}' for t in ttff)} ms; POST -> answer median "
              f"{statistics.median(answers):.0f} ms; last connection, server side: connected "
              f"{st['server']['connect_ms']:.0f} ms, first keyframe sent {st['server']['first_frame_ms']:.0f} ms")
        if median >= args.ttff_budget_ms:
            raise AssertionError(f"time to first frame median {median:.0f} ms >= {args.ttff_budget_ms:.0f} ms")
        if not 0 < st["server"]["first_frame_ms"] <= ttff[-1]:
            raise AssertionError(f"/stats first_frame_ms {st['server']['first_frame_ms']:.0f} ms is not within the "
                                 f"page's {ttff[-1]:.0f} ms from the same POST")

        # B: a 200 ms minimum the browser must honour.
        driver.get("about:blank")
        live.stop(2.0)
        held = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{zb.free_port()}",
                                       "--playout-delay", "200,300"], out / "playout_held.serve.log")
        serve = held
        url = held.wait_url(20)
        if not url:
            raise AssertionError("the second zerohop serve (--playout-delay 200,300) printed no 'open http://' line "
                                 "within 20 s")
        driver.get(url)
        st = wait_state(driver, "B plays and its jitter buffer fills to the 200 ms minimum",
                        lambda s: s["frames"] > 30 and s["pixel"] and s["jitter"] is not None and s["jitter"] >= 150,
                        20)
        if st["pixel"] < 180:
            raise AssertionError(f"playout-delay 200,300: capture->display {st['pixel']:.1f} ms (< 180)")
        print(f"playout-delay 200,300: jitter buffer {st['jitter']:.0f} ms per frame, capture->display "
              f"{st['pixel']:.0f} ms")
    except AssertionError as e:
        return zb.report_failure(str(e), serve, [driver] if driver else [], out, "playout")
    finally:
        zb.quit_browser(driver)
        live.stop(2.0)
        if held:
            held.stop(2.0)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
