#!/usr/bin/python3
"""`zerohop serve --whip URL --whip-simulcast on` publishes the camera's ladder as simulcast layers to a
real SFU, Janus's VideoRoom (the Debian package, started here with a generated configuration; a small
WHIP front in this script turns the POST into the VideoRoom's "joinandconfigure", as the WHIP servers in
front of Janus do), and a headless-Chromium subscriber of that room is switched between the layers:
  - Janus's answer takes the three layers (a=simulcast:recv) and serve says it sends them;
  - the subscriber, asking Janus for substream 0, 1, 2 and 0 again, decodes pictures of each layer's
    size (the ladder's 1/4, 1/2 and full width): Janus forwards each layer it received from serve;
  - serve runs with --keyint 0 (keyframes only on request), so each switch (Janus waits for a keyframe of
    the target layer and asks for one with a PLI to that layer's SSRC) needs that request to reach that
    layer's own encode: /stats counts the layers' keyframes;
  - every layer decodes >= 20 fps in the browser while it is the one forwarded, and serve's own frame
    rate stays the source's (one capture, one encode per layer).
Janus ignores loopback for ICE, so this runs in a private network namespace with a veth pair.

usage: test_whip_simulcast_janus.py [--netns] [--source test:1280x720@30] ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (no janus with its videoroom plugin, chromium, chromedriver or selenium)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import janus_harness as jh  # noqa: E402
import zerohop_browser as zb  # noqa: E402


def stats(base: str) -> dict:
    with urllib.request.urlopen(base + "stats", timeout=2) as r:
        return json.load(r)


def video_inbound(driver) -> dict:
    return driver.execute_async_script("""
      const done = arguments[0];
      pc.getStats().then((s) => {
        let r = {width: 0, decoded: 0, freezes: 0, nacks: 0, lost: 0};
        s.forEach((x) => { if (x.type === 'inbound-rtp' && x.kind === 'video')
          r = {width: x.frameWidth || 0, decoded: x.framesDecoded || 0, freezes: x.freezeCount || 0,
               nacks: x.nackCount || 0, lost: x.packetsLost || 0}; });
        done(r);
      });""")


def main() -> int:
    ap = zb.serve_test_args(__doc__, source="test:1280x720@30")
    ap.add_argument("--seconds", type=float, default=2.0, help="decoding measured on each layer this long")
    ap.add_argument("--loss", type=int, default=0,
                    help="%% of the UDP to Janus's media ports dropped (nftables), serve's layers' and the "
                         "subscriber's RTCP alike: how each layer's repairs fare (prints its freezes, NACKs)")
    args = zb.parse_serve_test_args(ap)
    if not jh.find_janus() or not (jh.JANUS_LIB / "plugins" / "libjanus_videoroom.so").exists():
        zb.skip("the simulcast test needs janus with its videoroom plugin and HTTP transport (apt-get install janus)")
    chromium, chromedriver = zb.find_browser()
    if not args.netns or not zb.enter_private_network(lan=True):
        zb.skip("Janus ignores loopback for ICE: this test needs a private network namespace (root) for its veth pair")
    out = zb.artifacts_dir(Path(args.artifacts) if args.artifacts else Path.cwd())
    width = int(args.source.split(":", 1)[1].split("x", 1)[0])
    janus = jh.Janus(out / "whip_simulcast.janus.log", videoroom=True)
    if args.loss:
        nft = shutil.which("nft") or "/usr/sbin/nft"
        subprocess.run([nft, "-f", "-"], check=True, text=True, input=f"""
