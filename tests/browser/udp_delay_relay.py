#!/usr/bin/python3
"""A user-space UDP relay that delays every datagram by --delay-ms (the kernel here has no netem).

Listens on --listen ADDR:PORT; what a client sends there goes to --target ADDR:PORT after the delay,
from a socket of its own per client address, and what the target answers on that socket goes back to
the client, from the listening address, after the delay too. So an RTT through the relay is the path's
plus 2 x --delay-ms. Each datagram leaves at its arrival time + the delay, never earlier (one thread, a
heap of due times: no drift from a sleep per packet, and order kept within a direction). Prints
"ready" on stdout once it listens; on exit, what it relayed on stderr.

Ends on SIGTERM or SIGINT, and when the process that started it dies (PR_SET_PDEATHSIG), so a killed
test leaves no relay behind.

usage: udp_delay_relay.py --listen 10.94.0.1:40000 --target 10.95.0.2:40000 [--delay-ms 50]
"""

from __future__ import annotations

import argparse
import ctypes
import heapq
import itertools
import os
import selectors
import signal
import socket
import sys
import time


def address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not ADDR:PORT")
    return host, int(port)


def die_with_parent() -> None:
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl
        sys.exit(1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", type=address, required=True)
    ap.add_argument("--target", type=address, required=True)
    ap.add_argument("--delay-ms", type=float, default=50)
    args = ap.parse_args()
    die_with_parent()
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))

    delay = args.delay_ms / 1000
    listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listen.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    listen.bind(args.listen)
    listen.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listen, selectors.EVENT_READ, None)
    towards_target: dict[tuple[str, int], socket.socket] = {}  # client address -> its socket to the target
    due: list[tuple[float, int, socket.socket, bytes, tuple[str, int]]] = []  # (when, order, from, data, to)
    order = itertools.count()
    relayed = {"to target": 0, "to client": 0, "send errors": 0}
    print("ready", flush=True)

    while not stop:
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, _, sock, data, to = heapq.heappop(due)
            try:
                sock.sendto(data, to)
            except OSError:
                relayed["send errors"] += 1
        timeout = max(0.0, due[0][0] - now) if due else 0.5
        try:
            ready = sel.select(timeout)
        except InterruptedError:
            continue
        for key, _ in ready:
            sock = key.fileobj
            while True:
                try:
                    data, sender = sock.recvfrom(65536)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:  # e.g. ICMP port unreachable reported on the target socket
                    break
                when = time.monotonic() + delay
                if sock is listen:
                    up = towards_target.get(sender)
                    if up is None:
                        up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        up.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                        up.bind(("0.0.0.0", 0))
                        up.setblocking(False)
                        towards_target[sender] = up
                        sel.register(up, selectors.EVENT_READ, sender)
                    heapq.heappush(due, (when, next(order), up, data, args.target))
                    relayed["to target"] += 1
                else:
                    heapq.heappush(due, (when, next(order), listen, data, key.data))
                    relayed["to client"] += 1
    print(f"udp_delay_relay: relayed {relayed} for {len(towards_target)} client(s)", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
