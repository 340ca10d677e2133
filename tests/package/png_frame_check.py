#!/usr/bin/env python3
"""png_frame_check.py OUT.png RAW READER_OUTPUT: the PNG a texture reader drew equals the frame it drew.

READER_OUTPUT holds the reader's `drawn ...` line (sequence and timecode read from the ring by the CPU,
size, format, colour). Checks: (1) the PNG's timecode strip (src/core/timecode.cpp's geometry) reads
back, with the CRC, to the frame's timecode; (2) every pixel equals the CPU's conversion of RAW (the
frame's planes as the reader read them from the ring) within 2 levels per channel. Exit 0 or 1 with why.
Standard library and numpy only (PNG: 8-bit RGB, filter 0 rows, what examples/*/png_writer writes).
"""
import re
import struct
import sys
import zlib

import numpy as np


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]:
            raise AssertionError(f"bad CRC in chunk {kind!r}")
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 2), f"expected 8-bit RGB, got depth {depth} colour type {colour}"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * 3)
    assert (rows[:, 0] == 0).all(), "only filter-0 rows are read here"
    return rows[:, 1:].reshape(height, width, 3).astype(np.int32)


def crc8(data):
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def read_timecode(rgb):
    """(ms, seq) from the strip, on the picture's luma; None when the sync or CRC is wrong."""
    luma = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
    cell = max(4, rgb.shape[1] // 80)
    bits = [int(luma[cell // 2, i * cell + cell // 4:i * cell + cell - cell // 4].mean() > 128) for i in range(76)]
    if bits[:4] != [1, 0, 1, 0]:
        return None
    payload = int("".join(map(str, bits[4:68])), 2)
    crc = int("".join(map(str, bits[68:76])), 2)
    if crc8(payload.to_bytes(8, "big")) != crc:
        return None
    return payload >> 20, payload & ((1 << 20) - 1)


def yuv_to_rgb(raw, width, height, fmt, bt709, full):
    y_size, c_size = width * height, (width // 2) * (height // 2)
    buf = np.frombuffer(raw, np.uint8)
    y = buf[:y_size].reshape(height, width).astype(np.float64)
    if fmt == "i420":
        u = buf[y_size:y_size + c_size].reshape(height // 2, width // 2)
        v = buf[y_size + c_size:y_size + 2 * c_size].reshape(height // 2, width // 2)
    elif fmt == "nv12":
        uv = buf[y_size:y_size + 2 * c_size].reshape(height // 2, width // 2, 2)
        u, v = uv[..., 0], uv[..., 1]
    else:
        raise AssertionError(f"format {fmt} is not compared here")
    u = np.repeat(np.repeat(u, 2, 0), 2, 1).astype(np.float64)
    v = np.repeat(np.repeat(v, 2, 0), 2, 1).astype(np.float64)
    c = y / 255 if full else (y - 16) / 219
    d = (u - 128) / (255 if full else 224)
    e = (v - 128) / (255 if full else 224)
    kr, kb = (0.2126, 0.0722) if bt709 else (0.299, 0.114)
    r = c + 2 * (1 - kr) * e
    b = c + 2 * (1 - kb) * d
    g = (c - kr * r - kb * b) / (1 - kr - kb)
    return np.rint(np.clip(np.stack([r, g, b], -1), 0, 1) * 255).astype(np.int32)


def main():
    png, raw, out = sys.argv[1:4]
    text = open(out).read()
    m = re.search(r"drawn seq=(\d+) intact=1 timecode_seq=(-?\d+) timecode_ms=(-?\d+) overrun=\d+ "
                  r"size=(\d+)x(\d+) format=(\w+) matrix=(\w+) range=(\w+)", text)
    if not m:
        print("FAIL: no intact 'drawn ...' line in the reader's output", file=sys.stderr)
        return 1
    tc_seq, tc_ms, width, height = int(m[2]), int(m[3]), int(m[4]), int(m[5])
    rgb = read_png(png)
    if rgb.shape != (height, width, 3):
        print(f"FAIL: PNG is {rgb.shape[1]}x{rgb.shape[0]}, the frame {width}x{height}", file=sys.stderr)
        return 1
    tc = read_timecode(rgb)
    if tc is None or tc != (tc_ms, tc_seq):
        print(f"FAIL: the PNG's timecode reads {tc}, the frame's (ms, seq) is {(tc_ms, tc_seq)}", file=sys.stderr)
        return 1
    want = yuv_to_rgb(open(raw, "rb").read(), width, height, m[6], m[7] == "bt709", m[8] == "full")
    diff = np.abs(rgb - want)
    if diff.max() > 2:
        y, x, ch = np.unravel_index(diff.argmax(), diff.shape)
        print(f"FAIL: pixel ({x},{y}) channel {ch}: PNG {rgb[y, x]}, frame converted {want[y, x]} "
              f"({(diff > 2).sum()} values differ by more than 2)", file=sys.stderr)
        return 1
    print(f"png matches the frame: timecode seq {tc_seq} ms {tc_ms}, {width}x{height} {m[6]}, "
          f"max difference {diff.max()}, mean {diff.mean():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
