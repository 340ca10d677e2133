#!/usr/bin/python3
"""rtp_wire_probe's packet reading against packets built here by RFC 3550 / RFC 8285: the abs-capture-time
among other one-byte elements and padding, CSRCs before the extension, no extension, a two-byte profile, a
string element of 8 bytes (refused: not a time near now), and the 16-byte form with its offset."""

import struct
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rtp_wire_probe import NTP_UNIX_OFFSET, WireProbe, abs_capture_time  # noqa: E402

NOW = 1_796_000_000.25  # 2026-12, Unix seconds


def ntp(t: float) -> bytes:
    seconds = int(t) + NTP_UNIX_OFFSET
    return struct.pack("!II", seconds, int((t - int(t)) * 2**32))


def rtp(elements: bytes, csrcs: int = 0, profile: int = 0xBEDE, marker: bool = False, ts: int = 9000) -> bytes:
    if len(elements) % 4:
        elements += b"\0" * (4 - len(elements) % 4)
    head = bytes([0x90 | csrcs, (0x80 if marker else 0) | 96]) + struct.pack("!HII", 1, ts, 0x1234)
    return head + b"\0\0\0\1" * csrcs + struct.pack("!HH", profile, len(elements) // 4) + elements + b"payload"


class AbsCaptureTime(unittest.TestCase):
    def test_among_other_elements_and_padding(self):
        playout = bytes([(3 << 4) | 2]) + b"\x00\x00\x00"  # id 3, 3 bytes
        twcc = bytes([(5 << 4) | 1]) + b"\x00\x07"  # id 5, 2 bytes
        act = bytes([(4 << 4) | 7]) + ntp(NOW - 0.0125)  # id 4, 8 bytes
        packet = rtp(playout + b"\0" + twcc + act)
        self.assertAlmostEqual(abs_capture_time(packet, NOW), NOW - 0.0125, places=6)

    def test_after_csrcs(self):
        packet = rtp(bytes([(2 << 4) | 7]) + ntp(NOW), csrcs=2)
        self.assertAlmostEqual(abs_capture_time(packet, NOW), NOW, places=6)

    def test_sixteen_byte_form(self):
        packet = rtp(bytes([(2 << 4) | 15]) + ntp(NOW - 1) + b"\0" * 8)
        self.assertAlmostEqual(abs_capture_time(packet, NOW), NOW - 1, places=6)

    def test_none_without_it(self):
        self.assertIsNone(abs_capture_time(rtp(bytes([(3 << 4) | 2]) + b"\0\0\0"), NOW))
        no_extension = bytes([0x80, 96]) + struct.pack("!HII", 1, 9000, 0x1234) + b"payload"
        self.assertIsNone(abs_capture_time(no_extension, NOW))
        self.assertIsNone(abs_capture_time(rtp(bytes([2, 8]) + ntp(NOW), profile=0x1000), NOW))
        self.assertIsNone(abs_capture_time(b"\x90\x60", NOW))

    def test_a_string_of_eight_bytes_is_not_a_time(self):
        mid = bytes([(1 << 4) | 7]) + b"video0ab"
        self.assertIsNone(abs_capture_time(rtp(mid), NOW))


class Frames(unittest.TestCase):
    """_packet() pairs a frame's first and marker packets; a retransmission afterwards is not a new frame."""

    def probe(self):
        p = WireProbe.__new__(WireProbe)  # no socket: packets are fed by hand
        p._frames, p._done, p._samples = {}, {}, []
        import threading
        p._lock = threading.Lock()
        return p

    def frame(self, packet: bytes, port: int = 5000) -> bytes:
        udp = struct.pack("!HHHH", port, 6000, 8 + len(packet), 0) + packet
        ip = bytes([0x45, 0]) + struct.pack("!H", 20 + len(udp)) + b"\0" * 5 + bytes([17]) + b"\0" * 10
        return b"\0" * 14 + ip + udp

    def test_first_and_last_packet(self):
        p = self.probe()
        act = bytes([(4 << 4) | 7]) + ntp(NOW)
        p._packet(self.frame(rtp(act)), NOW + 0.010)
        p._packet(self.frame(rtp(b"", marker=True)), NOW + 0.012)
        p._packet(self.frame(rtp(act, marker=True)), NOW + 0.500)  # a retransmission of the same frame
        self.assertEqual(len(p.samples()), 1)
        first, last = p.samples()[0]
        self.assertAlmostEqual(first, 10.0, places=2)
        self.assertAlmostEqual(last, 12.0, places=2)


if __name__ == "__main__":
    unittest.main()
