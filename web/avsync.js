// zerohop viewer: the sound against the picture, timed in the page. The test camera paints its marker
// block (bottom-right, a quarter of each side) white in the frame exposed over each full second of the
// capture clock and the test tone clicks at that instant (serve --source test... --audio test;
// docs/audio.md, "Measured sync"). The page sees the marker when that frame is on screen
// (requestVideoFrameCallback's expectedDisplayTime) and hears the click where its audio graph plays it
// (an AudioWorklet on the received track; AudioContext.getOutputTimestamp maps its sample clock to
// performance.now()). click - marker > 0: the sound is late. With the server's capture clock offset
// (/stats audio.wall_minus_capture_ms) each click's own capture -> playout follows too.
// Plain browser JavaScript, no build step, no libraries.
'use strict';

const ZEROHOP_CLICK_THRESHOLD = 0.5;    // the tone is a quarter of full scale; its click full scale
const ZEROHOP_CLICK_HOLDOFF_S = 0.5;    // one click a marker (a second apart)
const ZEROHOP_AV_PAIR_WINDOW_MS = 400;  // a click and a marker further apart are not one pair
const ZEROHOP_AV_KEEP = 60;             // pairs kept (a minute)
const ZEROHOP_MARKER_PERIOD_MS = 1000;

// The AudioWorklet: reports the sample frame (its context's clock) where each click starts.
const ZEROHOP_CLICK_WORKLET = `
class ZerohopClickDetector extends AudioWorkletProcessor {
  constructor() { super(); this.quietUntil = 0; }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (ch) {
      for (let i = 0; i < ch.length; i++) {
        if (Math.abs(ch[i]) > ${ZEROHOP_CLICK_THRESHOLD} && currentFrame + i >= this.quietUntil) {
          this.port.postMessage(currentFrame + i);
          this.quietUntil = currentFrame + i + ${ZEROHOP_CLICK_HOLDOFF_S} * sampleRate;
          break;
        }
      }
    }
    return true;
  }
}
registerProcessor('zerohop-click-detector', ZerohopClickDetector);
`;

/** The centre of the marker block of a width x height frame (as src/core/av_marker_picture.cpp draws it). */
function zerohopMarkerCentre(width, height) {
  if (width < 64 || height < 64) return null;
  const w = Math.max(16, (width >> 2) & ~15), h = Math.max(16, (height >> 2) & ~15);
  return {x: (((width - w) & ~15) + (w >> 1)) & ~1, y: (((height - h) & ~15) + (h >> 1)) & ~1};
}

/**
 * Times the markers of the presented frames against the clicks of the received sound.
 * `frame()` takes each confirmed frame; `start(track)` listens to the sound; `summary()` is what the page
 * shows and the tests read.
 */
class ZerohopAvSync {
  /** `scriptProcessor`: listen with a ScriptProcessorNode even where an AudioWorklet exists (to compare). */
  constructor({scriptProcessor = false} = {}) {
    this.forceScriptProcessor = scriptProcessor;
    this.state = 'off';  // off | starting | running | suspended | unavailable: why
    this.context = null;
    this.clicks = [];   // performance.now() of each click heard, not yet paired
    this.markers = [];  // {display, captureWall, phase} of each marker frame shown, not yet paired
    this.pairs = [];    // {clickMinusMarker, audio, video, phase} in ms (audio: null without the offset)
    this.pairCount = 0;
    this.clicksHeard = 0;
    this.markersSeen = 0;
    this.wallMinusCapture = null;  // the server's CLOCK_REALTIME - CLOCK_MONOTONIC, ms
    this.lastMarkerDisplay = -Infinity;
    this.detector = null;  // 'AudioWorklet' or 'ScriptProcessor'
  }

  async start(track) {
    if (this.context) return;
    if (typeof AudioContext !== 'function') {
      this.state = 'unavailable: no AudioContext';
      return;
    }
    this.state = 'starting';
    try {
      const ctx = new AudioContext({latencyHint: 'interactive'});
      this.context = ctx;
      const source = ctx.createMediaStreamSource(new MediaStream([track]));
      const detector =
          ctx.audioWorklet && !this.forceScriptProcessor ? await this.worklet(ctx) : this.scriptProcessor(ctx);
      source.connect(detector);
      detector.connect(ctx.destination);  // silent: pulled by the graph, adds nothing to what is heard
      ctx.onstatechange = () => {
        if (this.context === ctx) this.state = ctx.state === 'running' ? 'running' : 'suspended';
      };
      if (ctx.state === 'suspended')
        await Promise.race([ctx.resume(), new Promise((r) => setTimeout(r, 500))]);
      this.state = ctx.state === 'running' ? 'running' : 'suspended';
    } catch (e) {
      this.state = `unavailable: ${e.message || e}`;
    }
  }

  async worklet(ctx) {
    const url = URL.createObjectURL(new Blob([ZEROHOP_CLICK_WORKLET], {type: 'application/javascript'}));
    await ctx.audioWorklet.addModule(url);
    URL.revokeObjectURL(url);
    this.detector = 'AudioWorklet';
    const node = new AudioWorkletNode(ctx, 'zerohop-click-detector', {numberOfOutputs: 1});
    node.port.onmessage = (ev) => this.heard(ev.data / ctx.sampleRate);
    return node;
  }

