#!/usr/bin/python3
"""Behind a NAT, only through TURN: three network namespaces made by this test, a viewer
(this process and headless Chromium), a router that masquerades the viewer (nftables) and drops every
UDP datagram between viewer and server except those to and from the TURN port, and a server namespace
with coturn (REST API credentials from a shared secret) and `zerohop serve --ice-server turn://...
--turn-secret ...`. The viewer page gets the TURN server from serve's Link headers, plays, and getStats'
selected candidate pair is a relay one on the viewer's side.

Asserts: the page plays (>= 20 fps presented over 4 s, timecodes read from the frames), the selected
pair's local candidate is "relay", serve logged no "no relay candidate". With --tcp also all UDP between
viewer and server is dropped and the page is given only `turn:...?transport=tcp` (coturn over TCP).
The namespaces are removed on every way out (finally, SIGTERM, SIGINT).

usage: test_turn_relay.py [--tcp] [--without-turn] [--source test:640x360@30] ZEROHOP_BINARY
(--without-turn serves without the TURN server and must FAIL: the check that only the relay can carry media)
exit: 0 pass, 1 fail, 77 skipped (not root, no coturn/nft/chromium)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zerohop_browser as zb  # noqa: E402

IP = shutil.which("ip") or "/usr/sbin/ip"
NFT = shutil.which("nft") or "/usr/sbin/nft"
TURNSERVER = shutil.which("turnserver") or "/usr/bin/turnserver"
SECRET = "zerohop-test-secret"
VIEWER, ROUTER_V, ROUTER_S, SERVER = "10.91.0.2", "10.91.0.1", "10.92.0.1", "10.92.0.2"
TURN_PORT = 3478

SNAPSHOT_JS = """
const z = window.zerohop;
return z ? {state: z.state, error: z.error, framesPresented: z.framesPresented, timecodesRead: z.timecodesRead,
            pair: z.candidatePair, iceServers: z.iceServers, decoded: z.webrtc && z.webrtc.framesDecoded} : null;
