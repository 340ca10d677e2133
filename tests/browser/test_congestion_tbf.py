#!/usr/bin/python3
"""Congestion control end to end: `zerohop serve --bitrate 2500 --renditions off` (the one encode every
viewer shares follows the weakest: what this test judges; with the default ladder the viewer would move
to a lower rung instead, test_rendition_switches.py and RenditionsPipeline) in a network namespace of its own,
headless Chromium (the viewer page) in this process's private namespace, one veth pair between them.
A tc token bucket filter (`tbf`, the kernel here has no netem) of --link-kbit on serve's end of the veth
shapes everything serve sends the viewer.

With --delay-ms (and --loss): three namespaces instead, viewer - router - server, routed through the
router. serve takes its media on one UDP port (--udp-ports P-P) and advertises the router's address
(--ice-host); the router drops every forwarded UDP datagram (nftables), so media and STUN can only go
through a user-space relay in the router (udp_delay_relay.py) that delays each datagram --delay-ms each
way; --loss % of the UDP datagrams the router sends the viewer are dropped (nftables numgen), and the tbf
sits on the router's link to the viewer. HTTP (WHEP, /stats) is routed normally. Phase 0 then also
checks that the delay applies: the selected ICE pair's RTT in Chromium's getStats
(currentRoundTripTime, from its STUN consent checks) is >= 2 x --delay-ms.

Phase 0, no limit: the page plays and serve's encoder makes >= 80 % of --bitrate (/stats bitrate.sent_kbps:
the check that the test pattern fills the link, or the limit below would prove nothing).
Phase 1, tbf on: within --adapt-s (5 s) the encoder's output over its last second (/stats
bitrate.sent_kbps) is under the link; then, from --settle-s (5 s) after the limit on (the step's own
loss burst is not judged), over --hold-s (15 s),
>= 25 fps decoded by Chromium (getStats framesDecoded), at most --max-freezes (1) freezes (Chromium's freezeCount) and
the target never past 1.3 x the link (it probes up to the link and backs off); the page shows the
target and what this viewer is sent (window.zerohop.bitrate, from /stats). What the step itself cost
(freezes, NACKs, PLIs, losses and retransmissions until the judged window) is printed.
Phase 2, tbf off: within --recover-s (15 s) the target is back at >= 90 % of --bitrate.
The namespaces and the relay are removed on every way out (finally, SIGTERM).

usage: test_congestion_tbf.py [--source test:640x360@30] [--link-kbit 1000] [--delay-ms 50 --loss 2]
                              ZEROHOP_BINARY
exit: 0 pass, 1 fail, 77 skipped (not root, no tc/nft/chromium)
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

IP = shutil.which("ip") or "/usr/sbin/ip"
TC = shutil.which("tc") or "/usr/sbin/tc"
NFT = shutil.which("nft") or "/usr/sbin/nft"
RELAY = Path(__file__).resolve().parent / "udp_delay_relay.py"
MEDIA_PORT = 40000  # serve's one UDP port in the delayed setup (--udp-ports)

SNAPSHOT_JS = """
const z = window.zerohop;
const w = (z && z.webrtc) || {};
return z ? {state: z.state, error: z.error, framesPresented: z.framesPresented, decoded: w.framesDecoded,
            freezeCount: w.freezeCount, pageFreezes: z.freezes, bitrate: z.bitrate, nacks: w.nackCount,
            plis: w.pliCount, lost: w.packetsLost, rtx: w.retransmittedPacketsReceived, pair: z.candidatePair,
            shown: (document.getElementById('bitrate') || {}).textContent,
            shownViewer: (document.getElementById('viewer-bitrate') || {}).textContent} : null;
