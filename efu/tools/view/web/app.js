// SPDX-License-Identifier: BSD-2-Clause
// efu-view's page: polls the JSON API (docs/tools.md, "efu-view") and draws the detector image,
// the TOF spectra, regions, beam monitors, rates and efu's health. No framework, no build step.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const STATE_MS = 500;          // /api/state poll period
  const DATA_MS = 1000;          // image and spectra poll period
  const NO_DATA_S = 5;           // banner after this long without a message
  const FETCH_TIMEOUT_MS = 8000; // a hung request must not stall its poll loop

  // ---------------------------------------------------------------- test / console hooks
  let resolveImageDrawn;
  const efuView = {
    lastState: null,
    image: null,          // the last image fetched: {source, gated, width, height, firstPixel, max, counts}
    drawn: null,          // the last image drawn: {seq, source, gated, width, height, sum, max}
    imageDrawn: new Promise((resolve) => { resolveImageDrawn = resolve; }),
    tof: null,            // the last spectra fetched: {source, main, rois: {id: spectrum}}
    tofPlot: null,        // the spectrum's plot box (CSS px of #tof-canvas) and its x range in ns
    // Canvas CSS pixel -> detector pixel of the image canvas (what the page draws where).
    transform: () => imageTransform(),
    canvasToPixel: (cx, cy) => canvasToPixel(cx, cy),
  };
  window.efuView = efuView;

  // ---------------------------------------------------------------- formatting
  const nf = new Intl.NumberFormat('en-US');
  const fmtInt = (v) => (v === null || v === undefined ? '–' : nf.format(Math.round(v)));
  function fmtNum(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return '–';
    if (Number.isInteger(v)) return nf.format(v);
    const a = Math.abs(v);
    if (a >= 1000) return nf.format(Math.round(v));
    if (a >= 100) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    if (a === 0) return '0';
    return v.toPrecision(2);
  }
  function si(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return trim(v / 1e9) + 'G';
    if (a >= 1e6) return trim(v / 1e6) + 'M';
    if (a >= 1e4) return trim(v / 1e3) + 'k';
    return trim(v);
  }
  function trim(v) { return String(Number(v.toPrecision(4))); }
  function clock(ns, ms) {
    if (!ns) return '–';
    const d = new Date(ns / 1e6);
    const p = (n, w = 2) => String(n).padStart(w, '0');
    const s = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
    return ms ? `${s}.${p(d.getMilliseconds(), 3)}` : s;
  }
  function age(s) {
    if (s < 60) return s.toFixed(1) + ' s';
    if (s < 3600) return (s / 60).toFixed(1) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }
  const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

  // ---------------------------------------------------------------- colours
  // efu-dump's colour map (efu/tools/dump/Image.cpp): viridis at 9 points, linear in between.
  const ANCHORS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
    [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];
  const LUT = new Uint32Array(256); // ABGR words for a little-endian ImageData view
  const LUT_RGB = [];
  for (let i = 0; i < 256; ++i) {
    const pos = (i / 255) * (ANCHORS.length - 1);
    const lo = Math.min(Math.floor(pos), ANCHORS.length - 2);
    const f = pos - lo;
    const c = [0, 1, 2].map((k) => Math.round(ANCHORS[lo][k] + (ANCHORS[lo + 1][k] - ANCHORS[lo][k]) * f));
    LUT_RGB.push(c);
    LUT[i] = (255 << 24 | c[2] << 16 | c[1] << 8 | c[0]) >>> 0;
  }
  const LITTLE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  // Regions: colours that stand out on viridis and on the dark spectrum panel.
  const ROI_COLOURS = ['#ff4d4d', '#ffffff', '#ff9f1a', '#e04dff', '#00e0ff', '#ff8fd0', '#b8ff4d', '#c8a2ff'];
  const roiColour = (id) => ROI_COLOURS[(id - 1) % ROI_COLOURS.length];
  const SOURCE_COLOURS = ['#4fa3e0', '#3ccf6e', '#ffb020', '#e04dff', '#ff4d4d', '#00e0ff'];

  // ---------------------------------------------------------------- HTTP
  async function request(method, path, body, kind = 'json') {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
    try {
      const opts = { method, signal: ctl.signal, cache: 'no-store' };
      if (body !== undefined) {
        opts.body = JSON.stringify(body);
        opts.headers = { 'Content-Type': 'application/json' };
      }
      const r = await fetch(path, opts);
      if (!r.ok) {
        let msg = `${r.status} ${r.statusText}`;
        try { const j = await r.json(); if (j && j.error) msg = j.error; } catch (e) { /* not JSON */ }
        const err = new Error(msg);
        err.status = r.status;
        throw err;
      }
      if (kind === 'binary') return { headers: r.headers, buffer: await r.arrayBuffer() };
      return await r.json();
    } finally {
      clearTimeout(timer);
    }
  }

  // Runs fn every `period` ms, never two at once; kick() runs it again as soon as it is free.
  function poller(period, fn) {
    let busy = false, again = false, timer = null;
    async function run() {
      clearTimeout(timer);
      if (busy) { again = true; return; }
      busy = true;
      const t0 = performance.now();
      try { await fn(); } catch (e) { console.warn(e); }
      busy = false;
      if (again) { again = false; timer = setTimeout(run, 0); return; }
      timer = setTimeout(run, Math.max(0, period - (performance.now() - t0)));
    }
    run();
    return { kick: run };
  }

  let errorTimer = null;
  function showError(msg) {
    $('control-error').textContent = msg;
    clearTimeout(errorTimer);
    errorTimer = setTimeout(() => { $('control-error').textContent = ''; }, 6000);
  }
  async function post(path, body) {
    try {
      const r = await request('POST', path, body);
      statePoll.kick();
      return r;
    } catch (e) {
      showError(`${path}: ${e.message}`);
      return null;
    }
  }

  // ---------------------------------------------------------------- canvas helpers
  // Sizes a canvas's backing store to its CSS box times the device pixel ratio; returns a
  // context drawing in CSS pixels.
  function fitCanvas(canvas) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { ctx, w: canvas.clientWidth, h: canvas.clientHeight, dpr };
  }

  // About n round tick values covering [lo, hi].
  function ticks(lo, hi, n) {
    if (!(hi > lo)) return { step: 1, values: [lo] };
    const raw = (hi - lo) / Math.max(1, n);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const norm = raw / mag;
    const step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
    const values = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
      values.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return { step, values };
  }
  function tickLabel(v, step) {
    if (Math.abs(v) >= 1e4) return si(v);
    const dec = Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
    return v.toFixed(dec);
  }

  // A 2-D plot frame: box in CSS px, x/y ranges, grid and labels. Returns value->px maps.
  function frame(ctx, box, xr, yr, opt = {}) {
    const { x, y, w, h } = box;
    const ylog = !!opt.ylog;
    const ymap = ylog
      ? (v) => y + h - (Math.log10(Math.max(v, yr[0])) - Math.log10(yr[0])) / (Math.log10(yr[1]) - Math.log10(yr[0])) * h
      : (v) => y + h - (v - yr[0]) / (yr[1] - yr[0]) * h;
    const xmap = (v) => x + (v - xr[0]) / (xr[1] - xr[0]) * w;
    ctx.save();
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillStyle = '#0b0e12';
    ctx.fillRect(x, y, w, h);
    ctx.strokeStyle = '#232a34';
    ctx.lineWidth = 1;
    ctx.fillStyle = '#8590a0';
    // y grid
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    if (ylog) {
      for (let e = Math.ceil(Math.log10(yr[0])); e <= Math.log10(yr[1]) + 1e-9; ++e) {
        const py = Math.round(ymap(Math.pow(10, e))) + 0.5;
        ctx.beginPath(); ctx.moveTo(x, py); ctx.lineTo(x + w, py); ctx.stroke();
        ctx.fillText(e >= 4 ? si(Math.pow(10, e)) : String(Math.pow(10, e)), x - 4, py);
      }
    } else {
      const t = ticks(yr[0], yr[1], Math.max(2, Math.floor(h / 28)));
      for (const v of t.values) {
        const py = Math.round(ymap(v)) + 0.5;
        ctx.beginPath(); ctx.moveTo(x, py); ctx.lineTo(x + w, py); ctx.stroke();
        ctx.fillText(tickLabel(v, t.step), x - 4, py);
      }
    }
    // x grid
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const tx = ticks(xr[0], xr[1], Math.max(2, Math.floor(w / (opt.xTickPx || 70))));
    for (const v of tx.values) {
      const px = Math.round(xmap(v)) + 0.5;
      ctx.beginPath(); ctx.moveTo(px, y); ctx.lineTo(px, y + h); ctx.stroke();
      ctx.fillText(opt.xLabel ? opt.xLabel(v, tx.step) : tickLabel(v, tx.step), px, y + h + 3);
    }
    ctx.strokeStyle = '#3a4350';
    ctx.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
    if (opt.xTitle) {
      ctx.textAlign = 'right';
      ctx.fillText(opt.xTitle, x + w, y + h + 14);
    }
    ctx.restore();
    return { xmap, ymap };
  }

  // ---------------------------------------------------------------- page state
  const ui = {
    source: null,        // selected ev44 source
    colour: 'lin',
    square: false,
    roiMode: false,
    gated: false,
    tofRebin: 10,
    tofUnit: 'ms',
    tofLog: false,
    monMode: 'latest',
    counterFilter: '',
  };
  let firstStateSeenNs = 0;

  // ---------------------------------------------------------------- state poll
  const statePoll = poller(STATE_MS, async () => {
    let st;
    try {
      st = await request('GET', 'api/state');
    } catch (e) {
      notAnswering(e);
      return;
    }
    answeringSince = null;
    efuView.lastState = st;
    onState(st);
  });

  let answeringSince = null;
  function notAnswering(e) {
    if (!answeringSince) answeringSince = Date.now() * 1e6;
    const b = $('banner');
    b.textContent = `efu-view not answering since ${clock(answeringSince)} (${e.message || e})`;
    b.hidden = false;
    b.dataset.kind = 'not-answering';
    $('conn-dot').className = 'dot bad';
    $('conn-text').textContent = 'efu-view not answering';
  }

  function selectedSource(st) {
    return (st.sources || []).find((s) => s.name === ui.source) || null;
  }

  function onState(st) {
    if (!firstStateSeenNs) firstStateSeenNs = st.now_ns;
    // header
    $('program').textContent = st.program || 'efu-view';
    $('version').textContent = st.version || '';
    const br = st.broker || {};
    $('broker').textContent = br.bootstrap || '–';
    $('topics').textContent = (br.topics || []).join(', ');
    const msgs = st.messages || {};
    const bad = (msgs.undecodable || 0) + (msgs.unknown || 0);
    $('messages').innerHTML = fmtInt(msgs.total) +
      (bad ? ` <span class="bad" title="undecodable / unknown messages">(${fmtInt(msgs.undecodable)} undecodable, ${fmtInt(msgs.unknown)} unknown)</span>` : '') +
      (msgs.sources_dropped ? ` <span class="bad" title="sources over the limit, counted not kept">${fmtInt(msgs.sources_dropped)} sources dropped</span>` : '');
    const ctl = st.control || {};
    $('since').textContent = clock(ctl.since_ns) + (ctl.window_s ? ` (last ${ctl.window_s} s)` : '');

    // connection and banner
    const last = br.last_message_ns || 0;
    const quiet = last ? (st.now_ns - last) / 1e9 : (st.now_ns - firstStateSeenNs) / 1e9;
    const banner = $('banner');
    let text = '';
    if (quiet > NO_DATA_S) {
      text = last ? `no data since ${clock(last)}` : `no data received (since ${clock(ctl.since_ns || firstStateSeenNs)})`;
      if (br.error) text += ` — ${br.error}`;
    }
    banner.textContent = text;
    banner.hidden = !text;
    banner.dataset.kind = text ? 'no-data' : '';
    const dot = $('conn-dot');
    if (!br.connected) {
      dot.className = 'dot bad';
      $('conn-text').textContent = 'broker not connected' + (br.error ? `: ${br.error}` : '');
    } else if (ctl.paused) {
      dot.className = 'dot paused';
      $('conn-text').textContent = 'paused';
    } else {
      dot.className = text ? 'dot bad' : 'dot ok';
      $('conn-text').textContent = last ? `last message ${clock(last, true)}` : 'connected, no message yet';
    }

    // sources
    const sel = $('source-select');
    const names = (st.sources || []).map((s) => s.name);
    if (sel.dataset.names !== names.join('\n')) {
      sel.dataset.names = names.join('\n');
      sel.innerHTML = names.map((n) => `<option>${esc(n)}</option>`).join('');
    }
    if (!names.includes(ui.source)) ui.source = names.length ? names[0] : null;
    if (ui.source !== null) sel.value = ui.source;
    const src = selectedSource(st);
    $('events').textContent = src ? fmtInt(src.events) : '–';
    $('events-total').textContent = src ? fmtInt(src.events_total) : '–';

    // controls
    const pb = $('btn-pause');
    pb.textContent = ctl.paused ? 'Resume' : 'Pause';
    pb.classList.toggle('on', !!ctl.paused);
    if (document.activeElement !== $('window-seconds')) {
      $(ctl.window_s ? 'acc-window' : 'acc-all').checked = true;
      if (ctl.window_s) $('window-seconds').value = ctl.window_s;
    }
    const hasGate = !!st.gate;
    $('show-gated').disabled = !hasGate;
    if (!hasGate) { $('show-gated').checked = false; ui.gated = false; }
    $('btn-clear-gate').disabled = !hasGate;
    $('gate-info').textContent = hasGate ? `gate ${tofText(st.gate.tof_min_ns)} – ${tofText(st.gate.tof_max_ns)} ${unitName()}` : '';

    renderRois(st);
    renderSources(st);
    renderRates(st);
    renderMonitors(st);
    renderHealth(st);
    drawImage();  // regions may have changed
    drawTof();
  }

  // ---------------------------------------------------------------- regions
  // Updates a table body in place, one row per key: rows and cells are only touched when their
  // content changes, so hover titles stay up and a click on a button is not lost to a redraw.
  // cells(item): [{h: html, c: class, t: title, v: data-value}]
  function syncRows(tbody, items, keyOf, cells, rowClass = () => '', rowData = () => ({})) {
    const old = new Map();
    for (const tr of [...tbody.children]) {
      if (tr.dataset.key === undefined) tr.remove(); else old.set(tr.dataset.key, tr);
    }
    let prev = null;
    for (const item of items) {
      const key = String(keyOf(item));
      let tr = old.get(key);
      old.delete(key);
      if (!tr) {
        tr = document.createElement('tr');
        tr.dataset.key = key;
        Object.assign(tr.dataset, rowData(item));
      }
      const cs = cells(item);
      while (tr.children.length < cs.length) tr.appendChild(document.createElement('td'));
      while (tr.children.length > cs.length) tr.lastChild.remove();
      cs.forEach((c, k) => {
        const td = tr.children[k];
        if (td.dataset.h !== c.h) { td.innerHTML = c.h; td.dataset.h = c.h; }
        if (td.className !== (c.c || '')) td.className = c.c || '';
        if (td.title !== (c.t || '')) td.title = c.t || '';
        if (c.v !== undefined && td.dataset.value !== String(c.v)) td.dataset.value = String(c.v);
      });
      const cls = rowClass(item);
      if (tr.className !== cls) tr.className = cls;
      const at = prev ? prev.nextSibling : tbody.firstChild;
      if (at !== tr) tbody.insertBefore(tr, at);
      prev = tr;
    }
    for (const tr of old.values()) tr.remove();
  }
  function placeholderRow(tbody, cols, text) {
    tbody.innerHTML = `<tr><td colspan="${cols}" class="dim">${esc(text)}</td></tr>`;
  }

  function renderRois(st) {
    const rois = st.rois || [];
    syncRows($('roi-list'), rois, (r) => r.id, (r) => [
      { h: `<span class="swatch" style="background:${roiColour(r.id)}"></span>` },
      { h: `${r.id}${r.source !== ui.source ? ` <span class="dim">(${esc(r.source)})</span>` : ''}`, c: 'num' },
      { h: `${r.x0}–${r.x1 - 1}`, c: 'num', t: `x in [${r.x0}, ${r.x1})` },
      { h: `${r.y0}–${r.y1 - 1}`, c: 'num', t: `y in [${r.y0}, ${r.y1})` },
      { h: fmtInt(r.counts), c: 'num roi-counts', v: r.counts,
        t: `counts of the image inside it (since ${clock(st.control && st.control.since_ns)}); its spectrum counts since it was drawn, ${clock(r.since_ns)}` },
      { h: fmtNum(r.events_per_s), c: 'num roi-rate', t: 'events in the region in the last closed second' },
      { h: `<button class="x" data-delete="${r.id}" title="Delete region ${r.id}">✕</button>`, c: 'r' },
    ], () => '', (r) => ({ roiId: String(r.id) }));
    $('roi-empty').hidden = rois.length > 0;
  }

  $('roi-list').addEventListener('click', async (ev) => {
    const id = ev.target.dataset && ev.target.dataset.delete;
    if (!id) return;
    try {
      await request('DELETE', `api/roi?id=${encodeURIComponent(id)}`);
    } catch (e) {
      showError(`delete region ${id}: ${e.message}`);
    }
    statePoll.kick();
    dataPoll.kick();
  });

  // ---------------------------------------------------------------- sources and rates
  function renderSources(st) {
    syncRows($('sources-list'), st.sources || [], (s) => `${s.topic}/${s.name}`, (s) => {
      const colour = SOURCE_COLOURS[(st.sources || []).indexOf(s) % SOURCE_COLOURS.length];
      return [
        { h: `<span class="swatch" style="background:${colour}"></span> ${esc(s.name)}` +
            (s.negative_tof ? ` <span class="badge">tof&lt;0 ${fmtInt(s.negative_tof)}</span>` : '') +
            (s.outside_image ? ` <span class="badge">off image ${fmtInt(s.outside_image)}</span>` : ''),
          t: `topic ${s.topic}; ${fmtInt(s.negative_tof)} events with a negative TOF, ${fmtInt(s.tof_above_range)} at or above the TOF range, ${fmtInt(s.outside_image)} outside the image` },
        { h: fmtInt(s.events), c: 'num', t: `in the accumulation; ${fmtInt(s.events_total)} since start` },
        { h: fmtNum(s.events_per_s), c: 'num' },
        { h: fmtNum(s.pulses_per_s), c: 'num' },
        { h: clock(s.last_pulse_ns, true), c: 'num', t: 'reference_time of the last pulse' },
        { h: fmtInt(s.message_id_gaps), c: 'num' + (s.message_id_gaps > 0 ? ' bad' : ''),
          t: `messages missing by message_id (ids arriving out of order across partitions are no gap); ` +
            `${fmtInt(s.message_id_duplicates)} duplicates, ${fmtInt(s.message_id_restarts)} producer restarts` },
      ];
    });
  }


  function renderRates(st) {
    const { ctx, w, h } = fitCanvas($('rates-canvas'));
    ctx.clearRect(0, 0, w, h);
    const sources = st.sources || [];
    let span = 10, ymax = 1;
    for (const s of sources) {
      for (const p of s.history || []) {
        span = Math.max(span, (st.now_ns - p.t_ns) / 1e9);
        ymax = Math.max(ymax, p.events_per_s || 0);
      }
    }
    span = Math.ceil(span / 10) * 10;
    $('history-span').textContent = span;
    const box = { x: 48, y: 4, w: w - 66, h: h - 20 };
    const { xmap, ymap } = frame(ctx, box, [-span, 0], [0, ymax * 1.1],
      { xLabel: (v) => (v === 0 ? 'now' : `${v} s`), xTickPx: 80 });
    sources.forEach((s, i) => {
      const pts = (s.history || []).filter((p) => p.t_ns <= st.now_ns);
      if (!pts.length) return;
      ctx.strokeStyle = SOURCE_COLOURS[i % SOURCE_COLOURS.length];
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      pts.forEach((p, k) => {
        const px = xmap(-(st.now_ns - p.t_ns) / 1e9), py = ymap(p.events_per_s || 0);
        if (k) ctx.lineTo(px, py); else ctx.moveTo(px, py);
      });
      ctx.stroke();
    });
  }

  // ---------------------------------------------------------------- beam monitors
  function renderMonitors(st) {
    const mons = st.monitors || [];
    const root = $('monitors');
    $('monitors-empty').hidden = mons.length > 0;
    const keep = new Set();
    for (const m of mons) {
      const key = `${m.topic}/${m.name}`;
      keep.add(key);
      let el = root.querySelector(`[data-key="${CSS.escape(key)}"]`);
      if (!el) {
        el = document.createElement('div');
        el.className = 'monitor';
        el.dataset.key = key;
        el.innerHTML = '<div class="mtitle"></div><canvas></canvas>';
        root.appendChild(el);
      }
      const curves = monitorCurves(m);
      // Variables not along the axis (cbm's frame_total, one value per pulse) are written out.
      const values = (m.variables || []).filter((v) => !curves.includes(v) && Array.isArray(v[ui.monMode]))
        .map((v) => `${esc(v.name)} ${v[ui.monMode].map(fmtInt).join(' ')}${v.unit ? ' ' + esc(v.unit) : ''}`);
      const ax = m.axis ? ` vs ${esc(m.axis.name || 'axis')} [${esc(monitorUnit(m))}]` : ' vs index';
      el.querySelector('.mtitle').innerHTML = `<b>${esc(m.name)}</b> ${curves.map((v) => `${esc(v.name)} [${esc(v.unit || '')}]`).join(', ')}${ax}` +
        (values.length ? ` · ${values.join(' · ')}` : '') +
        ` · ${fmtInt(m.messages)} messages · ${clock(m.timestamp_ns)}`;
      drawMonitor(el.querySelector('canvas'), m);
    }
    for (const el of [...root.children]) if (!keep.has(el.dataset.key)) el.remove();
  }

  // The unit a monitor's axis is drawn in: ns axes in µs or ms when they span that much.
  function monitorUnit(m) {
    const v = (m.axis && m.axis.values) || [];
    const unit = (m.axis && m.axis.unit) || '';
    if (unit !== 'ns' || v.length < 2) return unit;
    const span = Math.abs(v[v.length - 1] - v[0]);
    return span >= 1e6 ? 'ms' : span >= 1e3 ? 'µs' : 'ns';
  }

  // The variables drawn as curves: those along the monitor's axis (named in their axes), or,
  // without an axis, every one of more than one value.
  function monitorCurves(m) {
    return (m.variables || []).filter((v) => Array.isArray(v[ui.monMode]) &&
      (m.axis ? (v.axes || []).includes(m.axis.name) : v[ui.monMode].length > 1));
  }

  function drawMonitor(canvas, m) {
    const { ctx, w, h } = fitCanvas(canvas);
    ctx.clearRect(0, 0, w, h);
    const vars = monitorCurves(m);
    const n = vars.reduce((a, v) => Math.max(a, v[ui.monMode].length), 0);
    const axis = m.axis && Array.isArray(m.axis.values) && m.axis.values.length >= n && n > 0 ? m.axis : null;
    // An axis of n + 1 values gives bin edges, of n values bin positions; none: the index.
    const xs = (i) => (axis ? axis.values[i] : i);
    const xEnd = axis ? axis.values[axis.values.length > n ? n : n - 1] : Math.max(1, n - 1);
    let ymax = 1;
    for (const v of vars) for (const y of v[ui.monMode]) ymax = Math.max(ymax, y);
    const unit = axis ? monitorUnit(m) : '';
    const scale = axis && axis.unit === 'ns' ? { ms: 1e6, 'µs': 1e3 }[unit] || 1 : 1;
    const box = { x: 40, y: 3, w: w - 52, h: h - 17 };
    const xr = [xs(0) / scale, xEnd / scale];
    if (!(xr[1] > xr[0])) xr[1] = xr[0] + 1;
    const { xmap, ymap } = frame(ctx, box, xr, [0, ymax * 1.1],
      { xTickPx: 50 });
    vars.forEach((v, k) => {
      const data = v[ui.monMode];
      ctx.strokeStyle = SOURCE_COLOURS[k % SOURCE_COLOURS.length];
      ctx.lineWidth = 1.3;
      ctx.beginPath();
      for (let i = 0; i < data.length; ++i) {
        const x0 = xmap(xs(i) / scale);
        const x1 = axis && axis.values.length > n ? xmap(axis.values[i + 1] / scale) : x0;
        const y = ymap(data[i]);
        if (i) ctx.lineTo(x0, y); else ctx.moveTo(x0, y);
        if (x1 !== x0) ctx.lineTo(x1, y);
      }
      ctx.stroke();
    });
  }

  // ---------------------------------------------------------------- health
  function renderHealth(st) {
    const health = st.health || {};
    const services = health.services || [];
    if (!services.length) {
      placeholderRow($('services-list'), 6, 'no x5f2 status seen');
    } else {
      syncRows($('services-list'), services, (s) => `${s.topic}/${s.service_id}`, (s) => {
        const ageS = s.last_ns ? (st.now_ns - s.last_ns) / 1e9 : Infinity;
        // update_interval: ms between x5f2 messages (efu-dump's name for it); stale after 3 of
        // them, or after 10 s when the interval is not known.
        const interval = Number(s.update_interval) || 0;
        const limit = interval > 0 ? 3 * interval / 1000 : 10;
        return [
          { h: esc(s.service_id), t: JSON.stringify(s.status ?? null) },
          { h: `${esc(s.software_name)} ${esc(s.software_version)}` },
          { h: esc(s.host_name) },
          { h: esc(s.process_id), c: 'num' },
          { h: esc(s.topic) },
          { h: Number.isFinite(ageS) ? age(ageS) : '–', c: 'num' + (ageS > limit ? ' bad' : ''), t: `stale after ${trim(limit)} s` },
        ];
      });
    }

    const counters = (health.counters || []).slice();
    counters.sort((a, b) => (b.losing - a.losing) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const losing = counters.filter((c) => c.losing).length;
    $('health-info').innerHTML = `${counters.length} counters` + (losing ? ` · <span class="bad">${losing} losing</span>` : '');
    const f = ui.counterFilter.toLowerCase();
    const shown = counters.filter((c) => !f || (c.source || c.name).toLowerCase().includes(f));
    if (!shown.length) {
      placeholderRow($('counters-list'), 4, counters.length ? 'no counter matches the filter' : 'no f144 counters seen (subscribe to <instrument>_stats)');
      return;
    }
    syncRows($('counters-list'), shown, (c) => c.source, (c) => [
      { h: esc(c.name), t: `${c.source}${c.kind ? ` (${c.kind})` : ''}\n${c.meaning || '(not in docs/counters.md)'}` },
      { h: fmtNum(c.value), c: 'num' },
      { h: c.kind === 'gauge' ? '' : fmtNum(c.rate), c: 'num' },
      { h: esc(c.unit || ''), c: 'dim' },
    ], (c) => (c.losing ? 'losing' : ''));
  }


  // ---------------------------------------------------------------- image
  const imageCanvas = $('image-canvas');
  let view = { zoom: 1, cx: null, cy: null };   // detector point at the canvas centre
  let drag = null;                              // {kind: 'pan'|'roi', ...}
  let drawSeq = 0;
  let rendered = null;                          // {key, data, shownMax, sum, blockX, blockY}

  // The detector pixels each canvas (device) pixel shows along one axis, as [lo, hi) per canvas
  // index. Zoomed out (scale < 1) a canvas pixel shows every detector pixel whose centre lies in
  // it, so each detector pixel is shown exactly once and no event is hidden; zoomed in, the one
  // pixel under its centre. Empty range: outside the detector.
  function axisRanges(n, canvasN, off, scale) {
    const lo = new Int32Array(canvasN), hi = new Int32Array(canvasN);
    for (let c = 0; c < canvasN; ++c) {
      let a, b;
      if (scale >= 1) {
        a = Math.floor((c + 0.5 - off) / scale);
        b = a + 1;
      } else {
        a = Math.ceil((c - off) / scale - 0.5);
        b = Math.ceil((c + 1 - off) / scale - 0.5);
      }
      lo[c] = Math.max(0, Math.min(n, a));
      hi[c] = Math.max(0, Math.min(n, b));
    }
    return { lo, hi };
  }

  // Resamples the counts to the canvas (sums over what each canvas pixel shows) and colours them.
  function renderImage(img, t, cw, ch, dpr) {
    const key = [img.seq, cw, ch, dpr, t.offX, t.offY, t.scaleX, t.scaleY, ui.colour].join(',');
    if (rendered && rendered.key === key) return rendered;
    const xs = axisRanges(img.width, cw, t.offX * dpr, t.scaleX * dpr);
    const ys = axisRanges(img.height, ch, t.offY * dpr, t.scaleY * dpr);
    const values = new Float64Array(cw * ch).fill(-1); // -1: not the detector
    const rowSum = new Float64Array(img.width);
    const { counts, width } = img;
    let shownMax = 0;
    for (let cy = 0; cy < ch; ++cy) {
      const y0 = ys.lo[cy], y1 = ys.hi[cy];
      if (y1 <= y0) continue;
      rowSum.fill(0);
      for (let y = y0; y < y1; ++y) {
        const base = y * width;
        for (let x = 0; x < width; ++x) rowSum[x] += counts[base + x];
      }
      const out = cy * cw;
      for (let cx = 0; cx < cw; ++cx) {
        const x0 = xs.lo[cx], x1 = xs.hi[cx];
        if (x1 <= x0) continue;
        let v = 0;
        for (let x = x0; x < x1; ++x) v += rowSum[x];
        values[out + cx] = v;
        if (v > shownMax) shownMax = v;
      }
    }
    // As efu-dump colours: 0 black, 1 the dark end of viridis, the largest shown the bright end.
    const data = new ImageData(cw, ch);
    const px = new Uint32Array(data.data.buffer);
    const log = ui.colour === 'log';
    const top = log ? Math.log1p(shownMax) : shownMax;
    const black = LITTLE ? 0xff000000 : 0x000000ff;
    const background = LITTLE ? 0xff120e0b : 0x0b0e12ff;
    for (let i = 0; i < values.length; ++i) {
      const v = values[i];
      if (v < 0) { px[i] = background; continue; }
      if (v === 0) { px[i] = black; continue; }
      const tt = log ? Math.log1p(v) / top : shownMax > 1 ? (v - 1) / (top - 1) : 1;
      const k = Math.min(255, Math.max(0, Math.round(tt * 255)));
      if (LITTLE) {
        px[i] = LUT[k];
      } else {
        const [r, g, b] = LUT_RGB[k];
        px[i] = ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
      }
    }
    // detector pixels per canvas pixel (at most), for the caption
    const span = (r) => { let m = 0; for (let i = 0; i < r.lo.length; ++i) m = Math.max(m, r.hi[i] - r.lo[i]); return m; };
    rendered = { key, data, shownMax, blockX: span(xs), blockY: span(ys) };
    renderColourBar(shownMax, log);
    return rendered;
  }

  function renderColourBar(max, log) {
    const c = $('colorbar');
    c.width = 256;
    c.height = 1;
    const ctx = c.getContext('2d');
    const d = ctx.createImageData(256, 1);
    for (let i = 0; i < 256; ++i) {
      const [r, g, b] = LUT_RGB[i];
      d.data.set([r, g, b, 255], i * 4);
    }
    ctx.putImageData(d, 0, 0);
    $('cbar-min').textContent = max > 0 ? '1' : '0';
    $('cbar-max').textContent = fmtInt(max) + (log ? ' (log)' : '');
  }

  // The mapping the page draws with: canvas CSS px = off + scale * detector px.
  function imageTransform() {
    const img = efuView.image;
    const w = imageCanvas.clientWidth, h = imageCanvas.clientHeight;
    if (!img) return null;
    let sx = w / img.width, sy = h / img.height;
    if (ui.square) sx = sy = Math.min(sx, sy);
    sx *= view.zoom;
    sy *= view.zoom;
    const cx = view.cx ?? img.width / 2, cy = view.cy ?? img.height / 2;
    return {
      scaleX: sx, scaleY: sy, offX: w / 2 - cx * sx, offY: h / 2 - cy * sy, cssWidth: w, cssHeight: h,
      dpr: window.devicePixelRatio || 1,
    };
  }
  function canvasToPixel(px, py) {
    const t = imageTransform();
    if (!t) return null;
    return { x: (px - t.offX) / t.scaleX, y: (py - t.offY) / t.scaleY };
  }

  function drawImage() {
    const { ctx, w, h, dpr } = fitCanvas(imageCanvas);
    ctx.fillStyle = '#000';
    ctx.fillRect(0, 0, w, h);
    const img = efuView.image;
    const st = efuView.lastState;
    if (!img) {
      ctx.fillStyle = '#8590a0';
      ctx.font = '14px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(imageMessage || 'waiting for an image…', w / 2, h / 2);
      return;
    }
    const t = imageTransform();
    const r = renderImage(img, t, imageCanvas.width, imageCanvas.height, dpr);
    ctx.putImageData(r.data, 0, 0);
    // regions of this source
    ctx.font = 'bold 11px system-ui, sans-serif';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    for (const r of (st && st.rois) || []) {
      if (r.source !== img.source) continue;
      const x = t.offX + r.x0 * t.scaleX, y = t.offY + r.y0 * t.scaleY;
      const rw = (r.x1 - r.x0) * t.scaleX, rh = (r.y1 - r.y0) * t.scaleY;
      ctx.strokeStyle = roiColour(r.id);
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x, y, rw, rh);
      const label = `#${r.id}`;
      const lw = ctx.measureText(label).width + 6;
      ctx.fillStyle = 'rgba(0,0,0,.7)';
      ctx.fillRect(x, y - 14 < 0 ? y : y - 14, lw, 14);
      ctx.fillStyle = roiColour(r.id);
      ctx.fillText(label, x + 3, (y - 14 < 0 ? y : y - 14) + 1);
    }
    // the region being drawn
    if (drag && drag.kind === 'roi') {
      const rr = dragRect(drag);
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 1;
      ctx.strokeRect(t.offX + rr.x0 * t.scaleX, t.offY + rr.y0 * t.scaleY, (rr.x1 - rr.x0) * t.scaleX, (rr.y1 - rr.y0) * t.scaleY);
      ctx.setLineDash([]);
    }
    const d = efuView.drawn = {
      seq: ++drawSeq, imageSeq: img.seq, source: img.source, gated: img.gated, width: img.width,
      height: img.height, sum: img.sum, max: img.countMax, firstPixel: img.firstPixel,
      shownMax: r.shownMax, blockX: r.blockX, blockY: r.blockY,
    };
    const block = r.blockX > 1 || r.blockY > 1 ? ` · screen pixel = ${r.blockX} × ${r.blockY} detector pixels (sum)` : '';
    $('image-info').textContent = `${img.source}${img.gated ? ' · gated' : ''} · ${img.width} × ${img.height} · ` +
      `${fmtInt(d.sum)} counts · max ${fmtInt(d.max)}/pixel${block}${view.zoom > 1 ? ` · zoom ×${view.zoom.toFixed(1)}` : ''}`;
    if (document.body.dataset.imageDrawn !== '1') {
      document.body.dataset.imageDrawn = '1';
      resolveImageDrawn(d);
    }
  }

  let imageMessage = '';
  let imageSeq = 0;
  async function fetchImage() {
    const src = ui.source;
    const st = efuView.lastState;
    if (!src || !st) return;
    if (!st.geometry) {
      efuView.image = null;
      imageMessage = 'no image: efu-view runs without --geometry';
      drawImage();
      return;
    }
    const gated = ui.gated && !!st.gate;
    let r;
    try {
      r = await request('GET', `api/image?source=${encodeURIComponent(src)}${gated ? '&gated=1' : ''}`, undefined, 'binary');
    } catch (e) {
      efuView.image = null;
      imageMessage = `no image: ${e.message}`;
      drawImage();
      return;
    }
    const width = Number(r.headers.get('X-Width')), height = Number(r.headers.get('X-Height'));
    if (!(width > 0 && height > 0) || r.buffer.byteLength !== width * height * 4) {
      efuView.image = null;
      imageMessage = `bad image answer: ${width} x ${height}, ${r.buffer.byteLength} bytes`;
      drawImage();
      return;
    }
    let counts;
    if (LITTLE) {
      counts = new Uint32Array(r.buffer);
    } else {
      const dv = new DataView(r.buffer);
      counts = new Uint32Array(width * height);
      for (let i = 0; i < counts.length; ++i) counts[i] = dv.getUint32(i * 4, true);
    }
    const prev = efuView.image;
    if (prev && (prev.width !== width || prev.height !== height || prev.source !== src)) {
      view = { zoom: 1, cx: null, cy: null };
    }
    let sum = 0, countMax = 0;
    for (let i = 0; i < counts.length; ++i) {
      const c = counts[i];
      sum += c;
      if (c > countMax) countMax = c;
    }
    efuView.image = {
      seq: ++imageSeq, source: src, gated, width, height, counts, sum, countMax,
      firstPixel: Number(r.headers.get('X-First-Pixel') || 1),
      max: Number(r.headers.get('X-Max') || 0),
      sinceNs: Number(r.headers.get('X-Since-Ns') || 0),
    };
    drawImage();
  }

  // --- pointer interaction on the image
  function pixelAt(ev) {
    const rect = imageCanvas.getBoundingClientRect();
    const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    return { px, py, ...canvasToPixel(px, py) };
  }
  function dragRect(d) {
    const img = efuView.image;
    const clampX = (v) => Math.max(0, Math.min(img.width, v));
    const clampY = (v) => Math.max(0, Math.min(img.height, v));
    // every detector pixel the rubber band touches: [floor(min), floor(max) + 1)
    return {
      x0: clampX(Math.floor(Math.min(d.a.x, d.b.x))), x1: clampX(Math.floor(Math.max(d.a.x, d.b.x)) + 1),
      y0: clampY(Math.floor(Math.min(d.a.y, d.b.y))), y1: clampY(Math.floor(Math.max(d.a.y, d.b.y)) + 1),
    };
  }
  imageCanvas.addEventListener('pointerdown', (ev) => {
    if (!efuView.image || ev.button !== 0) return;
    const p = pixelAt(ev);
    imageCanvas.setPointerCapture(ev.pointerId);
    if (ev.shiftKey || ui.roiMode) {
      drag = { kind: 'roi', a: p, b: p };
    } else {
      const t = imageTransform();
      drag = { kind: 'pan', start: p, cx: view.cx ?? efuView.image.width / 2, cy: view.cy ?? efuView.image.height / 2, t };
    }
    ev.preventDefault();
  });
  imageCanvas.addEventListener('pointermove', (ev) => {
    if (!efuView.image) return;
    const p = pixelAt(ev);
    if (drag && drag.kind === 'pan') {
      view.cx = drag.cx - (p.px - drag.start.px) / drag.t.scaleX;
      view.cy = drag.cy - (p.py - drag.start.py) / drag.t.scaleY;
      drawImage();
    } else if (drag && drag.kind === 'roi') {
      drag.b = p;
      drawImage();
    }
    showImageTip(p);
  });
  imageCanvas.addEventListener('pointerup', async (ev) => {
    if (!drag) return;
    const d = drag;
    drag = null;
    if (d.kind !== 'roi') return;
    d.b = pixelAt(ev);
    const r = dragRect(d);
    drawImage();
    // a shift-click is no region
    if (Math.abs(d.b.px - d.a.px) < 3 && Math.abs(d.b.py - d.a.py) < 3) return;
    if (r.x1 <= r.x0 || r.y1 <= r.y0) return;
    await post('api/roi', { source: efuView.image.source, x0: r.x0, y0: r.y0, x1: r.x1, y1: r.y1 });
    dataPoll.kick();
  });
  imageCanvas.addEventListener('pointercancel', () => { drag = null; drawImage(); });
  imageCanvas.addEventListener('pointerleave', () => { $('image-tip').hidden = true; });
  imageCanvas.addEventListener('wheel', (ev) => {
    if (!efuView.image) return;
    ev.preventDefault();
    const p = pixelAt(ev);
    const zoom = Math.max(1, Math.min(512, view.zoom * (ev.deltaY < 0 ? 1.25 : 0.8)));
    view.zoom = zoom;
    // keep the detector point under the pointer where it is
    const t = imageTransform();
    const w = imageCanvas.clientWidth, h = imageCanvas.clientHeight;
    view.cx = p.x - (p.px - w / 2) / t.scaleX;
    view.cy = p.y - (p.py - h / 2) / t.scaleY;
    if (zoom === 1) { view.cx = null; view.cy = null; }
    drawImage();
    showImageTip(pixelAt(ev));
  }, { passive: false });
  imageCanvas.addEventListener('dblclick', () => {
    view = { zoom: 1, cx: null, cy: null };
    drawImage();
  });

  function showImageTip(p) {
    const img = efuView.image;
    const tip = $('image-tip');
    const x = Math.floor(p.x), y = Math.floor(p.y);
    if (!img || x < 0 || y < 0 || x >= img.width || y >= img.height) { tip.hidden = true; return; }
    const counts = img.counts[y * img.width + x];
    const rois = ((efuView.lastState && efuView.lastState.rois) || [])
      .filter((r) => r.source === img.source && x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1)
      .map((r) => '#' + r.id);
    let text = `pixel  ${img.firstPixel + y * img.width + x}\nx ${x}  y ${y}\ncounts ${fmtInt(counts)}`;
    if (rois.length) text += `\nregion ${rois.join(' ')}`;
    if (drag && drag.kind === 'roi') {
      const r = dragRect(drag);
      text += `\nROI [${r.x0},${r.x1}) × [${r.y0},${r.y1})`;
    }
    tip.textContent = text;
    tip.hidden = false;
    const wrap = $('image-wrap');
    const left = p.px + 14 + tip.offsetWidth > wrap.clientWidth ? p.px - tip.offsetWidth - 10 : p.px + 14;
    const top = p.py + 14 + tip.offsetHeight > wrap.clientHeight ? p.py - tip.offsetHeight - 10 : p.py + 14;
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${Math.max(0, top)}px`;
  }

  // ---------------------------------------------------------------- time of flight
  const tofCanvas = $('tof-canvas');
  const UNIT = { ns: 1, us: 1e3, ms: 1e6 };
  const unitName = () => (ui.tofUnit === 'us' ? 'µs' : ui.tofUnit);
  const tofText = (ns) => trim(ns / UNIT[ui.tofUnit]);
  let tofDrag = null;
  let tofGeom = null; // {box, xr, xmap} of the last draw, for the pointer

  async function fetchTof() {
    const src = ui.source;
    const st = efuView.lastState;
    if (!src || !st) return;
    let main;
    try {
      main = await request('GET', `api/tof?source=${encodeURIComponent(src)}`);
    } catch (e) {
      efuView.tof = { source: src, main: null, rois: {}, error: e.message };
      drawTof();
      return;
    }
    const rois = {};
    // one request at a time, regions after the source
    for (const r of (st.rois || []).filter((q) => q.source === src)) {
      try {
        rois[r.id] = await request('GET', `api/tof?source=${encodeURIComponent(src)}&roi=${r.id}`);
      } catch (e) { /* deleted meanwhile */ }
    }
    efuView.tof = { source: src, main, rois };
    drawTof();
  }

  function rebin(bins, k) {
    const out = new Float64Array(Math.ceil(bins.length / k));
    for (let i = 0; i < bins.length; ++i) out[Math.floor(i / k)] += bins[i];
    return out;
  }

  function drawTof() {
    const { ctx, w, h } = fitCanvas(tofCanvas);
    ctx.clearRect(0, 0, w, h);
    const tof = efuView.tof;
    const st = efuView.lastState;
    if (!tof || !tof.main) {
      ctx.fillStyle = '#8590a0';
      ctx.font = '13px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.fillText(tof && tof.error ? `no spectrum: ${tof.error}` : 'waiting for a spectrum…', w / 2, h / 2);
      tofGeom = null;
      return;
    }
    const k = ui.tofRebin;
    const main = tof.main;
    const unit = UNIT[ui.tofUnit];
    const series = [{ id: 0, colour: '#4fa3e0', data: rebin(main.bins, k) }];
    for (const r of (st && st.rois) || []) {
      const s = tof.rois[r.id];
      if (s && r.source === tof.source) series.push({ id: r.id, colour: roiColour(r.id), data: rebin(s.bins, k) });
    }
    let ymax = 0, ymin = Infinity;
    for (const s of series) for (const v of s.data) { ymax = Math.max(ymax, v); if (v > 0) ymin = Math.min(ymin, v); }
    const log = ui.tofLog;
    const yr = log ? [0.5, Math.max(10, ymax * 2)] : [0, Math.max(1, ymax * 1.08)];
    const binNs = main.bin_ns * k;
    const nBins = main.bins.length;
    const xr = [0, (nBins * main.bin_ns) / unit];
    const box = { x: 52, y: 6, w: w - 62, h: h - 34 };
    const { xmap, ymap } = frame(ctx, box, xr, yr, { ylog: log, xTitle: `time of flight [${unitName()}]` });
    tofGeom = { box, xr, xmap, binNs, series, unit };
    efuView.tofPlot = { x: box.x, y: box.y, w: box.w, h: box.h, minNs: xr[0] * unit, maxNs: xr[1] * unit };
    const x0 = (i) => xmap(Math.min(i * binNs, nBins * main.bin_ns) / unit);
    ctx.save();
    ctx.beginPath();
    ctx.rect(box.x, box.y, box.w, box.h);
    ctx.clip();
    // gate (set) and gate being dragged
    const band = (a, b, fill, edge) => {
      const xa = xmap(a / unit), xb = xmap(b / unit);
      ctx.fillStyle = fill;
      ctx.fillRect(xa, box.y, xb - xa, box.h);
      ctx.strokeStyle = edge;
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(xa + 0.5, box.y); ctx.lineTo(xa + 0.5, box.y + box.h);
      ctx.moveTo(xb - 0.5, box.y); ctx.lineTo(xb - 0.5, box.y + box.h);
      ctx.stroke();
      ctx.setLineDash([]);
    };
    if (st && st.gate) band(st.gate.tof_min_ns, st.gate.tof_max_ns, 'rgba(255,176,32,.13)', '#ffb020');
    if (tofDrag) band(Math.min(tofDrag.a, tofDrag.b), Math.max(tofDrag.a, tofDrag.b), 'rgba(255,255,255,.12)', '#fff');
    const yBase = box.y + box.h;
    series.forEach((s, si) => {
      ctx.beginPath();
      ctx.moveTo(x0(0), yBase);
      for (let i = 0; i < s.data.length; ++i) {
        const y = s.data[i] > 0 || !log ? ymap(s.data[i]) : yBase;
        ctx.lineTo(x0(i), y);
        ctx.lineTo(x0(i + 1), y);
      }
      ctx.lineTo(x0(s.data.length), yBase);
      if (si === 0) {
        ctx.fillStyle = 'rgba(79,163,224,.28)';
        ctx.fill();
      }
      ctx.strokeStyle = s.colour;
      ctx.lineWidth = si === 0 ? 1.2 : 1.5;
      ctx.stroke();
    });
    ctx.restore();
    // legend
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'top';
    let ly = box.y + 4;
    for (const s of series) {
      const label = s.id ? `region #${s.id}` : `${tof.source} (all)`;
      ctx.fillStyle = s.colour;
      ctx.fillText(label, box.x + box.w - 6, ly);
      ly += 14;
    }
    $('tof-info').textContent = `${nBins} bins of ${trim(main.bin_ns / unit)} ${unitName()}` +
      (k > 1 ? `, shown ×${k}` : '') + ` · negative ${fmtInt(main.negative)} · ≥ max ${fmtInt(main.above_range)}`;
  }

  function tofAt(ev) {
    const rect = tofCanvas.getBoundingClientRect();
    const px = ev.clientX - rect.left, py = ev.clientY - rect.top;
    if (!tofGeom) return null;
    const { box, xr, unit } = tofGeom;
    const v = xr[0] + (px - box.x) / box.w * (xr[1] - xr[0]);
    return { px, py, ns: Math.max(0, Math.min(xr[1], v)) * unit, inside: px >= box.x && px <= box.x + box.w };
  }
  tofCanvas.addEventListener('pointerdown', (ev) => {
    const p = tofAt(ev);
    if (!p || !p.inside || ev.button !== 0) return;
    tofCanvas.setPointerCapture(ev.pointerId);
    tofDrag = { a: p.ns, b: p.ns, px: p.px };
    ev.preventDefault();
  });
  tofCanvas.addEventListener('pointermove', (ev) => {
    const p = tofAt(ev);
    if (!p) return;
    if (tofDrag) { tofDrag.b = p.ns; drawTof(); }
    showTofTip(p);
  });
  tofCanvas.addEventListener('pointerup', async (ev) => {
    if (!tofDrag) return;
    const p = tofAt(ev);
    const d = tofDrag;
    tofDrag = null;
    drawTof();
    if (!p || Math.abs(p.px - d.px) < 3) return; // a click, not a drag
    const lo = Math.round(Math.min(d.a, p.ns)), hi = Math.round(Math.max(d.a, p.ns));
    if (hi <= lo) return;
    await post('api/gate', { tof_min_ns: lo, tof_max_ns: hi });
  });
  tofCanvas.addEventListener('pointercancel', () => { tofDrag = null; drawTof(); });
  tofCanvas.addEventListener('pointerleave', () => { $('tof-tip').hidden = true; });

  function showTofTip(p) {
    const tip = $('tof-tip');
    if (!tofGeom || !p.inside) { tip.hidden = true; return; }
    const { binNs, series, unit } = tofGeom;
    const i = Math.floor(p.ns / binNs);
    if (i < 0 || i >= series[0].data.length) { tip.hidden = true; return; }
    const lines = [`${trim(i * binNs / unit)} – ${trim((i + 1) * binNs / unit)} ${unitName()}`];
    for (const s of series) lines.push(`${s.id ? '#' + s.id : 'all'}  ${fmtInt(s.data[i])}`);
    if (tofDrag) lines.push(`gate ${trim(Math.min(tofDrag.a, tofDrag.b) / unit)} – ${trim(Math.max(tofDrag.a, tofDrag.b) / unit)}`);
    tip.textContent = lines.join('\n');
    tip.hidden = false;
    const wrap = $('tof-wrap');
    const left = p.px + 14 + tip.offsetWidth > wrap.clientWidth ? p.px - tip.offsetWidth - 10 : p.px + 14;
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${Math.max(0, Math.min(p.py + 10, wrap.clientHeight - tip.offsetHeight))}px`;
  }

  // ---------------------------------------------------------------- data poll (image + spectra)
  const dataPoll = poller(DATA_MS, async () => {
    if (!efuView.lastState) return;
    await fetchImage();
    await fetchTof();
  });

  // ---------------------------------------------------------------- controls
  $('source-select').addEventListener('change', (ev) => {
    ui.source = ev.target.value;
    efuView.image = null;
    efuView.tof = null;
    imageMessage = '';
    view = { zoom: 1, cx: null, cy: null };
    drawImage();
    drawTof();
    if (efuView.lastState) onState(efuView.lastState);
    dataPoll.kick();
  });
  function sendWindow() {
    const all = $('acc-all').checked;
    const s = Number($('window-seconds').value);
    if (!all && !(s >= 1 && s <= 3600)) { showError('window: 1 to 3600 s'); return; }
    post('api/control', { action: 'window', seconds: all ? 0 : s }).then(() => dataPoll.kick());
  }
  $('acc-all').addEventListener('change', sendWindow);
  $('acc-window').addEventListener('change', sendWindow);
  $('window-seconds').addEventListener('change', () => { $('acc-window').checked = true; sendWindow(); });
  $('btn-reset').addEventListener('click', () => post('api/control', { action: 'reset' }).then(() => dataPoll.kick()));
  $('btn-pause').addEventListener('click', () => {
    const paused = !!(efuView.lastState && efuView.lastState.control && efuView.lastState.control.paused);
    post('api/control', { action: paused ? 'resume' : 'pause' });
  });
  $('color-scale').addEventListener('change', (ev) => { ui.colour = ev.target.value; drawImage(); });
  $('square-pixels').addEventListener('change', (ev) => { ui.square = ev.target.checked; view = { zoom: 1, cx: null, cy: null }; drawImage(); });
  $('roi-mode').addEventListener('change', (ev) => { ui.roiMode = ev.target.checked; });
  $('show-gated').addEventListener('change', (ev) => { ui.gated = ev.target.checked; dataPoll.kick(); });
  $('tof-rebin').addEventListener('change', (ev) => { ui.tofRebin = Number(ev.target.value); drawTof(); });
  $('tof-unit').addEventListener('change', (ev) => {
    ui.tofUnit = ev.target.value;
    drawTof();
    if (efuView.lastState) onState(efuView.lastState);
  });
  $('tof-scale').addEventListener('change', (ev) => { ui.tofLog = ev.target.value === 'log'; drawTof(); });
  $('btn-clear-gate').addEventListener('click', () => post('api/gate', {}).then(() => dataPoll.kick()));
  for (const r of document.querySelectorAll('input[name=monmode]')) {
    r.addEventListener('change', (ev) => { ui.monMode = ev.target.value; if (efuView.lastState) renderMonitors(efuView.lastState); });
  }
  $('counter-filter').addEventListener('input', (ev) => {
    ui.counterFilter = ev.target.value;
    if (efuView.lastState) renderHealth(efuView.lastState);
  });
  // Redraw the canvases when the layout changes size.
  new ResizeObserver(() => {
    drawImage();
    drawTof();
    if (efuView.lastState) { renderRates(efuView.lastState); renderMonitors(efuView.lastState); }
  }).observe(document.body);
})();
