// zerohop viewer, part 2 of 3: the latency chart: a row a second of where capture->display went (the
// server's stages from /stats, network, jitter buffer, decode, display), the legend that names a stage
// holding half of it, and the stacked bars with the p50/p99 lines of the last ZEROHOP_CHART_SECONDS.
// Plain browser JavaScript; web/viewer.js makes one with zerohopLatencyChart() and calls it each second.
'use strict';

const ZEROHOP_CHART_SECONDS = 60;

// The chart of the page whose state is `zh` (window.zerohop: latencyP50/P99, lastStats, webrtc, history);
// `$` finds an element by id; fmtMs and num format and check numbers as the page's table does.
// Returns {sample(): the row of this second (appended to zh.history), updateLegend(row), draw()}.
function zerohopLatencyChart({zh, $, fmtMs, num}) {
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

  return {sample: sampleHistory, updateLegend, draw: drawChart};
}