  // Where a page has no AudioWorklet (outside a secure context): a ScriptProcessorNode. Its input block
  // is the graph's audio two blocks before the one it outputs at ev.playbackTime (one block to fill, one
  // to hand over): against the worklet in the same browser, the click's capture -> playout read one
  // block back was 19-23 ms late in Firefox and 32-37 ms in Chromium; two blocks back it is 68 ms against
  // the worklet's 66-74 in Firefox, 100 against 90-100 in Chromium (2026-12-07, ?clicks=script).
  scriptProcessor(ctx) {
    this.detector = 'ScriptProcessor';
    const size = 1024;
    const node = ctx.createScriptProcessor(size, 1, 1);
    let quietUntil = 0;
    node.onaudioprocess = (ev) => {
      const ch = ev.inputBuffer.getChannelData(0);
      const start = ev.playbackTime - 2 * size / ctx.sampleRate;
      for (let i = 0; i < ch.length; i++) {
        const t = start + i / ctx.sampleRate;
        if (Math.abs(ch[i]) > ZEROHOP_CLICK_THRESHOLD && t >= quietUntil) {
          quietUntil = t + ZEROHOP_CLICK_HOLDOFF_S;
          this.heard(t);
          break;
        }
      }
    };
    return node;
  }

  /** Resumes a context the autoplay policy held (call from a user gesture). */
  resume() {
    if (this.context && this.context.state === 'suspended') {
      this.context.resume().then(() => {
        this.state = this.context.state === 'running' ? 'running' : this.state;
      });
    }
  }

  close() {
    if (this.context) this.context.close().catch(() => {});
    this.context = null;
    if (!this.state.startsWith('unavailable')) this.state = 'off';
    this.clicks = [];
    this.markers = [];
  }

  // A click at `contextTime` (s): when it is played, on performance.now()'s clock.
  heard(contextTime) {
    const ctx = this.context;
    if (!ctx) return;
    const out = ctx.getOutputTimestamp ? ctx.getOutputTimestamp() : null;
    const at = out && out.performanceTime > 0 ? out.performanceTime + (contextTime - out.contextTime) * 1000 :
                                                performance.now() + (contextTime - ctx.currentTime) * 1000 +
            (ctx.outputLatency || ctx.baseLatency || 0) * 1000;
    this.clicksHeard++;
    this.clicks.push(at);
    if (this.clicks.length > 10) this.clicks.shift();
    this.match();
  }

  /**
   * A presented frame, once confirmed as the frame its timecode was read from: `display` its
   * expectedDisplayTime, `captureWall` its capture wall clock (ms, from its timecode), `periodMs` the frame
   * interval, `marker` the marker block's luma (0-255).
   */
  frame(display, captureWall, periodMs, marker) {
    if (!(marker > 128) || display - this.lastMarkerDisplay < ZEROHOP_MARKER_PERIOD_MS / 2) return;
    this.lastMarkerDisplay = display;
    this.markersSeen++;
    // The marker instant: the latest full second of the capture clock at or before the frame's capture
    // (it lies in the frame's exposure, the period before), on the wall clock by the server's offset.
    let phase = null;
    if (this.wallMinusCapture !== null) {
      const since =
          ((captureWall - this.wallMinusCapture) % ZEROHOP_MARKER_PERIOD_MS + ZEROHOP_MARKER_PERIOD_MS) %
          ZEROHOP_MARKER_PERIOD_MS;
      if (since <= periodMs + 2) phase = -since;  // else the offset does not fit this frame: no audio figure
    }
    this.markers.push({display, captureWall, phase});
    if (this.markers.length > 10) this.markers.shift();
    this.match();
  }

  match() {
    for (let i = 0; i < this.clicks.length; i++) {
      const click = this.clicks[i];
      let best = -1;
      for (let j = 0; j < this.markers.length; j++) {
        const d = Math.abs(click - this.markers[j].display);
        if (d < ZEROHOP_AV_PAIR_WINDOW_MS && (best < 0 || d < Math.abs(click - this.markers[best].display)))
          best = j;
      }
      if (best < 0) continue;
      const m = this.markers[best];
      const video = performance.timeOrigin + m.display - m.captureWall;
      const audio = m.phase === null ? null : performance.timeOrigin + click - (m.captureWall + m.phase);
      this.pairs.push({clickMinusMarker: click - m.display, audio, video, phase: m.phase});
      this.pairCount++;
      if (this.pairs.length > ZEROHOP_AV_KEEP) this.pairs.shift();
      this.clicks.splice(i--, 1);
      this.markers.splice(best, 1);
    }
    // What can no longer pair: older than the window behind the newest of either.
    const newest = Math.max(this.clicks.at(-1) ?? -Infinity, this.markers.at(-1)?.display ?? -Infinity);
    this.clicks = this.clicks.filter((c) => newest - c < 2 * ZEROHOP_AV_PAIR_WINDOW_MS);
    this.markers = this.markers.filter((m) => newest - m.display < 2 * ZEROHOP_AV_PAIR_WINDOW_MS);
  }

  summary() {
    const p50 = (key) => zerohopPercentile(this.pairs.map((p) => p[key]).filter((v) => v !== null), 0.5);
    return {
      state: this.state,
      detector: this.detector,
      pairs: this.pairCount,
      clicksHeard: this.clicksHeard,
      markersSeen: this.markersSeen,
      clickMinusMarkerP50: p50('clickMinusMarker'),
      audioCaptureToPlayoutP50: p50('audio'),
      videoCaptureToDisplayP50: p50('video'),
      phaseP50: p50('phase'),
      last: this.pairs,  // the pairs kept (the last ZEROHOP_AV_KEEP), oldest first
      // what the audio graph itself adds before the speaker, as the browser reports it (s -> ms)
      baseLatencyMs: this.context ? 1000 * (this.context.baseLatency || 0) : null,
      outputLatencyMs: this.context && 'outputLatency' in this.context ? 1000 * this.context.outputLatency :
                                                                         null,
    };
  }
}
