"""Capture -> wire, per frame, read from the RTP packets themselves.

A sender that stamps abs-capture-time (serve and the native GStreamer baseline do) says in each frame's
first packet when that frame was captured (NTP wall clock). This probe reads every UDP packet leaving
through an interface with the kernel's receive timestamp (SO_TIMESTAMPNS, the same wall clock on one host)
and pairs each frame's capture time with the moment its first and its last (marker) packet left. That
measures the sender from outside, after the encoder, the payloader, webrtcbin, SRTP and the socket, with
neither the sender's own counters nor the browser.

Needs CAP_NET_RAW (root, or root in the test's own network namespace). SRTP leaves the RTP header and its
extensions in the clear, so nothing needs decrypting. Used by scripts/bench-e2e.py --wire.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
NTP_UNIX_OFFSET = 2208988800
PLAUSIBLE_S = 10.0  # an 8-byte extension element is taken as abs-capture-time only within 10 s of now


def abs_capture_time(packet: bytes, now: float) -> float | None:
    """The capture time (Unix seconds) in an RTP packet's one-byte header extensions (RFC 8285), or None.
    abs-capture-time is the element of 8 or 16 bytes whose first 8 are a 64-bit NTP time near `now`; the
    extension id is not needed (and a string element of that length fails the time check)."""
    if len(packet) < 12 or not packet[0] & 0x10:
        return None
    off = 12 + 4 * (packet[0] & 0x0F)
    if len(packet) < off + 4:
        return None
    profile, words = struct.unpack_from("!HH", packet, off)
    if profile != 0xBEDE:
        return None
    ext = packet[off + 4: off + 4 + 4 * words]
    i = 0
    while i < len(ext):
        head = ext[i]
        if head == 0:  # padding
            i += 1
            continue
        ident, length = head >> 4, (head & 0x0F) + 1
        if ident == 15:
            break
        if length in (8, 16) and i + 1 + 8 <= len(ext):
            seconds, fraction = struct.unpack_from("!II", ext, i + 1)
            t = seconds - NTP_UNIX_OFFSET + fraction / 2**32
            if abs(t - now) < PLAUSIBLE_S:
                return t
        i += 1 + length
    return None


class WireProbe:
    """Reads outgoing RTP on `interface` in a thread; samples() gives (capture->first packet,
    capture->last packet) in ms for every frame whose marker packet left since mark()."""

    def __init__(self, interface: str = "lo"):
        self._sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self._sock.bind((interface, 0))
        self._sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self._sock.settimeout(0.5)
        self._frames: dict[tuple[int, int], list] = {}  # (udp source port, rtp timestamp) -> [capture, first, last]
        self._done: dict[tuple[int, int], None] = {}  # frames already counted: a retransmission is not a new frame
        self._samples: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rtp-wire-probe", daemon=True)
        self._thread.start()

    def mark(self) -> int:
        with self._lock:
            return len(self._samples)

    def samples(self, since: int = 0) -> list[tuple[float, float]]:
        with self._lock:
            return list(self._samples[since:])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self._sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data, ancillary, _, address = self._sock.recvmsg(2048, 64)
            except (socket.timeout, OSError):
                continue
            if address[2] != PACKET_OUTGOING:  # loopback shows each packet twice
                continue
            sent = next((s + ns / 1e9 for level, kind, d in ancillary if kind == SO_TIMESTAMPNS
                         for s, ns in [struct.unpack("qq", d[:16])]), time.time())
            self._packet(data, sent)

    def _packet(self, frame: bytes, sent: float) -> None:
        ip = frame[14:]  # Ethernet header: loopback and veth both carry one
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
            return
        udp = ip[(ip[0] & 0x0F) * 4:]
        rtp = udp[8:]
        if len(rtp) < 12 or rtp[0] >> 6 != 2 or not 96 <= rtp[1] & 0x7F <= 127:  # RTP, dynamic types only
            return
        port = struct.unpack_from("!H", udp)[0]
        key = (port, struct.unpack_from("!I", rtp, 4)[0])
        if key in self._done:
            return
        entry = self._frames.get(key)
        if entry is None:
            if len(self._frames) > 256:  # frames whose marker never came (lost in the sender): forget
                for old in list(self._frames)[:128]:
                    del self._frames[old]
            entry = self._frames[key] = [None, sent, sent]
        entry[2] = sent
        if entry[0] is None:
            entry[0] = abs_capture_time(rtp, sent)
        if rtp[1] & 0x80:  # marker: the frame's last packet
            del self._frames[key]
            self._done[key] = None
            if len(self._done) > 512:
                for old in list(self._done)[:256]:
                    del self._done[old]
            if entry[0] is not None:
                with self._lock:
                    self._samples.append(((entry[1] - entry[0]) * 1000.0, (entry[2] - entry[0]) * 1000.0))