table ip zhloss {{
  chain out {{ type filter hook output priority 0; policy accept;
    udp dport 20000-20999 numgen random mod 100 < {args.loss} drop; }}
}}
""")
    # On the veth address, not loopback: serve's ICE gathers on every interface for a WHIP URL off loopback.
    bridge = jh.WhipToVideoRoom(janus, jh.JANUS_IP, zb.free_port())
    serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"127.0.0.1:{zb.free_port()}",
                                    "--keyint", "0", "--renditions", "on", "--whip", bridge.url,
                                    "--whip-simulcast", "on", "--status-interval", "5"],
                     out / "whip_simulcast.serve.log")
    driver = None
    try:
        url = serve.wait_url(20)
        if not url:
            raise AssertionError("zerohop serve printed no 'open http://' line within 20 s")
        zb.wait_until("serve publishes to the VideoRoom", lambda: "whip: publishing to" in serve.output(), 20)
        answer = bridge.answers[-1]
        offer = bridge.offers[-1]
        for line in ("a=simulcast:send h;m;l", "a=rid:h send", "a=rid:l send", "urn:ietf:params:rtp-hdrext:sdes:mid",
                     "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
                     "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"):
            if line not in offer:
                raise AssertionError(f"serve's offer lacks {line!r}:\n{offer}")
        said = [l for l in serve.output().splitlines() if "takes simulcast layers" in l]
        if "a=simulcast:recv" not in answer or not said or "l (rung 2)" not in said[-1]:
            raise AssertionError("Janus's answer should take the three layers and serve say so; answer's simulcast: "
                                 f"{[l for l in answer.splitlines() if 'simulcast' in l or 'rid' in l]}, serve: {said}")
        print("Janus takes the layers: " + said[-1].split("whip: ", 1)[-1].strip())
        driver = zb.start_chromium(chromium, chromedriver)
        sub, mid = jh.watch_videoroom(driver, janus, bridge.publisher_id)
        if mid is None:
            raise AssertionError("Janus's subscriber join named no video stream")
        zb.wait_until("the subscriber decodes pictures through Janus", lambda: video_inbound(driver)["decoded"] > 10, 20)
        s0 = stats(url)
        results = []
        for substream in (0, 1, 2, 0):
            want = width >> (2 - substream)
            t0 = time.monotonic()
            sub.message({"request": "configure", "streams": [{"mid": mid, "substream": substream}]})
            try:
                zb.wait_until(f"substream {substream}: pictures {want} wide",
                              lambda: video_inbound(driver)["width"] == want, 10)
            except AssertionError as e:
                raise AssertionError(f"{e} (the browser decodes {video_inbound(driver)['width']} wide)") from None
            took = time.monotonic() - t0
            a = video_inbound(driver)
            time.sleep(args.seconds)
            b = video_inbound(driver)
            fps = (b["decoded"] - a["decoded"]) / args.seconds
            results.append((substream, want, round(took, 2), round(fps, 1)))
            if args.loss:
                print(f"substream {substream} at {args.loss} % loss over {args.seconds} s: freezes "
                      f"{b['freezes'] - a['freezes']}, NACKs {b['nacks'] - a['nacks']}, lost {b['lost'] - a['lost']}")
            bridge.keepalive()
            sub.keepalive()
            if fps < 20 and not args.loss:
                raise AssertionError(f"substream {substream} ({want} wide) decodes {fps:.1f} fps")
        s1 = stats(url)
        print("substream, width, switch s, decoded fps: " + ", ".join(str(r) for r in results))
        forced = s1["keyframes_forced"] - s0["keyframes_forced"]
        print(f"serve: {s1['fps']} fps, keyframes forced during the switches: {forced}")
        if forced < 3:
            raise AssertionError(f"with --keyint 0 each switch needs a keyframe serve forces; it forced {forced}")
        source_fps = float(args.source.rsplit("@", 1)[1]) if "@" in args.source else 30.0
        if s1["fps"] < 0.8 * source_fps:
            raise AssertionError(f"serve runs at {s1['fps']} fps with three layers for a {source_fps:.0f} fps source")
    except (AssertionError, RuntimeError, KeyError) as e:
        return zb.report_failure(f"{type(e).__name__}: {e}", serve, [driver] if driver else [], out, "whip_simulcast")
    finally:
        if driver:
            driver.quit()
        serve.stop(3.0)
        bridge.stop()
        janus.stop()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