"""


def sh(*cmd: str, stdin: str | None = None) -> None:
    r = subprocess.run(list(cmd), input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


class DirectLink:
    """serve's namespace and one veth pair to this process's (the viewer's); tbf on serve's end."""

    def __init__(self) -> None:
        self.server_ns = f"zh-cc-{os.getpid()}"
        self.server = "10.93.0.2"
        self.shaped = (self.server_ns, "zhs0")  # (namespace, device) the tbf goes on
        self.serve_args: list[str] = []
        self.made: list[str] = []

    def up(self, art: Path) -> None:
        sh(IP, "netns", "add", self.server_ns)
        self.made.append(self.server_ns)
        sh(IP, "link", "add", "zhv0", "type", "veth", "peer", "name", "zhs0", "netns", self.server_ns)
        sh(IP, "addr", "add", "10.93.0.1/24", "dev", "zhv0")
        sh(IP, "link", "set", "zhv0", "up")
        for cmd in (["addr", "add", f"{self.server}/24", "dev", "zhs0"], ["link", "set", "zhs0", "up"],
                    ["link", "set", "lo", "up"]):
            sh(IP, "-n", self.server_ns, *cmd)

    def down(self) -> None:
        while self.made:
            subprocess.run([IP, "netns", "del", self.made.pop()], capture_output=True)


class DelayedPath(DirectLink):
    """viewer (this process) - router - server, routed; UDP only through the delaying relay in the router,
    --loss % of the router's UDP to the viewer dropped, the tbf on the router's link to the viewer."""

    VIEWER, ROUTER_V, ROUTER_S, SERVER = "10.94.0.2", "10.94.0.1", "10.95.0.1", "10.95.0.2"

    def __init__(self, delay_ms: float, loss_pct: int) -> None:
        super().__init__()
        tag = str(os.getpid())
        self.router_ns, self.server_ns = f"zh-cdr-{tag}", f"zh-cds-{tag}"
        self.server = self.SERVER
        self.shaped = (self.router_ns, "zhr0")
        self.serve_args = ["--udp-ports", f"{MEDIA_PORT}-{MEDIA_PORT}", "--ice-host", self.ROUTER_V]
        self.delay_ms, self.loss_pct = delay_ms, loss_pct
        self.relay: subprocess.Popen | None = None

    def up(self, art: Path) -> None:
        for ns in (self.router_ns, self.server_ns):
            sh(IP, "netns", "add", ns)
            self.made.append(ns)
        r, s = self.router_ns, self.server_ns
        sh(IP, "link", "add", "zhv0", "type", "veth", "peer", "name", "zhr0", "netns", r)
        sh(IP, "addr", "add", f"{self.VIEWER}/24", "dev", "zhv0")
        sh(IP, "link", "set", "zhv0", "up")
        sh(IP, "route", "add", "default", "via", self.ROUTER_V)
        sh(IP, "-n", r, "link", "add", "zhr1", "type", "veth", "peer", "name", "zhs0", "netns", s)
        for cmd in (["addr", "add", f"{self.ROUTER_V}/24", "dev", "zhr0"],
                    ["addr", "add", f"{self.ROUTER_S}/24", "dev", "zhr1"], ["link", "set", "zhr0", "up"],
                    ["link", "set", "zhr1", "up"], ["link", "set", "lo", "up"]):
            sh(IP, "-n", r, *cmd)
        for cmd in (["addr", "add", f"{self.SERVER}/24", "dev", "zhs0"], ["link", "set", "zhs0", "up"],
                    ["link", "set", "lo", "up"], ["route", "add", "default", "via", self.ROUTER_S]):
            sh(IP, "-n", s, *cmd)
        sh(IP, "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # No UDP is forwarded (the viewer's and serve's host candidates cannot reach each other), so media
        # and STUN take the relay; the loss applies to what the router sends the viewer (the media path).
        loss = (f"oifname \"zhr0\" meta l4proto udp numgen random mod 100 < {self.loss_pct} drop;"
                if self.loss_pct else "")
        sh(IP, "netns", "exec", r, NFT, "-f", "-", stdin=f"""
table ip zh {{
  chain forward {{ type filter hook forward priority 0; policy accept; meta l4proto udp drop; }}
  chain output {{ type filter hook output priority 0; policy accept; {loss} }}
}}
""")
        self.relay = subprocess.Popen(
            [IP, "netns", "exec", r, sys.executable, str(RELAY), "--listen", f"{self.ROUTER_V}:{MEDIA_PORT}",
             "--target", f"{self.SERVER}:{MEDIA_PORT}", "--delay-ms", str(self.delay_ms)],
            stdout=subprocess.PIPE, stderr=open(art / "congestion_delay.relay.log", "wb"), text=True)
        started = select.select([self.relay.stdout], [], [], 10)[0]  # it prints "ready" once bound
        if not started or self.relay.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the UDP relay did not start (see {art / 'congestion_delay.relay.log'})")

    def down(self) -> None:
        if self.relay:
            zb.terminate(self.relay)
            self.relay = None
        super().down()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--source", default="test:640x360@30")
    ap.add_argument("--bitrate", type=int, default=2500)
    ap.add_argument("--link-kbit", type=int, default=1000)
    ap.add_argument("--adapt-s", type=float, default=5)
    ap.add_argument("--settle-s", type=float, default=5)
    ap.add_argument("--hold-s", type=float, default=15)
    ap.add_argument("--recover-s", type=float, default=15)
    ap.add_argument("--delay-ms", type=float, default=0,
                    help="three namespaces, media through a UDP relay in the router that adds this each way")
    ap.add_argument("--loss", type=int, default=0, help="with --delay-ms: %% of UDP to the viewer dropped")
    ap.add_argument("--max-freezes", type=int, default=1,
                    help="freezes allowed over --hold-s (CI's delayed run allows 2: with 100 ms RTT a repair "
                         "at the top of the probing sawtooth can take past Chromium's freeze threshold)")
    ap.add_argument("--debug", action="store_true", help="serve logs each viewer's feedback and estimate")
    ap.add_argument("--playout-delay", default=None, help="serve --playout-delay MIN,MAX (default: serve's auto; with --delay-ms the test then "
                    "checks that serve raised the viewer's playout delay)")
    ap.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    args = ap.parse_args()
    if args.loss and not args.delay_ms:
        ap.error("--loss needs --delay-ms (the router that drops is made only then)")
    tools = {TC: "iproute2", **({NFT: "nftables"} if args.delay_ms else {})}
    chromium, chromedriver = zb.enter_viewer_namespace("network namespaces, veth pairs, tc and nftables", tools)
    art = zb.artifacts_dir(args.artifacts)
    name = "congestion_delay" if args.delay_ms else "congestion_tbf"

    net = DelayedPath(args.delay_ms, args.loss) if args.delay_ms else DirectLink()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # runs the finally below
    serve = driver = None
    port = 8090
    stats_url = f"http://{net.server}:{port}/stats"

    def stats() -> dict:
        return zb.stats_or_empty(stats_url)  # /stats crosses the shaped link too

    def bitrate() -> dict:
        return stats().get("bitrate", {})

    def limit(on: bool) -> None:
        ns, dev = net.shaped
        if on:  # 1 Mbit/s, a bucket of 10 kB, at most 100 ms queued: a DSL/LTE-like bottleneck
            sh(IP, "netns", "exec", ns, TC, "qdisc", "add", "dev", dev, "root", "tbf", "rate",
               f"{args.link_kbit}kbit", "burst", "10kb", "latency", "100ms")
        else:
            sh(IP, "netns", "exec", ns, TC, "qdisc", "del", "dev", dev, "root")

    failures: list[str] = []
    try:
        net.up(art)
        binary = [args.zerohop, "--log-level", "debug", "serve"] if args.debug else args.zerohop
        serve = zb.Serve(binary, ["--source", args.source, "--listen", f"{net.server}:{port}",
                                  "--bitrate", str(args.bitrate), "--renditions", "off", "--status-interval", "1", *net.serve_args,
                                  *(["--playout-delay", args.playout_delay] if args.playout_delay else [])],
                         art / f"{name}.serve.log", wrap=[IP, "netns", "exec", net.server_ns])
        if not serve.wait_url(15):
            return zb.report_failure("serve did not print its URL", serve)
        driver = zb.start_chromium(chromium, chromedriver, art / f"{name}.chromedriver.log")
        driver.get(f"http://{net.server}:{port}/")
        snap = lambda: driver.execute_script(SNAPSHOT_JS)  # noqa: E731

        # Phase 0: playing, and the encoder fills the configured bitrate.
        try:
            zb.wait_until("the page plays", lambda: (snap() or {}).get("state") == "playing"
                          and ((snap() or {}).get("decoded") or 0) > 30, 20)
            zb.wait_until(f"the encoder makes >= 80 % of {args.bitrate} kb/s",
                          lambda: bitrate().get("sent_kbps", 0) >= 0.8 * args.bitrate, 10)
        except AssertionError as e:
            return zb.report_failure(f"{e}; /stats bitrate {bitrate()}, page {snap()}", serve, [driver], art, name)
        print(f"phase 0: {bitrate()}", flush=True)
        if args.delay_ms:
            # The delay applies: Chromium's RTT on the selected pair (its STUN consent checks go through
            # the relay too), and serve's from the receiver reports.
            want = 2 * args.delay_ms
            try:
                zb.wait_until(f"Chromium's ICE round trip >= {want:.0f} ms",
                              lambda: (((snap() or {}).get("pair") or {}).get("rttMs") or 0) >= want, 10, 0.25)
            except AssertionError as e:
                failures.append(f"{e}: the pair {(snap() or {}).get('pair')}")
            viewers = stats().get("viewer_sessions") or [{}]
            print(f"phase 0: the delay applies: Chromium's pair {(snap() or {}).get('pair')}, serve's RTCP RTT "
                  f"{viewers[0].get('rtt_ms')} ms", flush=True)
            if args.playout_delay is None and 2 * args.delay_ms >= 60:
                # serve's --playout-delay auto: the 2 % loss is repaired one 100 ms round trip later, so the
                # viewer's playout delay goes up to cover a repair (that is what keeps freezes away here).
                # Under a 60 ms round trip a repair comes in time and auto leaves it at 0,0 (stream.md).
                raised = lambda: ((stats().get("viewer_sessions") or [{}])[0].get("playout_delay_ms") or [0])[0]  # noqa: E731
                try:
                    zb.wait_until("serve raises the viewer's playout delay", lambda: raised() >= 2 * args.delay_ms, 10, 0.25)
                    print(f"phase 0: playout delay {(stats().get('viewer_sessions') or [{}])[0].get('playout_delay_ms')} ms",
                          flush=True)
                except AssertionError as e:
                    failures.append(f"{e}: {(stats().get('viewer_sessions') or [{}])[0]}")

        # Phase 1: the bottleneck.
        base = snap() or {}
        limit(True)
        t_on = time.monotonic()
        took = args.adapt_s
        try:
            took = zb.wait_until(f"the encoder's last second under the {args.link_kbit} kbit/s link",
                                 lambda: bitrate().get("sent_kbps", 1e9) < args.link_kbit, args.adapt_s, 0.1)
            print(f"phase 1: under the link after {took:.1f} s: {bitrate()}", flush=True)
        except AssertionError as e:
            failures.append(f"{e}: {bitrate()}")
        # The picture is judged as the issue puts it ("within 5 s under the link, then >= 25 fps, <= 1
        # freeze"), from --settle-s (5 s) after the step: the seconds before hold the loss burst of the
        # 2.5 -> 1 Mbit/s step itself (a full queue until the first decreases land). serve answers it with
        # a keyframe and bounded retransmissions (docs/stream.md, "Congestion control"): Chromium counted
        # 1-3 freezes there, the last at most 2.1 s after the step, with or without the added delay
        # (before that, 3-8 freezes up to 6.6 s after it, and the window began at 7 s).
        # What the step costs, every 0.5 s until the judged window: (s since tbf, Chromium's freezeCount,
        # NACKs, PLIs, packets lost, retransmissions received, the target serve's /stats gave the page).
        early = []
        while time.monotonic() < t_on + max(args.settle_s, took):
            e = snap() or {}
            early.append((round(time.monotonic() - t_on, 1),
                          *((e.get(k) or 0) - (base.get(k) or 0) for k in ("freezeCount", "nacks", "plis", "lost", "rtx")),
                          (e.get("bitrate") or {}).get("target_kbps")))
            time.sleep(min(0.5, max(0.0, t_on + max(args.settle_s, took) - time.monotonic())))
        print(f"phase 1, before the judged window (s since tbf, freezes, NACKs, PLIs, lost, retransmitted, "
              f"target): {early}", flush=True)
        s0, w0 = snap(), time.monotonic()
        samples = []
        while time.monotonic() - w0 < args.hold_s:
            time.sleep(1)
            b = bitrate()
            if b:
                samples.append((round(time.monotonic() - t_on, 1), b.get("target_kbps"), round(b.get("sent_kbps", 0)),
                                (snap() or {}).get("freezeCount")))
        s1 = snap()
        fps = ((s1.get("decoded") or 0) - (s0.get("decoded") or 0)) / (time.monotonic() - w0)
        freezes = (s1.get("freezeCount") or 0) - (s0.get("freezeCount") or 0)
        print(f"phase 1: {fps:.1f} fps decoded, {freezes} freeze(s) over {args.hold_s:.0f} s; "
              f"(s since tbf, target, encoded, Chromium's freezeCount): {samples}", flush=True)
        print(f"phase 1: page shows {s1.get('shown')!r} / {s1.get('shownViewer')!r}; {s1.get('bitrate')}", flush=True)
        if fps < 25:
            failures.append(f"only {fps:.1f} fps decoded behind the {args.link_kbit} kbit/s link")
        if freezes > args.max_freezes:
            failures.append(f"{freezes} freezes in {args.hold_s:.0f} s behind the link (allowed: {args.max_freezes})")
        pb = s1.get("bitrate") or {}
        if not pb.get("target_kbps") or pb.get("sent_kbps") is None or "kb/s" not in (s1.get("shown") or "") \
                or "kb/s" not in (s1.get("shownViewer") or ""):
            failures.append(f"the page does not show the target and this viewer's sent bitrate: {pb}, "
                            f"{s1.get('shown')!r}, {s1.get('shownViewer')!r}")
        # The controller probes up to the link and backs off there (a sawtooth); it must stay near the link.
        if any(t is None or t > args.link_kbit * 1.3 for _, t, _, _ in samples):
            failures.append(f"the target went past 1.3 x the link while it was limited: {samples}")

        # Phase 2: the limit lifted.
        limit(False)
        t_off = time.monotonic()
        climb = []  # (s since the lift, target, encoded, this viewer's estimate, its loss %), once a second

        def recovered() -> bool:
            b = bitrate()
            now = round(time.monotonic() - t_off, 1)
            if not climb or now - climb[-1][0] >= 1:
                viewer = ((s := snap()) or {}).get("bitrate") or {}
                climb.append((now, b.get("target_kbps"), round(b.get("sent_kbps", 0)), viewer.get("estimate_kbps"),
                              round(viewer.get("loss_pct") or 0, 1)))
            return b.get("target_kbps", 0) >= 0.9 * args.bitrate

        try:
            took = zb.wait_until(f"the target back at >= 90 % of {args.bitrate} kb/s", recovered, args.recover_s, 0.25)
            print(f"phase 2: target at >= 90 % after {took:.1f} s: {bitrate()}", flush=True)
        except AssertionError as e:
            failures.append(f"{e}: {bitrate()}")
        print(f"phase 2 (s since the lift, target, encoded, viewer's estimate, its loss %): {climb}", flush=True)
        if failures:
            return zb.report_failure("; ".join(failures), serve, [driver], art, name)
        print("PASS: the bitrate followed the viewer's link down and back up")
        return 0
    finally:
        zb.quit_browser(driver)
        if serve:
            serve.stop(5)
        net.down()


if __name__ == "__main__":
    sys.exit(main())
