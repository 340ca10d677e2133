// zerohop viewer, part 3 of 3: the page: plays the WHEP stream, reads the pixel timecode from every
// presented frame (web/timecode.js) and shows capture->display latency next to the server's per-stage
// figures, as a live chart (web/chart.js). Starts only when the page has a <video id="video">.
// Plain browser JavaScript, no build step, no libraries.
'use strict';

// ---------------------------------------------------------------------------------------------
// The page.

const ZEROHOP_LATENCY_WINDOW_MS = 5000;   // live p50/p99 window
const ZEROHOP_KEEP_SAMPLES = 900;         // window.zerohop.latencyMs keeps this many (~30 s at 30 fps)
const ZEROHOP_FREEZE_GAP_MS = 500;        // a gap this long between presented frames is a freeze
const ZEROHOP_STALL_RECONNECT_MS = 6000;  // no frame for this long while connected: reconnect
const ZEROHOP_FIRST_FRAME_TIMEOUT_MS = 15000;  // connected but nothing shown for this long: reconnect
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
  avSync: null,           // ?audio=1: the test camera's markers against the tone's clicks, timed here (web/avsync.js summary())
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
  // ?audio=1: the marker frames on screen against the clicks heard (web/avsync.js); the marker block is
  // read from each frame only while it listens.
  const avSync = new ZerohopAvSync({scriptProcessor: params.get('clicks') === 'script'});
  let soundTrack = null;  // the received sound's track (?audio=1), for the click timer
  document.addEventListener('click', () => avSync.resume());
  // ?audio=1: the <video> starts muted (a browser plays sound only after the viewer's click); this button
  // unmutes it, shown once the sound arrives.
  $('sound-toggle').addEventListener('click', () => {
    video.muted = !video.muted;
    $('sound-toggle').textContent = video.muted ? 'Unmute' : 'Mute';
    video.play().catch(() => {});
  });

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
    soundTrack = null;
    avSync.close();
  }

  // The click timer (web/avsync.js) listens only where there are clicks to hear: the test tone (serve
  // --audio test, /stats audio.source "test"). A page playing a microphone builds no audio graph of its
  // own beside the element's playout. Firefox only on ?clicks=1: with a sound device, Firefox ESR 153's
  // content process deadlocked in 5 of 25 runs here once such a graph listened to the received track (0
  // of 20 without one), and a hung tab is too high a price for a measurement nobody asked for.
  const clickTimerWanted =
      params.has('clicks') ? params.get('clicks') !== '0' : !/\bFirefox\//.test(navigator.userAgent);
  function startClickTimer() {
    const a = zh.lastStats && zh.lastStats.audio;
    if (clickTimerWanted && soundTrack && a && a.source === 'test') avSync.start(soundTrack);
  }

  // A browser decodes Opus in stereo only when its own offer says stereo=1 (RFC 7587 §7.1: the receiver's
  // preference); without it a stereo camera microphone is played downmixed. A mono stream is unchanged by it.
  function withStereoOpus(sdp) {
    const rtpmap = /a=rtpmap:(\d+) opus\/48000\/2/i.exec(sdp);
    if (!rtpmap) return sdp;
    return sdp.replace(new RegExp(`a=fmtp:${rtpmap[1]} [^\\r\\n]*`),
                       (line) => (/(^|[ ;])stereo=/.test(line) ? line : `${line};stereo=1`));
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
          soundTrack = ev.track;
          startClickTimer();
          $('sound-toggle').hidden = false;
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
      const offer = await conn.createOffer();
      await conn.setLocalDescription({type: 'offer', sdp: withStereoOpus(offer.sdp)});
      await waitIceGathering(conn, iceServers.length ? 3000 : 1000);  // a relay allocation takes a round trip
      if (gen !== generation) return;
      firstFrameAfter = performance.now();
      // ?lipsync=1 (with ?audio=1): the picture may wait for the sound, this viewer's only (the server
      // raises its playout delay's maximum; without it each frame is shown at once, the sound ~75 ms after).
      const postUrl = params.get('lipsync') === '1' ? whepUrl + '?lipsync=1' : whepUrl;
      const resp = await fetch(postUrl, {
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
  const markerCanvas = document.createElement('canvas');
  markerCanvas.width = markerCanvas.height = 1;
  const markerCtx = markerCanvas.getContext('2d', {willReadFrequently: true, alpha: false});
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
    const markerAt = avSync.context ? zerohopMarkerCentre(width, metadata.height || video.videoHeight) : null;
    const read = readStripRow(width, cell, stripW, markerAt);
    readChain = readChain.then(() => read).then((row) => onStripRow(row, width, presented, now, displayAt));
  }

  // WebCodecs while it works (zh.stripReader says which), else the canvas from then on. An
  // InvalidStateError ("Invalid source state": the element had no current frame at that moment, as
  // around a resize) loses that one frame only; the canvas takes over after
  // ZEROHOP_WEBCODECS_MISSES_IN_A_ROW of them, or at once on any other error (no luma plane, ...).
  zh.stripReader = typeof VideoFrame === 'function' ? 'webcodecs' : 'canvas';
  let missesInARow = 0;
  let readChain = Promise.resolve();
  function readStripRow(width, cell, stripW, markerAt) {
    if (zh.stripReader === 'webcodecs') {
      return zerohopReadStripRow(video, width, markerAt).then((row) => {
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
    const row = stripCtx.getImageData(0, Math.floor(cell / 2), stripW, 1);
    if (markerAt) {
      markerCtx.drawImage(video, markerAt.x, markerAt.y, 1, 1, 0, 0, 1, 1);
      row.marker = markerCtx.getImageData(0, 0, 1, 1).data[0];
    }
    return Promise.resolve(row);
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
    const ms = zerohopLatencyMs(performance.timeOrigin + displayAt, tc.wallClockMs);
    pending = {
      t: now,
      presented,
      sequence: tc.sequence,
      ms,
      displayAt,
      marker: row.marker,
      captureWall: performance.timeOrigin + displayAt - ms
    };
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
    if (p.marker !== undefined)
      avSync.frame(p.displayAt, p.captureWall, zh.fps > 10 ? 1000 / zh.fps : 100, p.marker);
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
    zh.avSync = avSync.state === 'off' ? null : avSync.summary();
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
    const reportWallMs = Date.now();  // the wall clock when the figures below were read (for the NTP times)
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
                    jitterBufferTargetDelay: s.jitterBufferTargetDelay, jitterBufferMinimumDelay: s.jitterBufferMinimumDelay,
                    jitter: s.jitter,  // RFC 3550 interarrival jitter, s
                    // the sender's NTP time (ms) of what plays now; against the video's: lip sync; against
                    // reportWallMs (NTP = Unix + 2208988800000 ms): capture -> playout on one machine
                    estimatedPlayoutTimestamp: s.estimatedPlayoutTimestamp, reportWallMs};
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
      keyFramesDecoded: inbound.keyFramesDecoded, bytesReceived: inbound.bytesReceived,
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
      reportWallMs,
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
        const offset = zh.lastStats.audio && zh.lastStats.audio.wall_minus_capture_ms;
        if (typeof offset === 'number') avSync.wallMinusCapture = offset;
        startClickTimer();
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
    // that rung's encode rate), and its moves between rungs; a VP8 viewer's are the ladder's VP8 encodes.
    const ladder = mine && mine.codec === 'VP8' ? cam.vp8_renditions : cam.renditions;
    const rungs = Array.isArray(ladder) ? ladder : [];
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
    showSound(cam.audio, zh.audio);
    const st = zh.serverStart || {};
    $('ttff').textContent = zh.timeToFirstFrameMs === null ? '–'
      : `${fmtMs(zh.timeToFirstFrameMs)} (server: connected ${fmtMs(st.connect_ms)}, keyframe sent ${fmtMs(st.first_frame_ms)})`;
    $('source').textContent = s.source ? `${s.source}${num(s.uptime_s) !== null ? ` · up ${Math.round(s.uptime_s)} s` : ''}` : '';
  }

  // The test camera's markers against the tone's clicks (web/avsync.js), timed here.
  function clickSync(a) {
    if (!a) return '';
    if (a.state !== 'running')
      return ` · click against marker: ${a.state}${a.state === 'suspended' ? ' (click the page)' : ''}`;
    if (!a.pairs)
      return a.clicksHeard || a.markersSeen ?
          ` · click against marker: ${a.clicksHeard} clicks, ${a.markersSeen} markers, none paired` :
          '';
    return ` · click − marker ${fmtMs(a.clickMinusMarkerP50)} (${a.pairs} pairs), sound capture → playout ${
        fmtMs(a.audioCaptureToPlayoutP50)}`;
  }

  // The sound row (serve --audio; the page at ?audio=1): the server's side from /stats (its source, the
  // packets it encoded or passed on as the camera sent them, sent to viewers, dropped, capture overruns)
  // and this browser's (packets received, samples concealed, its jitter buffer since the start, and lip
  // sync as Chromium estimates it: the video's estimated playout time less the audio's, positive when the
  // sound plays older sender time, i.e. late). Hidden while neither side has sound.
  function showSound(server, here) {
    const row = $('sound-row');
    row.hidden = !server && !here;
    if (row.hidden) return;
    const parts = [];
    if (server) {
      const made = server.passed ? `${server.passed} passed as the camera sent them` :
                                   `${server.packets} encoded (${fmtMs(server.encode_ms)} each)`;
      parts.push(
          `${server.source}: ${made}, ${server.units_sent} sent, ` +
          `${(server.units_dropped || 0) + (server.queue_drops || 0)} dropped, ${server.overruns} overruns` +
          (server.running ? '' : ` · not running${server.error ? ': ' + server.error : ''}`));
    }
    if (here) {
      const pct =
          here.totalSamplesReceived ? (100 * (here.concealedSamples || 0)) / here.totalSamplesReceived : null;
      const jb = here.jitterBufferEmittedCount ?
          (1000 * here.jitterBufferDelay) / here.jitterBufferEmittedCount :
          null;
      const v = zh.webrtc && zh.webrtc.estimatedPlayoutTimestamp, a = here.estimatedPlayoutTimestamp;
      const sync = num(v) !== null && num(a) !== null ? `, video − audio ${Math.round(v - a)} ms` : '';
      parts.push(
          `here: ${here.packetsReceived} packets, ${pct === null ? '–' : pct.toFixed(1)} % concealed, ` +
          `jitter buffer ${fmtMs(jb)}${sync}${clickSync(zh.avSync)}`);
    }
    $('sound').textContent = parts.join(' · ');
  }

  // --- chart (web/chart.js) ------------------------------------------------------------------
  const latencyChart = zerohopLatencyChart({zh, $, fmtMs, num});

  setInterval(updateNumbers, 500);
  setInterval(async () => {
    await Promise.all([pollServer(), pollWebrtc().catch(() => {})]);
    renderTable();
    const row = latencyChart.sample();
    latencyChart.updateLegend(row);
    latencyChart.draw();
  }, 1000);
  latencyChart.draw();
  connect();
})();
