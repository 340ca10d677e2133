// zerohop viewer, part 1 of 3: the pure part: reads the pixel timecode from a frame's pixels, turns it into
// capture->display latency, and small helpers (percentile). tests/browser/timecode_page_test.py checks
// zerohopReadTimecode against the C++ encoder; web/chart.js and web/viewer.js (the page) use them.
// Plain browser JavaScript, no build step, no libraries; loaded before the other two (index.html).
//
// Timecode geometry (include/zerohop/timecode.hpp, src/core/timecode.cpp):
//   cell = max(4, floor(width / 80)) px square, 76 cells left to right from (0, 0):
//   cells 0..3 sync 1 0 1 0 | 4..47 wall-clock ms mod 2^44, MSB first | 48..67 sequence mod 2^20 |
//   68..75 CRC-8 (poly 0x07, init 0) over the 64 payload bits as 8 big-endian bytes.
//   A 1 is white (luma 235), a 0 black (luma 16).
'use strict';

const ZEROHOP_TC_CELLS = 76;
const ZEROHOP_TC_MS_MOD = 2 ** 44;  // the timecode carries CLOCK_REALTIME ms modulo 2^44
const ZEROHOP_TC_SEQ_MOD = 2 ** 20;

/** Cell edge in pixels for a frame `width` pixels wide (timecodeCellSize in C++). */
function zerohopTimecodeCellSize(width) {
  return Math.max(4, Math.floor(width / 80));
}

