// zerohop viewer: plays the WHEP stream, reads the pixel timecode from every presented frame and
// shows capture->display latency next to the server's per-stage figures, as a live chart.
//
// Plain browser JavaScript, no build step, no libraries. The first part (zerohopReadTimecode and its
// helpers) is pure and is what tests/browser/timecode_page_test.py checks against the C++ encoder;
// the rest drives the page and only starts when the page has a <video id="video">.
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
async function zerohopReadStripRow(video, width) {
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
    return {width: stripW, height: 1, data};
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

// ---------------------------------------------------------------------------------------------
// The page.

const ZEROHOP_LATENCY_WINDOW_MS = 5000;   // live p50/p99 window
const ZEROHOP_KEEP_SAMPLES = 900;         // window.zerohop.latencyMs keeps this many (~30 s at 30 fps)
const ZEROHOP_FREEZE_GAP_MS = 500;        // a gap this long between presented frames is a freeze
const ZEROHOP_STALL_RECONNECT_MS = 6000;  // no frame for this long while connected: reconnect
const ZEROHOP_FIRST_FRAME_TIMEOUT_MS = 15000;  // connected but nothing shown for this long: reconnect
const ZEROHOP_CHART_SECONDS = 60;
const ZEROHOP_WEBCODECS_MISSES_IN_A_ROW = 10;  // passing WebCodecs errors before the canvas takes over
const ZEROHOP_ABS_CAPTURE_TIME_URI = 'http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time';

// What the browser tests read. Updated in place while the page runs.
window.zerohop = {
  state: 'idle',
  error: null,
  connects: 0,            // connection attempts
  framesPresented: 0,     // frames the compositor presented (metadata.presentedFrames, summed over connections)
  frameCallbacks: 0,      // requestVideoFrameCallback invocations (one timecode read attempt each)
  timecodesRead: 0,
  timecodeErrors: 0,
  stripReadMisses: 0,     // frames WebCodecs could not take (InvalidStateError; see readStripRow)
  staleReads: 0,          // timecodes read from a newer frame than the callback's (late callback): no sample
  lastTimecode: null,     // {wallClockMs, sequence}
  sequenceGaps: 0,        // frames missing between consecutive read timecodes
  latencyMs: [],          // last ZEROHOP_KEEP_SAMPLES capture->display latencies (confirmed samples)
  latencyCount: 0,        // samples ever pushed to latencyMs (to fetch only new ones)
  latencyP50: null,       // over the last 5 s
  latencyP99: null,
  fps: 0,
  freezes: 0,             // gaps > 500 ms between presented frames seen by the page
  longGaps: [],           // [{at: performance.now(), ms}] for every gap > 200 ms
  maxGapMs: 0,
  firstFrameAt: null,     // performance.now() of the first presented frame
  timeToFirstFrameMs: null,  // this connection: POST /whep -> its first frame on screen (expectedDisplayTime)
  timesToFirstFrame: [],     // the same for every connection so far
  answerMs: null,         // this connection: POST /whep -> its answer
  sessionId: null,        // the first 8 hex digits of this session's id (how /stats names it)
  serverStart: null,      // this session in /stats: {connect_ms, first_frame_ms} from the server's view of the POST
  absCaptureMs: [],       // capture->display from abs-capture-time (RTP header extension), last ZEROHOP_KEEP_SAMPLES
  absCaptureCount: 0,
  absCaptureP50: null,    // over the last 5 s
  captureToReceiveP50: null,  // capture (abs-capture-time) -> the frame's last packet received, last 5 s
  receiveToPresentationP50: null,  // received -> handed to the compositor (rVFC presentationTime), last 5 s
  presentationToDisplayP50: null,  // handed to the compositor -> expected on screen (expectedDisplayTime), last 5 s
  sdp: null,              // {offer, answer} of the current session, for diagnosis
  iceState: null,         // RTCPeerConnection connectionState / iceConnectionState
  iceServers: [],         // the STUN/TURN URLs the server gave (OPTIONS /whep Link headers)
  candidatePair: null,    // the selected ICE pair: {local, remote} candidate types ('relay': via TURN), rttMs
  lastStats: null,        // last /stats JSON (of the camera played, when the server has several)
  camera: null,           // ?camera=NAME: the camera played (POST /whep/NAME); null = the first (/whep)
  cameras: [],            // [{name, state}] from /stats when the server has several cameras
  webrtc: null,           // inbound-rtp video figures from getStats()
  audio: null,            // inbound-rtp audio figures from getStats() (?audio=1 and a server with sound)
  rendition: null,        // from /stats, with a ladder (serve --renditions): {rung, rungs, width, height, kbps, switches} of the rung this viewer takes
  layerUrl: null,         // this session's layer URL (the 201's Link rel=urn:ietf:params:whep:ext:core:layer), with a ladder
  chooseRendition: null,  // async (rung | null) => HTTP status: the highest rung to take (null: automatic), as the page's selector does
  bitrate: null,          // from /stats: {target_kbps, encoded_kbps} of the encode it receives (H.264 or VP8), {sent_kbps, estimate_kbps, loss_pct, rtt_ms} to this viewer
  playback: null,         // video.getVideoPlaybackQuality()
  history: [],            // per-second chart rows
};

(function startViewer() {
  const video = document.getElementById('video');
  if (!video || window.ZEROHOP_NO_AUTOSTART) return;

  const zh = window.zerohop;
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const serverBase = (params.get('server') || '').replace(/\/+$/, '');  // '' = this page's origin
  // ?camera=NAME plays that camera of a server with several (POST /whep/NAME); without it, the first.
  zh.camera = params.get('camera') || null;
  const whepUrl = new URL(serverBase + '/whep' + (zh.camera ? '/' + encodeURIComponent(zh.camera) : ''),
                          location.href).href;
  // serve --whep-token T: open the page as /?token=T; the token goes in the WHEP requests only.
  const authHeaders = params.get('token') ? {'Authorization': 'Bearer ' + params.get('token')} : {};
  const statsUrl = new URL(serverBase + '/stats', location.href).href;

  // --- connection ----------------------------------------------------------------------------
  let pc = null;
  let sessionUrl = null;
  let generation = 0;         // bumps on every (re)connect and stop; stale async work checks it
  let retryTimer = null;
  let retryDelayMs = 1000;
  let disconnectTimer = null;
  let stopped = false;
  let connectStartedAt = 0;
  let receiver = null;        // the video RTCRtpReceiver (getSynchronizationSources: abs-capture-time)
  let firstFrameAfter = null; // performance.now() of this connection's POST, until its first frame

  function setState(state, detail) {
    zh.state = state;
    const badge = $('state');
    badge.textContent = detail ? `${state}: ${detail}` : state;
    badge.dataset.state = state;
  }

  function showMessage(text) {
    const m = $('message');
    m.textContent = text || '';
    m.hidden = !text;
  }

  // The layer URL among a 201's Link headers (fetch joins them with ", "), absolute; null without one.
  function layerLink(header, base) {
    const m = /<([^>]+)>\s*;\s*rel="urn:ietf:params:whep:ext:core:layer"/.exec(header || '');
    return m ? new URL(m[1], base).href : null;
  }

  // The viewer's own choice of its highest rendition: POST {"encodingId":"N"} (or {} for automatic) to
  // its layer URL; the server moves it at that rung's next keyframe, on the same track.
  zh.chooseRendition = async (rung) => {
    if (!zh.layerUrl) return 0;
    const body = rung === null || rung === undefined ? {} : {encodingId: String(rung)};
    const resp = await fetch(zh.layerUrl, {method: 'POST', headers: {'Content-Type': 'application/json', ...authHeaders},
                                          body: JSON.stringify(body)});
    return resp.status;
  };
  $('rendition-choice').addEventListener('change', (e) => {
    const v = e.target.value;
    zh.chooseRendition(v === 'auto' ? null : Number(v)).catch(() => {});
  });

  function deleteSession(keepalive) {
    if (!sessionUrl) return;
    const url = sessionUrl;
    sessionUrl = null;
    fetch(url, {method: 'DELETE', keepalive, headers: authHeaders}).catch(() => {});
  }

  function teardown(keepalive) {
    clearTimeout(disconnectTimer);
    deleteSession(keepalive);
    zh.layerUrl = null;
    if (pc) {
      pc.ontrack = pc.onconnectionstatechange = null;
      pc.close();
      pc = null;
    }
    video.srcObject = null;
    receiver = null;
    firstFrameAfter = null;
    frameState.lastPresented = 0;
    frameState.lastNow = null;
    pending = null;
  }

  function waitIceGathering(conn, timeoutMs) {
    if (conn.iceGatheringState === 'complete') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        conn.removeEventListener('icegatheringstatechange', check);
        clearTimeout(timer);
        resolve();
      };
      const check = () => { if (conn.iceGatheringState === 'complete') done(); };
      const timer = setTimeout(done, timeoutMs);
      conn.addEventListener('icegatheringstatechange', check);
    });
  }

  // Chromium offers abs-capture-time only when asked (it is "stopped" by default): the server then stamps
  // each frame with its capture wall clock, which getSynchronizationSources() reports as captureTimestamp.
  function offerAbsCaptureTime(transceiver) {
    if (!transceiver.getHeaderExtensionsToNegotiate || !transceiver.setHeaderExtensionsToNegotiate) return;
    try {
      const exts = transceiver.getHeaderExtensionsToNegotiate();
      for (const e of exts) if (e.uri === ZEROHOP_ABS_CAPTURE_TIME_URI && e.direction === 'stopped') e.direction = 'recvonly';
      transceiver.setHeaderExtensionsToNegotiate(exts);
    } catch (e) {
      console.warn('zerohop: cannot ask for abs-capture-time:', e);
    }
  }

  // The server's STUN/TURN servers (serve --ice-server), from the Link headers of OPTIONS /whep
  // (RFC 9725 §4.6: <turn:host:port?transport=udp>; rel="ice-server"; username="..."; credential="...").
  // Asked before the offer: the offer carries every candidate, relayed ones included.
  function parseIceServerLinks(header) {
    const servers = [];
    // Split on commas outside <...> and quoted strings (several Link headers arrive joined by ", ").
    const links = [];
    let cur = '', inUri = false, inQuote = false;
    for (let i = 0; i < header.length; i++) {
      const ch = header[i];
      if (inQuote && ch === '\\') { cur += ch + (header[++i] ?? ''); continue; }
      if (ch === '"' && !inUri) inQuote = !inQuote;
      else if (!inQuote && ch === '<') inUri = true;
      else if (!inQuote && ch === '>') inUri = false;
      if (ch === ',' && !inUri && !inQuote) { links.push(cur); cur = ''; continue; }
      cur += ch;
    }
    if (cur.trim()) links.push(cur);
    for (const link of links) {
      const m = link.match(/^\s*<([^>]*)>(.*)$/);
      if (!m) continue;
      const params = {};
      for (const p of m[2].matchAll(/;\s*([A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g)) {
        params[p[1].toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3];
      }
      if (params.rel !== 'ice-server') continue;
      const server = {urls: m[1]};
      if (params.username !== undefined) server.username = params.username;
      if (params.credential !== undefined) server.credential = params.credential;
      servers.push(server);
    }
    return servers;
  }

  async function fetchIceServers() {
    try {
      const resp = await fetch(whepUrl, {method: 'OPTIONS', headers: authHeaders});
      return parseIceServerLinks(resp.headers.get('Link') || '');
    } catch (err) {
      return [];  // no ICE servers: host candidates only, as before
    }
  }

  async function connect() {
    const gen = ++generation;
    clearTimeout(retryTimer);
    stopped = false;
    teardown(false);
    zh.connects++;
    zh.error = null;
    setState('connecting');
    showMessage('connecting…');
    connectStartedAt = performance.now();
    try {
      const iceServers = await fetchIceServers();
      if (gen !== generation) return;
      zh.iceServers = iceServers.map((x) => x.urls);
      const conn = new RTCPeerConnection({iceServers});
      pc = conn;
      const transceiver = conn.addTransceiver('video', {direction: 'recvonly'});
      offerAbsCaptureTime(transceiver);
      // ?audio=1: offer to receive sound too (serve --audio); it arrives in the video's MediaStream, so
      // the browser plays both in sync. A server without sound answers the audio section rejected.
      if (params.get('audio') === '1') conn.addTransceiver('audio', {direction: 'recvonly'});
      conn.ontrack = (ev) => {
        if (ev.track.kind === 'audio') {  // the sound (?audio=1): it plays with the picture's MediaStream
          const stream = ev.streams && ev.streams[0];
          if (!video.srcObject && stream) video.srcObject = stream;
          else if (video.srcObject && !video.srcObject.getTrackById(ev.track.id)) video.srcObject.addTrack(ev.track);
          zh.audioTrackInVideoStream = !!(stream && video.srcObject === stream);
          return;
        }
        // Live view: ask the receiver for the smallest jitter buffer it will run (?jitter=ms overrides;
        // the browser still grows it when the network jitters).
        const target = Number(params.get('jitter') ?? 0);
        receiver = ev.receiver;
        if ('jitterBufferTarget' in ev.receiver) ev.receiver.jitterBufferTarget = target;
        if ('playoutDelayHint' in ev.receiver) ev.receiver.playoutDelayHint = target / 1000;
        video.srcObject = ev.streams && ev.streams[0] ? ev.streams[0] : new MediaStream([ev.track]);
        video.play().catch(() => {});
      };
      conn.onconnectionstatechange = () => onConnectionState(conn, gen);
      await conn.setLocalDescription(await conn.createOffer());
      await waitIceGathering(conn, iceServers.length ? 3000 : 1000);  // a relay allocation takes a round trip
      if (gen !== generation) return;
      firstFrameAfter = performance.now();
      const resp = await fetch(whepUrl, {
        method: 'POST',
        headers: {'Content-Type': 'application/sdp', ...authHeaders},
        body: conn.localDescription.sdp,
      });
      const body = await resp.text();
      zh.answerMs = performance.now() - firstFrameAfter;  // POST -> answer (the server gathers ICE first)
      if (gen !== generation) {  // superseded while the server answered: end that session too
        const loc = resp.headers.get('Location');
        if (loc) fetch(new URL(loc, whepUrl).href, {method: 'DELETE', headers: authHeaders}).catch(() => {});
        return;
      }
      if (resp.status !== 201 && resp.status !== 200) {
        throw new Error(`POST /whep answered ${resp.status}: ${body.trim().slice(0, 200)}`);
      }
      const loc = resp.headers.get('Location');
      sessionUrl = loc ? new URL(loc, whepUrl).href : null;
      zh.layerUrl = layerLink(resp.headers.get('Link'), whepUrl);
      const chosen = $('rendition-choice').value;  // a reconnect keeps the viewer's choice
      if (zh.layerUrl && chosen && chosen !== 'auto') zh.chooseRendition(Number(chosen)).catch(() => {});
      zh.sessionId = loc ? loc.replace(/.*\//, '').slice(0, 8) : null;
      zh.serverStart = null;
      zh.sdp = {offer: conn.localDescription.sdp, answer: body};
      await conn.setRemoteDescription({type: 'answer', sdp: body});
      if (gen === generation && zh.state === 'connecting') setState('negotiated');
    } catch (err) {
      if (gen === generation) fail(err);
    }
  }

  function onConnectionState(conn, gen) {
    if (gen !== generation) return;
    const s = conn.connectionState;
    zh.iceState = `${s} / ${conn.iceConnectionState}`;
    clearTimeout(disconnectTimer);
    if (s === 'connected') {
      if (zh.state !== 'playing') setState('connected');
      showMessage(zh.state === 'playing' ? '' : 'connected, waiting for the first frame…');
    } else if (s === 'failed') {
      fail(new Error('ICE/DTLS connection failed'));
    } else if (s === 'disconnected') {
      setState('disconnected');
      disconnectTimer = setTimeout(() => {
        if (gen === generation && conn.connectionState !== 'connected') fail(new Error('connection lost'));
      }, 3000);
    }
  }

  function fail(err) {
    zh.error = String(err && err.message ? err.message : err);
    console.warn('zerohop:', zh.error);
    teardown(false);
    if (stopped) return;
    const delay = retryDelayMs;
    retryDelayMs = Math.min(retryDelayMs * 2, 10000);
    setState('retrying', `in ${Math.round(delay / 1000)} s`);
    showMessage(`${zh.error}\nretrying in ${Math.round(delay / 1000)} s`);
    const gen = ++generation;
    retryTimer = setTimeout(() => { if (gen === generation) connect(); }, delay);
  }

  function stop() {
    stopped = true;
    ++generation;
    clearTimeout(retryTimer);
    teardown(false);
    setState('stopped');
    showMessage('stopped — press Reconnect to play again');
  }

  $('reconnect').addEventListener('click', () => { retryDelayMs = 1000; connect(); });
  $('stop').addEventListener('click', stop);
  window.addEventListener('pagehide', () => { ++generation; teardown(true); });

  // --- per-frame: timecode and latency -------------------------------------------------------
  const stripCanvas = document.createElement('canvas');
  const stripCtx = stripCanvas.getContext('2d', {willReadFrequently: true, alpha: false});
  const recent = [];     // [{t: performance.now(), ms}] for the 5 s window
  const fpsMarks = [];   // [{t, frames}] for the fps over ~2 s
  const frameState = {lastPresented: 0, lastNow: null};

  function onFrame(now, metadata) {
    video.requestVideoFrameCallback(onFrame);
    zh.frameCallbacks++;
    const presented = metadata.presentedFrames || 0;
    const newFrames = presented > frameState.lastPresented ? presented - frameState.lastPresented : 1;
    frameState.lastPresented = presented;
    zh.framesPresented += newFrames;
    if (zh.firstFrameAt === null) zh.firstFrameAt = now;
    if (frameState.lastNow !== null) {
      const gap = now - frameState.lastNow;
      if (gap > 200) {
        zh.longGaps.push({at: now, ms: gap});
        if (zh.longGaps.length > 100) zh.longGaps.shift();
      }
      if (gap > ZEROHOP_FREEZE_GAP_MS) zh.freezes++;
      zh.maxGapMs = Math.max(zh.maxGapMs, gap);
    }
    frameState.lastNow = now;
    if (zh.state !== 'playing') {
      setState('playing');
      showMessage('');
      retryDelayMs = 1000;
    }
    fpsMarks.push({t: now, frames: zh.framesPresented});
    while (fpsMarks.length > 2 && now - fpsMarks[0].t > 2000) fpsMarks.shift();
    const displayAt = metadata.expectedDisplayTime > 0 ? metadata.expectedDisplayTime : performance.now();
    if (firstFrameAfter !== null) {
      zh.timeToFirstFrameMs = displayAt - firstFrameAfter;
      zh.timesToFirstFrame.push(zh.timeToFirstFrameMs);
      firstFrameAfter = null;
    }
    noteAbsCaptureTime(metadata, displayAt);

    // Read only the strip: one cell high, 76 cells wide, at the frame's own resolution.
    const width = metadata.width || video.videoWidth;
    const cell = zerohopTimecodeCellSize(width);
    const stripW = cell * ZEROHOP_TC_CELLS;
    if (width < stripW || !(metadata.height || video.videoHeight)) {
      zh.timecodeErrors++;
      resolvePending(null, presented);
      return;
    }
    // The frame is taken now (the read may finish later); the results are used in frame order.
    const read = readStripRow(width, cell, stripW);
    readChain = readChain.then(() => read).then((row) => onStripRow(row, width, presented, now, displayAt));
  }

  // WebCodecs while it works (zh.stripReader says which), else the canvas from then on. An
  // InvalidStateError ("Invalid source state": the element had no current frame at that moment, as
  // around a resize) loses that one frame only; the canvas takes over after
  // ZEROHOP_WEBCODECS_MISSES_IN_A_ROW of them, or at once on any other error (no luma plane, ...).
  zh.stripReader = typeof VideoFrame === 'function' ? 'webcodecs' : 'canvas';
  let missesInARow = 0;
  let readChain = Promise.resolve();
  function readStripRow(width, cell, stripW) {
    if (zh.stripReader === 'webcodecs') {
      return zerohopReadStripRow(video, width).then((row) => {
        missesInARow = 0;
        return row;
      }, (e) => {
        const passing = e && e.name === 'InvalidStateError';
        if (passing) {
          zh.stripReadMisses++;
          missesInARow++;
        }
        if (zh.stripReader === 'webcodecs' && (!passing || missesInARow >= ZEROHOP_WEBCODECS_MISSES_IN_A_ROW)) {
          zh.stripReader = 'canvas';
          console.log(`timecode: reading through a canvas (WebCodecs cannot: ${e.message || e}`
                      + `${passing ? `, ${missesInARow} frames in a row` : ''})`);
        }
        return null;  // this frame is lost; the next one is read again (or through the canvas)
      });
    }
    if (stripCanvas.width !== stripW || stripCanvas.height !== cell) {
      stripCanvas.width = stripW;
      stripCanvas.height = cell;
      stripCtx.imageSmoothingEnabled = false;
    }
    stripCtx.drawImage(video, 0, 0, stripW, cell, 0, 0, stripW, cell);
    return Promise.resolve(stripCtx.getImageData(0, Math.floor(cell / 2), stripW, 1));
  }

  function onStripRow(row, width, presented, now, displayAt) {
    const tc = row && zerohopReadTimecode(row, width);
    if (!tc) { zh.timecodeErrors++; resolvePending(null, presented); return; }
    zh.timecodesRead++;
    if (zh.lastTimecode) {
      const step = (tc.sequence - zh.lastTimecode.sequence + ZEROHOP_TC_SEQ_MOD) % ZEROHOP_TC_SEQ_MOD;
      if (step > 1 && step < 1000) zh.sequenceGaps += step - 1;
    }
    zh.lastTimecode = {wallClockMs: tc.wallClockMs, sequence: tc.sequence};
    resolvePending(tc.sequence, presented);
    pending = {t: now, presented, sequence: tc.sequence,
               ms: zerohopLatencyMs(performance.timeOrigin + displayAt, tc.wallClockMs)};
  }

  // abs-capture-time: the server stamps each frame's first RTP packet with its capture wall clock; Chromium
  // reports it per synchronization source. Capture -> display as the pixel timecode measures it, without
  // reading pixels, and capture -> receive (the sender and the network alone).
  const absRecent = [];  // [{t, display, receive}]
  function noteAbsCaptureTime(metadata, displayAt) {
    if (!receiver || !receiver.getSynchronizationSources) return;
    const source = receiver.getSynchronizationSources()[0];
    const captured = zerohopCaptureEpochMs(source, metadata.rtpTimestamp);
    if (captured === null) return;
    const display = performance.timeOrigin + displayAt - captured;
    const receive = metadata.receiveTime > 0 ? performance.timeOrigin + metadata.receiveTime - captured : null;
    const toPresent = metadata.receiveTime > 0 && metadata.presentationTime > 0
      ? metadata.presentationTime - metadata.receiveTime : null;
    const toDisplay = metadata.presentationTime > 0 ? displayAt - metadata.presentationTime : null;
    zh.absCaptureMs.push(display);
    zh.absCaptureCount++;
    if (zh.absCaptureMs.length > ZEROHOP_KEEP_SAMPLES) zh.absCaptureMs.splice(0, zh.absCaptureMs.length - ZEROHOP_KEEP_SAMPLES);
    absRecent.push({t: performance.now(), display, receive, toPresent, toDisplay});
  }

  // drawImage(video) draws the element's *current* frame. When a callback runs late, that can already be
  // the next frame, which would pair frame N+1's capture time with frame N's display time (one frame
  // interval too low). So a sample is only kept once the next callback confirms it: the next presented
  // frame (presentedFrames + 1) carries a different sequence number. Otherwise it is counted as stale.
  let pending = null;
  function resolvePending(nextSequence, nextPresented) {
    if (!pending) return;
    const p = pending;
    pending = null;
    if (nextSequence === null || nextSequence === p.sequence || nextPresented !== p.presented + 1) {
      zh.staleReads++;
      return;
    }
    zh.latencyMs.push(p.ms);
    zh.latencyCount++;
    if (zh.latencyMs.length > ZEROHOP_KEEP_SAMPLES) zh.latencyMs.splice(0, zh.latencyMs.length - ZEROHOP_KEEP_SAMPLES);
    recent.push({t: p.t, ms: p.ms});
  }

  if ('requestVideoFrameCallback' in HTMLVideoElement.prototype) {
    video.requestVideoFrameCallback(onFrame);
  } else {
    showMessage('this browser has no requestVideoFrameCallback: latency cannot be measured');
  }

  // --- twice a second: numbers; once a second: /stats, getStats and the chart ----------------
  function fmtMs(v) { return v === null || v === undefined || !isFinite(v) ? '–' : `${v.toFixed(v < 10 ? 1 : 0)} ms`; }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }

  function updateNumbers() {
    const now = performance.now();
    while (recent.length && now - recent[0].t > ZEROHOP_LATENCY_WINDOW_MS) recent.shift();
    const values = recent.map((r) => r.ms);
    zh.latencyP50 = zerohopPercentile(values, 0.5);
    zh.latencyP99 = zerohopPercentile(values, 0.99);
    while (absRecent.length && now - absRecent[0].t > ZEROHOP_LATENCY_WINDOW_MS) absRecent.shift();
    zh.absCaptureP50 = zerohopPercentile(absRecent.map((r) => r.display), 0.5);
    const p50Of = (key) => zerohopPercentile(absRecent.filter((r) => r[key] !== null).map((r) => r[key]), 0.5);
    zh.captureToReceiveP50 = p50Of('receive');
    zh.receiveToPresentationP50 = p50Of('toPresent');
    zh.presentationToDisplayP50 = p50Of('toDisplay');
    if (fpsMarks.length >= 2 && now - fpsMarks[fpsMarks.length - 1].t < 1000) {
      const a = fpsMarks[0], b = fpsMarks[fpsMarks.length - 1];
      zh.fps = b.t > a.t ? ((b.frames - a.frames) * 1000) / (b.t - a.t) : 0;
    } else {
      zh.fps = 0;
    }
    if (zh.state === 'playing' && frameState.lastNow !== null && now - frameState.lastNow > ZEROHOP_STALL_RECONNECT_MS) {
      fail(new Error(`no frame for ${Math.round((now - frameState.lastNow) / 1000)} s`));
    } else if (['negotiated', 'connected', 'disconnected'].includes(zh.state) && frameState.lastNow === null
               && now - connectStartedAt > ZEROHOP_FIRST_FRAME_TIMEOUT_MS) {
      fail(new Error(`no frame ${Math.round((now - connectStartedAt) / 1000)} s after connecting`));
    }
    $('lat-p50').textContent = fmtMs(zh.latencyP50);
    $('lat-p99').textContent = fmtMs(zh.latencyP99);
    $('abs-p50').textContent = fmtMs(zh.absCaptureP50);
    $('abs-receive').textContent = zh.captureToReceiveP50 === null ? 'not sent (no abs-capture-time)'
      : `${fmtMs(zh.captureToReceiveP50)}, → compositor ${fmtMs(zh.receiveToPresentationP50)}, `
        + `→ on screen ${fmtMs(zh.presentationToDisplayP50)} (capture → display ${fmtMs(zh.absCaptureP50)})`;
    $('fps').textContent = zh.fps ? zh.fps.toFixed(1) : '–';
    $('presented').textContent = zh.framesPresented;
    $('timecodes').textContent = zh.framesPresented
      ? `${zh.timecodesRead} (${Math.min(100, (100 * zh.timecodesRead) / zh.framesPresented).toFixed(1)} % of presented)` : '0';
    $('tc-errors').textContent = zh.timecodeErrors;
    if (video.videoWidth) $('resolution').textContent = `${video.videoWidth}×${video.videoHeight}`;
  }

  function codecName(c) {
    const profile = /profile-level-id=([0-9a-fA-F]{6})/.exec(c.sdpFmtpLine || '');
    return (c.mimeType || '').replace(/^video\//, '') + (profile ? ` ${profile[1]}` : '') + (c.payloadType !== undefined ? ` (pt ${c.payloadType})` : '');
  }

  const prev = {};  // previous cumulative getStats counters, for per-second deltas
  async function pollWebrtc() {
    const q = video.getVideoPlaybackQuality ? video.getVideoPlaybackQuality() : null;
    if (q) zh.playback = {totalVideoFrames: q.totalVideoFrames, droppedVideoFrames: q.droppedVideoFrames};
    if (!pc) return;
    const report = await pc.getStats();
    let inbound = null;
    let pairId = null;
    const codecs = {};
    const byId = {};
    report.forEach((s) => {
      if (s.type === 'inbound-rtp' && (s.kind === 'video' || s.mediaType === 'video')) inbound = s;
      if (s.type === 'inbound-rtp' && (s.kind === 'audio' || s.mediaType === 'audio')) {
        zh.audio = {packetsReceived: s.packetsReceived, packetsLost: s.packetsLost,
                    totalSamplesReceived: s.totalSamplesReceived, concealedSamples: s.concealedSamples,
                    audioLevel: s.audioLevel, totalAudioEnergy: s.totalAudioEnergy,
                    jitterBufferDelay: s.jitterBufferDelay, jitterBufferEmittedCount: s.jitterBufferEmittedCount,
                    // the sender's NTP time (ms) of what plays now; against the video's: lip sync
                    estimatedPlayoutTimestamp: s.estimatedPlayoutTimestamp};
      }
      if (s.type === 'codec') codecs[s.id] = s;
      if (s.type === 'transport' && s.selectedCandidatePairId) pairId = s.selectedCandidatePairId;
      byId[s.id] = s;
    });
    // The path the media takes: host, srflx, prflx or relay (through a TURN server) on each side.
    const pair = pairId && byId[pairId];
    if (pair) {
      const local = byId[pair.localCandidateId] || {}, remote = byId[pair.remoteCandidateId] || {};
      zh.candidatePair = {local: local.candidateType, remote: remote.candidateType,
                          relayProtocol: local.relayProtocol || null, protocol: local.protocol,
                          // ICE's round trip on this pair (STUN consent checks), ms
                          rttMs: pair.currentRoundTripTime !== undefined ? 1000 * pair.currentRoundTripTime : null};
    }
    if (!inbound) return;
    const w = {
      timestamp: inbound.timestamp,  // ms, when these counters were read (rates over a window use it)
      framesDecoded: inbound.framesDecoded, framesDropped: inbound.framesDropped,
      framesReceived: inbound.framesReceived, freezeCount: inbound.freezeCount,
      frameWidth: inbound.frameWidth, frameHeight: inbound.frameHeight,  // of the last decoded frame
      totalFreezesDuration: inbound.totalFreezesDuration, nackCount: inbound.nackCount,
      pliCount: inbound.pliCount, firCount: inbound.firCount, packetsLost: inbound.packetsLost,
      retransmittedPacketsReceived: inbound.retransmittedPacketsReceived,
      jitterBufferDelay: inbound.jitterBufferDelay, jitterBufferEmittedCount: inbound.jitterBufferEmittedCount,
      jitterBufferTargetDelay: inbound.jitterBufferTargetDelay, jitterBufferMinimumDelay: inbound.jitterBufferMinimumDelay,
      totalDecodeTime: inbound.totalDecodeTime, framesPerSecond: inbound.framesPerSecond,
      decoderImplementation: inbound.decoderImplementation,
      estimatedPlayoutTimestamp: inbound.estimatedPlayoutTimestamp,  // as the audio's (?audio=1), one report
      codec: codecs[inbound.codecId] ? codecName(codecs[inbound.codecId]) : null,
      jitterBufferMs: null, decodeMs: null,
    };
    const dEmit = (w.jitterBufferEmittedCount || 0) - (prev.jitterBufferEmittedCount || 0);
    if (dEmit > 0) w.jitterBufferMs = (1000 * ((w.jitterBufferDelay || 0) - (prev.jitterBufferDelay || 0))) / dEmit;
    const dDec = (w.framesDecoded || 0) - (prev.framesDecoded || 0);
    if (dDec > 0) w.decodeMs = (1000 * ((w.totalDecodeTime || 0) - (prev.totalDecodeTime || 0))) / dDec;
    Object.assign(prev, {jitterBufferEmittedCount: w.jitterBufferEmittedCount, jitterBufferDelay: w.jitterBufferDelay,
                         framesDecoded: w.framesDecoded, totalDecodeTime: w.totalDecodeTime});
    zh.webrtc = w;
  }

  async function pollServer() {
    try {
      const resp = await fetch(statsUrl, {cache: 'no-store', headers: authHeaders});  // serve --protect-stats
      if (resp.ok) {
        const doc = await resp.json();
        const cams = Array.isArray(doc.cameras) ? doc.cameras : [];
        // The figures of the camera played: its entry of "cameras" (the top level is the first camera's).
        zh.lastStats = (zh.camera && cams.find((c) => c.name === zh.camera)) || doc;
        zh.cameras = cams.map((c) => ({name: c.name, state: c.state}));
        renderCameraList();
      }
    } catch (e) {
      // The server may be restarting; the connection logic reports that.
    }
  }

  // Links to every camera of the server (?camera=NAME, the page's other parameters kept); shown
  // only when there are several.
  let shownCameras = '';
  function renderCameraList() {
    const nav = $('cameras');
    if (!nav) return;
    const key = JSON.stringify(zh.cameras);
    if (key === shownCameras) return;
    shownCameras = key;
    nav.hidden = zh.cameras.length < 2;
    nav.textContent = '';
    const current = zh.camera || (zh.cameras[0] && zh.cameras[0].name);
    zh.cameras.forEach((c) => {
      const link = document.createElement('a');
      const p = new URLSearchParams(location.search);
      p.set('camera', c.name);
      link.href = '?' + p.toString();
      link.textContent = c.name;
      link.dataset.camera = c.name;
      link.dataset.state = c.state;
      link.title = c.state;
      if (c.name === current) link.className = 'current';
      nav.appendChild(link);
    });
  }

  function renderTable() {
    const w = zh.webrtc || {};
    const q = zh.playback || {};
    const s = zh.lastStats || {};
    const dash = (v) => (v === undefined || v === null ? '–' : v);
    $('decoded').textContent = `${dash(w.framesDecoded)} / ${dash(w.framesDropped)}`
      + (q.totalVideoFrames !== undefined ? ` (element ${q.totalVideoFrames} / ${q.droppedVideoFrames})` : '');
    $('freezes').textContent = `${dash(w.freezeCount)} / ${zh.freezes}`;
    $('nack').textContent = `${dash(w.nackCount)} / ${dash(w.pliCount)}`;
    $('jitter').textContent = fmtMs(w.jitterBufferMs);
    $('decode').textContent = fmtMs(w.decodeMs) + (w.decoderImplementation ? ` (${w.decoderImplementation})` : '');
    $('codec').textContent = dash(w.codec);
    $('server-fps').textContent = `${num(s.fps) !== null ? s.fps.toFixed(1) : '–'} / ${dash(s.frames)}`;
    $('server-drops').textContent = `${dash(s.drops)} / ${dash(s.viewers)}`;
    $('encoder').textContent = dash(s.encoder);
    // Several cameras: each has its own viewer_sessions under cameras[] (the first one's also at the top).
    const cam = [s, ...(s.cameras || [])].find((c) => (c.viewer_sessions || []).some((v) => v.id === zh.sessionId)) || s;
    const mine = (cam.viewer_sessions || []).find((v) => v.id === zh.sessionId);
    if (mine) zh.serverStart = {connect_ms: mine.connect_ms, first_frame_ms: mine.first_frame_ms};
    // Congestion control: the target and output of the encode this viewer receives (a VP8 viewer's is the
    // VP8 encode, with a target of its own), and what this viewer is sent and estimated at.
    const vp8 = mine && mine.codec === 'VP8' && cam.vp8 && cam.vp8.bitrate;
    const b = vp8 ? {congestion_control: (cam.bitrate || {}).congestion_control, target_kbps: vp8.target_kbps,
                     sent_kbps: vp8.sent_kbps} : (cam.bitrate || {});
    const kbps = (v) => (num(v) !== null ? `${Math.round(v)} kb/s` : '–');
    zh.bitrate = {target_kbps: b.target_kbps, encoded_kbps: b.sent_kbps, congestion_control: b.congestion_control,
                  sent_kbps: mine && mine.sent_kbps, estimate_kbps: mine && mine.estimate_kbps,
                  loss_pct: mine && mine.loss_pct, rtt_ms: mine && mine.rtt_ms};
    $('bitrate').textContent = b.congestion_control ? `${kbps(b.target_kbps)} / ${kbps(b.sent_kbps)}`
      : `fixed / ${kbps(b.sent_kbps)}`;
    $('viewer-bitrate').textContent = mine ? `${kbps(mine.sent_kbps)} / ${kbps(mine.estimate_kbps)}`
      + (num(mine.loss_pct) !== null ? ` · loss ${mine.loss_pct.toFixed(1)} %` : '')
      + (num(mine.rtt_ms) !== null ? ` · RTT ${Math.round(mine.rtt_ms)} ms` : '') : '–';
    // Renditions: the rung this viewer's track takes now, as "720p / 2.5 Mb/s" (its picture height and
    // that rung's encode rate), and its moves between rungs.
    const rungs = Array.isArray(cam.renditions) ? cam.renditions : [];
    const rung = mine && num(mine.rung) !== null ? rungs[mine.rung] : null;
    const rate = (v) => (num(v) === null ? '–' : v >= 1000 ? `${(v / 1000).toFixed(1)} Mb/s` : `${Math.round(v)} kb/s`);
    zh.rendition = rung ? {rung: mine.rung, rungs: rungs.length, width: rung.width, height: rung.height,
                           kbps: rung.encoder_kbps, switches: mine.rung_switches} : null;
    $('rendition').textContent = rung
      ? `${rung.height}p / ${rate(rung.encoder_kbps)} (rung ${mine.rung} of ${rungs.length}; `
        + `${mine.rung_switches} switch${mine.rung_switches === 1 ? '' : 'es'})`
      : rungs.length ? '–' : 'one encode (no ladder)';
    // The selector: automatic, or a rung as this viewer's highest; built once per ladder.
    const choice = $('rendition-choice');
    const options = ['auto', ...rungs.map((r) => `${r.height}p`)].join(',');
    if (choice.dataset.options !== options) {
      choice.replaceChildren(...['auto', ...rungs.map((_, i) => String(i))].map((v, i) => {
        const o = document.createElement('option');
        o.value = v;
        o.textContent = i === 0 ? 'auto' : `at most ${rungs[i - 1].height}p`;
        return o;
      }));
      choice.dataset.options = options;
    }
    choice.hidden = !(zh.layerUrl && rungs.length > 1);
    const st = zh.serverStart || {};
    $('ttff').textContent = zh.timeToFirstFrameMs === null ? '–'
      : `${fmtMs(zh.timeToFirstFrameMs)} (server: connected ${fmtMs(st.connect_ms)}, keyframe sent ${fmtMs(st.first_frame_ms)})`;
    $('source').textContent = s.source ? `${s.source}${num(s.uptime_s) !== null ? ` · up ${Math.round(s.uptime_s)} s` : ''}` : '';
  }

  // --- chart -------------------------------------------------------------------------------
  const SERIES = [
    {key: 'ingest', label: 'ingest', color: '#4e79a7', server: true},
    {key: 'convert', label: 'convert', color: '#59a14f', server: true},
    {key: 'encode', label: 'encode', color: '#f28e2b', server: true},
    {key: 'send', label: 'send', color: '#b07aa1', server: true},
    {key: 'network', label: 'network', color: '#76b7b2'},
    {key: 'unattributed', label: 'server + network + display (no /stats stages)', color: '#6e7681'},
    {key: 'jitter', label: 'jitter buffer', color: '#edc948'},
    {key: 'decode', label: 'decode', color: '#9c755f'},
    {key: 'display', label: 'display (compositor, screen)', color: '#ff9da7'},
  ];
  const legend = $('legend');
  for (const s of SERIES) {
    const li = document.createElement('li');
    li.id = `legend-${s.key}`;
    li.innerHTML = `<span class="swatch" style="background:${s.color}"></span><span class="name">${s.label}</span> <b></b>`;
    legend.appendChild(li);
  }
  {
    const li = document.createElement('li');
    li.innerHTML = '<span class="swatch line"></span><span>capture → display p50</span> <b id="legend-e2e"></b>';
    legend.appendChild(li);
  }

  function stageP50(stats, key) {
    const st = stats && stats.stages && stats.stages[key];
    return st ? num(st.p50_ms) : null;
  }

  function sampleHistory() {
    const s = zh.lastStats;
    const w = zh.webrtc || {};
    const row = {t: Date.now(), e2e: zh.latencyP50, e2e99: zh.latencyP99, parts: {}};
    let serverSum = 0;
    for (const sr of SERIES.filter((x) => x.server)) {
      const v = stageP50(s, sr.key);
      row.parts[sr.key] = v;
      if (v !== null) serverSum += v;
    }
    const haveStages = SERIES.some((x) => x.server && row.parts[x.key] !== null);
    const serverTotal = s && s.total && num(s.total.p50_ms) !== null ? s.total.p50_ms : (haveStages ? serverSum : null);
    row.parts.jitter = num(w.jitterBufferMs);
    row.parts.decode = num(w.decodeMs);
    row.parts.network = row.parts.unattributed = row.parts.display = null;
    if (row.e2e !== null) {
      const rest = row.e2e - (row.parts.jitter || 0) - (row.parts.decode || 0);
      const receive = num(zh.captureToReceiveP50);
      if (serverTotal !== null && receive !== null) {
        // abs-capture-time splits the rest where the frame's last packet arrived: the network before it,
        // the browser's compositor and screen after (its jitter buffer and decode apart).
        row.parts.network = Math.max(0, receive - serverTotal);
        row.parts.display = Math.max(0, rest - receive);
      } else if (serverTotal !== null) {
        row.parts.network = Math.max(0, rest - serverTotal);  // network and display together
      } else {
        row.parts.unattributed = Math.max(0, rest);
      }
    }
    zh.history.push(row);
    if (zh.history.length > ZEROHOP_CHART_SECONDS) zh.history.shift();
    return row;
  }

  function updateLegend(row) {
    const warn = $('warning');
    let dominant = null;
    for (const s of SERIES) {
      const li = $(`legend-${s.key}`);
      const v = row.parts[s.key];
      // Show "unattributed" only while the server gives no stage figures, and "network" only when it does;
      // "display" only while abs-capture-time tells it from the network (else "network + display").
      if (s.key === 'unattributed') li.hidden = v === null;
      if (s.key === 'network') {
        li.hidden = row.parts.unattributed !== null;
        li.querySelector('.name').textContent = row.parts.display === null ? 'network + display' : 'network';
      }
      if (s.key === 'display') li.hidden = v === null;
      const share = row.e2e && v !== null ? v / row.e2e : null;
      li.querySelector('b').textContent = v === null || v === undefined ? '–'
        : `${v.toFixed(1)} ms${share !== null ? ` · ${Math.round(100 * share)}%` : ''}`;
      const dom = s.key !== 'unattributed' && share !== null && share >= 0.5 && row.e2e >= 5;
      li.classList.toggle('dominant', dom);
      if (dom && (!dominant || share > dominant.share)) dominant = {s, v, share};
    }
    $('legend-e2e').textContent = fmtMs(row.e2e);
    if (dominant) {
      warn.hidden = false;
      warn.textContent = `⚠ ${$(`legend-${dominant.s.key}`).querySelector('.name').textContent} dominates: ${dominant.v.toFixed(1)} ms of ${row.e2e.toFixed(1)} ms `
        + `(${Math.round(100 * dominant.share)}%) capture → display`;
    } else {
      warn.hidden = true;
    }
  }

  function niceCeil(v) {
    const steps = [10, 20, 25, 40, 50, 60, 80, 100, 150, 200, 250, 300, 400, 500, 750, 1000, 2000, 5000];
    for (const s of steps) if (v <= s) return s;
    return Math.ceil(v / 1000) * 1000;
  }

  const chart = $('chart');
  function drawChart() {
    const dpr = window.devicePixelRatio || 1;
    const cssW = chart.clientWidth || 960, cssH = chart.clientHeight || 260;
    if (chart.width !== Math.round(cssW * dpr) || chart.height !== Math.round(cssH * dpr)) {
      chart.width = Math.round(cssW * dpr);
      chart.height = Math.round(cssH * dpr);
    }
    const g = chart.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, cssW, cssH);
    const L = 46, R = 10, T = 10, B = 24;
    const plotW = cssW - L - R, plotH = cssH - T - B;
    const rows = zh.history;
    let maxV = 10;
    for (const r of rows) {
      let stack = 0;
      for (const s of SERIES) stack += r.parts[s.key] || 0;
      maxV = Math.max(maxV, stack, r.e2e || 0, r.e2e99 || 0);
    }
    const top = niceCeil(maxV * 1.1);
    const y = (v) => T + plotH - (v / top) * plotH;
    // grid
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#8b949e';
    g.strokeStyle = '#30363d';
    g.lineWidth = 1;
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; ++i) {
      const v = (top * i) / 4;
      g.beginPath();
      g.moveTo(L, Math.round(y(v)) + 0.5);
      g.lineTo(L + plotW, Math.round(y(v)) + 0.5);
      g.stroke();
      g.fillText(`${v} ms`, L - 6, y(v));
    }
    g.textAlign = 'center';
    g.textBaseline = 'top';
    for (let sec = 0; sec <= ZEROHOP_CHART_SECONDS; sec += 10) {
      g.fillText(sec === 0 ? 'now' : `−${sec} s`, L + plotW - (sec / ZEROHOP_CHART_SECONDS) * plotW, T + plotH + 6);
    }
    // stacked bars, newest at the right
    const slot = plotW / ZEROHOP_CHART_SECONDS;
    const barW = Math.max(1, slot * 0.8);
    rows.forEach((r, i) => {
      const x = L + plotW - (rows.length - i) * slot + (slot - barW) / 2;
      let acc = 0;
      for (const s of SERIES) {
        const v = r.parts[s.key];
        if (!v || v <= 0) continue;
        g.fillStyle = s.color;
        g.fillRect(x, y(acc + v), barW, y(acc) - y(acc + v));
        acc += v;
      }
    });
    // end-to-end lines: p50 solid, p99 dashed
    const line = (key, dash, color, width) => {
      g.save();
      g.strokeStyle = color;
      g.lineWidth = width;
      g.setLineDash(dash);
      g.beginPath();
      let open = false;
      rows.forEach((r, i) => {
        const v = r[key];
        if (v === null || v === undefined) { open = false; return; }
        const x = L + plotW - (rows.length - i) * slot + slot / 2;
        if (open) g.lineTo(x, y(v)); else g.moveTo(x, y(v));
        open = true;
      });
      g.stroke();
      g.restore();
    };
    line('e2e99', [4, 4], '#f0f6fc88', 1.5);
    line('e2e', [], '#f0f6fc', 2.5);
    if (!rows.length || rows.every((r) => r.e2e === null)) {
      g.fillStyle = '#8b949e';
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      g.fillText('waiting for frames…', L + plotW / 2, T + plotH / 2);
    }
  }

  setInterval(updateNumbers, 500);
  setInterval(async () => {
    await Promise.all([pollServer(), pollWebrtc().catch(() => {})]);
    renderTable();
    const row = sampleHistory();
    updateLegend(row);
    drawChart();
  }, 1000);
  drawChart();
  connect();
})();