"""


def sh(*cmd: str) -> None:
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")


class Namespaces:
    """The router and server namespaces (named, so `ip netns exec` reaches them); the viewer is this
    process's own private namespace, which goes away with it."""

    def __init__(self) -> None:
        tag = str(os.getpid())
        self.router, self.server = f"zh-rt-{tag}", f"zh-srv-{tag}"
        self.made: list[str] = []

    def up(self, udp_to_turn_only: bool, tcp_only: bool) -> None:
        for ns in (self.router, self.server):
            sh(IP, "netns", "add", ns)
            self.made.append(ns)
        r, s = self.router, self.server
        sh(IP, "link", "add", "zhv0", "type", "veth", "peer", "name", "zhr0", "netns", r)
        sh(IP, "addr", "add", f"{VIEWER}/24", "dev", "zhv0")
        sh(IP, "link", "set", "zhv0", "up")
        sh(IP, "route", "add", "default", "via", ROUTER_V)
        sh(IP, "-n", r, "link", "add", "zhr1", "type", "veth", "peer", "name", "zhs0", "netns", s)
        for cmd in (["addr", "add", f"{ROUTER_V}/24", "dev", "zhr0"], ["addr", "add", f"{ROUTER_S}/24", "dev", "zhr1"],
                    ["link", "set", "zhr0", "up"], ["link", "set", "zhr1", "up"], ["link", "set", "lo", "up"]):
            sh(IP, "-n", r, *cmd)
        for cmd in (["addr", "add", f"{SERVER}/24", "dev", "zhs0"], ["link", "set", "zhs0", "up"],
                    ["link", "set", "lo", "up"]):
            sh(IP, "-n", s, *cmd)
        sh(IP, "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # The NAT, and the firewall that leaves TURN as the only way for UDP (or, with tcp_only, TCP only).
        udp_rule = "meta l4proto udp drop" if tcp_only else \
            f"udp dport {TURN_PORT} accept; udp sport {TURN_PORT} accept; meta l4proto udp drop"
        ruleset = f"""
table ip zh {{
  chain forward {{ type filter hook forward priority 0; policy accept; {udp_rule}; }}
  chain post {{ type nat hook postrouting priority 100; oifname "zhr1" ip saddr 10.91.0.0/24 masquerade; }}
}}
"""
        subprocess.run([IP, "netns", "exec", r, NFT, "-f", "-"], input=ruleset, text=True, check=True,
                       capture_output=True)

    def down(self) -> None:
        while self.made:
            subprocess.run([IP, "netns", "del", self.made.pop()], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zerohop")
    ap.add_argument("--source", default="test:640x360@30")
    ap.add_argument("--tcp", action="store_true", help="drop all UDP: TURN over TCP only")
    ap.add_argument("--without-turn", action="store_true",
                    help="serve without --ice-server: the check that this setup needs the relay (must FAIL)")
    ap.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    args = ap.parse_args()
    chromium, chromedriver = zb.enter_viewer_namespace("network namespaces, veth pairs and nftables",
                                                       {TURNSERVER: "coturn", NFT: "nftables"})
    art = zb.artifacts_dir(args.artifacts)

    nets = Namespaces()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # runs the finally below
    turn = serve = driver = None
    failures: list[str] = []
    try:
        nets.up(udp_to_turn_only=True, tcp_only=args.tcp)
        turn = subprocess.Popen(
            [IP, "netns", "exec", nets.server, TURNSERVER, "-n", "--no-cli", "--no-tls", "--no-dtls",
             f"--listening-ip={SERVER}", f"--relay-ip={SERVER}", f"--listening-port={TURN_PORT}",
             "--use-auth-secret", f"--static-auth-secret={SECRET}", "--realm=zerohop", "--min-port=49152",
             "--max-port=49252", "--log-file=stdout", "--simple-log", "--verbose"],
            stdout=open(art / "turn_relay.coturn.log", "wb"), stderr=subprocess.STDOUT)
        port = 8090
        transport = "?transport=tcp" if args.tcp else ""
        ice = [] if args.without_turn else ["--ice-server", f"turn://{SERVER}:{TURN_PORT}{transport}",
                                            "--turn-secret", SECRET]
        serve = zb.Serve(args.zerohop, ["--source", args.source, "--listen", f"{SERVER}:{port}", *ice,
                                        "--keyint", "30"],
                         art / "turn_relay.serve.log", wrap=[IP, "netns", "exec", nets.server])
        if not serve.wait_url(15):
            return zb.report_failure("serve did not print its URL", serve)
        driver = zb.start_chromium(chromium, chromedriver, art / "turn_relay.chromedriver.log")
        t0 = time.monotonic()
        driver.get(f"http://{SERVER}:{port}/")  # over TCP through the NAT
        snap = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            snap = driver.execute_script(SNAPSHOT_JS)
            if snap and snap["state"] == "playing" and snap["pair"] and (snap["decoded"] or 0) > 0:
                break
            time.sleep(0.2)
        print(f"after {time.monotonic() - t0:.1f} s: {snap}", flush=True)
        if not snap or snap["state"] != "playing":
            sdp = driver.execute_script("return window.zerohop.sdp") or {}
            cands = [l for l in (sdp.get("offer", "") + sdp.get("answer", "")).splitlines() if "candidate" in l]
            failures.append(f"the page did not play through the relay: {snap}; candidates: {cands}")
        else:
            f0, r0, w0 = snap["framesPresented"], snap["timecodesRead"], time.monotonic()
            time.sleep(4)
            s1 = driver.execute_script(SNAPSHOT_JS)
            fps = (s1["framesPresented"] - f0) / (time.monotonic() - w0)
            read = s1["timecodesRead"] - r0
            print(f"presented {fps:.1f} fps, timecodes read {read}, pair {s1['pair']}, ice servers {s1['iceServers']}")
            if fps < 20:
                failures.append(f"only {fps:.1f} fps presented through the relay")
            if read < 40:
                failures.append(f"only {read} timecodes read in 4 s")
            pair = s1["pair"] or {}
            if pair.get("local") != "relay":
                failures.append(f"the selected candidate pair is not relayed on the viewer's side: {pair}")
            if args.tcp and pair.get("relayProtocol") != "tcp":
                failures.append(f"the relay is not reached over TCP: {pair}")
        if "no relay candidate" in serve.output():
            failures.append("serve logged that the TURN server gave no relay candidate")
        if failures:
            return zb.report_failure("; ".join(failures), serve, [driver], art, "turn_relay")
        print("PASS: played through the TURN relay" + (" over TCP" if args.tcp else ""))
        return 0
    finally:
        zb.quit_browser(driver)
        if serve:
            serve.stop(5)
        if turn:
            turn.terminate()
            try:
                turn.wait(5)
            except subprocess.TimeoutExpired:
                turn.kill()
        nets.down()


if __name__ == "__main__":
    sys.exit(main())