/** CRC-8, polynomial 0x07, init 0, no reflection (crc8 in C++). */
function zerohopCrc8(bytes) {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b;
    for (let i = 0; i < 8; ++i) crc = (crc & 0x80) ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

/**
 * Reads the timecode from RGBA pixels whose top-left is the frame's top-left.
 * `image` is an ImageData (or {data, width, height}) at least 76 cells wide; it may be the whole strip
 * (row cell/2 is sampled) or just that one row (height 1). `width` is the width of the video frame,
 * which fixes the cell size. Returns {wallClockMs, sequence, bits} or null if the sync or CRC does not match.
 */
function zerohopReadTimecode(image, width) {
  const cell = zerohopTimecodeCellSize(width);
  if (!image || image.width < cell * ZEROHOP_TC_CELLS || image.height < 1) return null;
  const row = Math.min(Math.floor(cell / 2), image.height - 1);
  const data = image.data;
  const rowBase = row * image.width * 4;
  const margin = Math.floor(cell / 4);
  const bits = new Uint8Array(ZEROHOP_TC_CELLS);
  for (let i = 0; i < ZEROHOP_TC_CELLS; ++i) {
    // Average the middle half of the cell, as the C++ reader does, to tolerate compression ringing.
    let sum = 0, n = 0;
    for (let x = i * cell + margin; x < i * cell + cell - margin; ++x, ++n) {
      const p = rowBase + x * 4;
      sum += 0.299 * data[p] + 0.587 * data[p + 1] + 0.114 * data[p + 2];
    }
    bits[i] = n && sum / n >= 128 ? 1 : 0;
  }
  if (bits[0] !== 1 || bits[1] !== 0 || bits[2] !== 1 || bits[3] !== 0) return null;
  const bytes = new Uint8Array(8);
  for (let i = 0; i < 64; ++i) bytes[i >> 3] = (bytes[i >> 3] << 1) | bits[4 + i];
  let crc = 0;
  for (let i = 0; i < 8; ++i) crc = (crc << 1) | bits[68 + i];
  if (zerohopCrc8(bytes) !== crc) return null;
  let ms = 0;  // 44 bits: exact in a double
  for (let i = 0; i < 44; ++i) ms = ms * 2 + bits[4 + i];
  let seq = 0;
  for (let i = 0; i < 20; ++i) seq = seq * 2 + bits[48 + i];
  return {wallClockMs: ms, sequence: seq, bits};
}

/**
 * Latency from a capture timecode (ms modulo 2^44) to a wall-clock display time (epoch ms), taking the
 * 2^44 wrap into account: the result is the signed difference closest to zero.
 */
function zerohopLatencyMs(displayEpochMs, timecodeMs) {
  let d = (displayEpochMs % ZEROHOP_TC_MS_MOD) - timecodeMs;
  d = ((d % ZEROHOP_TC_MS_MOD) + ZEROHOP_TC_MS_MOD) % ZEROHOP_TC_MS_MOD;
  if (d >= ZEROHOP_TC_MS_MOD / 2) d -= ZEROHOP_TC_MS_MOD;
  return d;
}

const ZEROHOP_NTP_UNIX_OFFSET_MS = 2208988800000;  // 1900-01-01 -> 1970-01-01

/**
 * The capture wall clock (epoch ms) of the frame with RTP timestamp `rtpTimestamp`, from an
 * RTCRtpSynchronizationSource that carries abs-capture-time (`captureTimestamp`: NTP ms of the frame with
 * `source.rtpTimestamp`). The two frames may differ (the source is the newest frame delivered): the RTP
 * clock (90 kHz) carries the difference, as the extension's spec interpolates. null without the extension.
 */
function zerohopCaptureEpochMs(source, rtpTimestamp) {
  if (!source || typeof source.captureTimestamp !== 'number' || typeof source.rtpTimestamp !== 'number'
      || typeof rtpTimestamp !== 'number') return null;
  const dRtp = (rtpTimestamp - source.rtpTimestamp) | 0;  // signed, across the 2^32 wrap
  return source.captureTimestamp - ZEROHOP_NTP_UNIX_OFFSET_MS + dRtp / 90;
}

const ZEROHOP_LUMA_FORMATS = new Set(['I420', 'I420A', 'I422', 'I444', 'NV12']);  // 8-bit luma in plane 0

/**
 * The timecode strip's middle row of `video`'s current frame, read without converting the frame:
 * WebCodecs copies two rows of the luma plane (VideoFrame.copyTo with a rect), where a canvas would
 * convert all of the frame to RGB first (~5 ms a 720p frame on a small CPU). Resolves to an
 * ImageData-like {width, height: 1, data: RGBA} for zerohopReadTimecode (grey from luma, limited range
 * expanded as the canvas would), or rejects where this browser or frame cannot (no VideoFrame, a frame
 * in GPU memory or in a format without an 8-bit luma plane): the caller reads through a canvas then.
 */
async function zerohopReadStripRow(video, width, markerAt) {
  const cell = zerohopTimecodeCellSize(width);
  const stripW = cell * ZEROHOP_TC_CELLS;
  const frame = new VideoFrame(video, {timestamp: 0});  // throws without WebCodecs or a frame
  try {
    if (!ZEROHOP_LUMA_FORMATS.has(frame.format)) throw new Error(`frame format ${frame.format}`);
    const vis = frame.visibleRect || {x: 0, y: 0};
    const row = Math.floor(cell / 2);
    const top = (vis.y + row) & ~1;  // chroma-aligned
    const rect = {x: vis.x & ~1, y: top, width: (stripW + 1) & ~1, height: 2};
    const buffer = new Uint8Array(frame.allocationSize({rect}));
    const layout = await frame.copyTo(buffer, {rect});
    const luma = buffer.subarray(layout[0].offset + (vis.y + row - top) * layout[0].stride);
    const full = frame.colorSpace && frame.colorSpace.fullRange;
    const data = new Uint8ClampedArray(stripW * 4);
    for (let x = 0; x < stripW; ++x) {
      const v = full ? luma[x] : ((luma[x] - 16) * 255) / 219;
      data[4 * x] = data[4 * x + 1] = data[4 * x + 2] = v;
      data[4 * x + 3] = 255;
    }
    const out = {width: stripW, height: 1, data};
    if (markerAt) {  // one luma sample at markerAt (even x, y) of the same frame, 0-255 (web/avsync.js)
      const mrect = {x: vis.x + markerAt.x, y: vis.y + markerAt.y, width: 2, height: 2};
      const mbuf = new Uint8Array(frame.allocationSize({rect: mrect}));
      const mlayout = await frame.copyTo(mbuf, {rect: mrect});
      const v = mbuf[mlayout[0].offset];
      out.marker = full ? v : ((v - 16) * 255) / 219;
    }
    return out;
  } finally {
    frame.close();
  }
}

/** Nearest-rank percentile (as the server's LatencyStats), q in (0, 1]. null for no samples. */
function zerohopPercentile(values, q) {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  const idx = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, idx === 0 ? 0 : idx - 1)];
}
