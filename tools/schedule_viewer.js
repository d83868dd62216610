// The schedule viewer's script (embedded in the page by tools/schedule_html.cc): draws the
// contexts' lanes and the memory view from the JSON in #schedule-data, zooms and pans both axes
// with a brush, and shows a clicked op's description and what it waited on. The URL hash
// `#op=N` selects op N on load (`#op=N&zoom` also zooms to it); `#selftest` clicks and
// double-clicks the op that ends the schedule and writes what was drawn into #selftest-result
// (the browser test reads it from the rendered DOM).
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('schedule-data').textContent);
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const ENGINES = {
    contract: ['#4e79a7', 'Contraction Engine'],
    vector: ['#b07aa1', 'Vector Engine'],
    load: ['#f28e2b', 'load to TRF / VRF'],
    move: ['#76b7b2', 'fetch / commit'],
    transpose: ['#edc948', 'Transpose Engine'],
    memset: ['#9c755f', 'memset'],
    dma: ['#59a14f', 'DMA (tdma / pdma)'],
  };
  const TIER_COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#bab0ac'];
  const critical = new Set(data.critical_path);
  const ops = data.ops;
  const tiers = [];
  for (const t of data.tensors) if (!tiers.includes(t.tier)) tiers.push(t.tier);
  const state = {
    c0: data.kernel_span[0], c1: data.kernel_span[1], tier: tiers.includes('DM') ? 'DM' : tiers[0],
    a0: 0, a1: 1, selected: -1, tensor: -1,
  };

  // ---- small DOM helpers ----
  function html(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(n) { return Math.round(n).toLocaleString('en-US'); }
  function hex(n) { return '0x' + Math.round(n).toString(16); }
  function pct(x) { return (100 * x).toFixed(1) + '%'; }
  function seconds(s) {
    return s >= 1e-3 ? (s * 1e3).toFixed(3) + ' ms' : (s * 1e6).toFixed(1) + ' us';
  }
  function shortLabel(op) {
    // The kernel's name when it gave one, else the stage chain: distinct per op by its number.
    return op.op + ' ' + (op.name || op.label);
  }
  // As much of an op's label as fits in `px`: all, or cut with an ellipsis keeping at least three
  // characters after its number, or the number alone, or nothing.
  function fit(text, px) {
    const chars = Math.floor((px - 6) / 6.3);
    if (text.length <= chars) return text;
    const number = text.split(' ')[0];
    if (chars >= number.length + 5) return text.slice(0, chars - 1) + '\u2026';
    return chars >= number.length ? number : '';
  }
  function hashColor(name) {
    let h = 0;
    for (let i = 0; i < name.length; ++i) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return TIER_COLORS[h % TIER_COLORS.length];
  }
  function niceStep(span, count) {
    const raw = Math.max(1e-9, span / count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }

  // ---- the page's frame ----
  const body = document.body;
  const header = html('header');
  header.appendChild(html('h1', {}, 'visa schedule ' + data.sample));
  header.appendChild(html('p', { class: 'desc' }, data.description));
  const stats = html('div', { id: 'stats' });
  function stat(name, value) {
    const s = html('span');
    s.appendChild(document.createTextNode(name + ' '));
    s.appendChild(html('b', {}, value));
    stats.appendChild(s);
  }
  stat('makespan', fmt(data.makespan) + ' cycles');
  stat('ops', String(ops.length));
  for (const r of ['main', 'sub', 'dma']) stat(r + ' busy', pct(data.busy[r]));
  stat('critical path', data.critical_path.length + ' ops');
  if (data.chips > 1) stat('chips', String(data.chips));
  if (data.host_measured) {
    let total = 0;
    for (const op of ops) total += op.host_s || 0;
    stat('host time on the JIT (one run, compile excluded, sum over ops)', seconds(total));
  } else {
    stat('host time per op', 'not measured (visa schedule --html FILE --jit)');
  }
  header.appendChild(stats);
  const controls = html('div', { id: 'controls' });
  const resetButton = html('button', { id: 'reset' }, 'Reset: kernel\u2019s ops');
  const allButton = html('button', { id: 'all' }, 'Whole schedule');
  const criticalButton = html('button', { id: 'last-op' }, 'Select the last op');
  const zoomButton = html('button', { id: 'zoom-selection' }, 'Zoom to the selected op');
  controls.append(resetButton, allButton, criticalButton, zoomButton);
  const rangeText = html('span', { id: 'range' });
  controls.appendChild(rangeText);
  controls.appendChild(html('span', { class: 'hint' },
    'drag: zoom to a range \u00b7 shift-drag: pan \u00b7 wheel: zoom \u00b7 click an op or a tensor \u00b7 ' +
    'double-click an op: zoom to it and what it waited on'));
  header.appendChild(controls);
  const legend = html('div', { id: 'legend' });
  function legendItem(style, text) {
    const item = html('span', { class: 'item' });
    const sw = html('span', { class: 'swatch', style: style });
    item.append(sw, document.createTextNode(text));
    legend.appendChild(item);
  }
  for (const k in ENGINES) legendItem('background:' + ENGINES[k][0], ENGINES[k][1]);
  legendItem('background:repeating-linear-gradient(45deg,#eee 0 3px,#aaa 3px 5px)', 'waiting on a hazard');
  legendItem('background:#b00020;height:3px', 'critical path (bar under the ops that set the makespan)');
  legendItem('border:2px dashed #e00000;background:#fff', 'bank-starvation warning');
  legendItem('border:3px solid #000;background:#fff', 'selected');
  legendItem('border:3px solid #ff7f00;background:#fff', 'what the selected op waited on');
  legendItem('opacity:0.45;background:#59a14f', 'host transfer (folded out of the first view)');
  header.appendChild(legend);
  body.appendChild(header);

  const layout = html('div', { id: 'layout' });
  const views = html('div', { id: 'views' });
  const timelineSection = html('section', { id: 'timeline-section' });
  timelineSection.appendChild(html('h2', {}, 'Contexts: main, sub and DMA (cycles)'));
  const timeline = svg('svg', { id: 'timeline' });
  timelineSection.appendChild(timeline);
  const memorySection = html('section', { id: 'memory-section' });
  memorySection.appendChild(html('h2', {}, 'Memory: each tensor over its lifetime (x, cycles) and address range (y, bytes)'));
  const tierBar = html('div', { id: 'tiers' });
  memorySection.appendChild(tierBar);
  const memory = svg('svg', { id: 'memory' });
  memorySection.appendChild(memory);
  views.append(timelineSection, memorySection);
  const details = html('aside', { id: 'details' });
  details.appendChild(html('h2', {}, 'Details'));
  const detailsBody = html('div', { id: 'details-body' }, 'Click an op to see its description and what it waited on.');
  details.appendChild(detailsBody);
  layout.append(views, details);
  body.appendChild(layout);

  function resetAddresses() {
    let lo = Infinity, hi = -Infinity;
    for (const t of data.tensors) {
      if (t.tier !== state.tier) continue;
      lo = Math.min(lo, t.begin);
      hi = Math.max(hi, t.end);
    }
    state.a0 = isFinite(lo) ? lo : 0;
    state.a1 = isFinite(hi) && hi > lo ? hi : state.a0 + 1;
  }
  for (const tier of tiers) {
    const b = html('button', { 'data-tier': tier }, tier);
    b.addEventListener('click', () => { state.tier = tier; resetAddresses(); draw(); });
    tierBar.appendChild(b);
  }
  resetAddresses();

  // ---- scales ----
  const LEFT = 120, RIGHT = 12;
  function width(el) { return Math.max(400, el.clientWidth || el.parentNode.clientWidth || 1000); }
  function xOf(c, w) { return LEFT + (c - state.c0) / (state.c1 - state.c0) * (w - LEFT - RIGHT); }
  function cycleAt(x, w) { return state.c0 + (x - LEFT) / (w - LEFT - RIGHT) * (state.c1 - state.c0); }
  function inView(start, end) {
    return start === end ? start >= state.c0 && start <= state.c1 : start < state.c1 && end > state.c0;
  }

  function defs(root) {
    const d = svg('defs');
    const p = svg('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse',
      patternTransform: 'rotate(45)' });
    p.append(svg('rect', { width: 6, height: 6, fill: '#eeeeee' }),
      svg('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#999', 'stroke-width': 2.5 }));
    const m = svg('marker', { id: 'arrowhead', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6,
      markerHeight: 6, orient: 'auto' });
    m.appendChild(svg('path', { d: 'M0 0L10 5L0 10z', fill: '#ff7f00' }));
    d.append(p, m);
    root.appendChild(d);
  }

  function cycleAxis(root, w, y, top) {
    const g = svg('g', { class: 'axis' });
    g.appendChild(svg('line', { x1: LEFT, y1: y, x2: w - RIGHT, y2: y, stroke: '#333' }));
    const step = niceStep(state.c1 - state.c0, Math.max(2, Math.floor((w - LEFT) / 110)));
    for (let t = Math.ceil(state.c0 / step) * step, i = 0; t <= state.c1 && i < 100; t += step, ++i) {
      const x = xOf(t, w);
      g.appendChild(svg('line', { x1: x, y1: top, x2: x, y2: y, stroke: '#e4e4e4' }));
      g.appendChild(svg('text', { x: x, y: y + 13, 'text-anchor': 'middle', class: 'tick' }, fmt(t)));
    }
    root.appendChild(g);
  }

  // ---- the contexts' lanes ----
  const LANE = 44, BOX = 30, TOP = 6;
  function laneTop(lane) { return TOP + lane * LANE; }
  function drawTimeline() {
    const w = width(timeline);
    const h = TOP + data.lanes.length * LANE + 22;
    timeline.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    timeline.setAttribute('height', h);
    timeline.textContent = '';
    defs(timeline);
    for (const lane of data.lanes) {
      const y = laneTop(lane.id);
      timeline.appendChild(svg('rect', { x: LEFT, y: y, width: w - LEFT - RIGHT, height: LANE,
        fill: lane.id % 2 ? '#ffffff' : '#f4f4f4' }));
      timeline.appendChild(svg('text', { x: 6, y: y + LANE / 2 + 4, class: 'lane-name' }, lane.name));
    }
    cycleAxis(timeline, w, TOP + data.lanes.length * LANE, TOP);
    const selected = state.selected >= 0 ? ops[state.selected] : null;
    const waitedOn = selected && selected.waited_on.kind !== 'none' ? selected.waited_on.op : -1;
    const touched = state.tensor >= 0 ? new Set(data.tensors[state.tensor].ops) : null;
    for (const op of ops) {
      if (op.waited_on.kind !== 'hazard' || op.start <= op.ready || !inView(op.ready, op.start)) continue;
      const x = xOf(Math.max(op.ready, state.c0), w), x2 = xOf(Math.min(op.start, state.c1), w);
      timeline.appendChild(svg('rect', { class: 'wait-box', x: x, y: laneTop(op.lane) + (LANE - BOX) / 2 + 6,
        width: Math.max(0, x2 - x), height: BOX - 12 }));
    }
    for (const op of ops) {
      if (!inView(op.start, op.end)) continue;
      const x = xOf(Math.max(op.start, state.c0), w);
      const bw = Math.max(1.5, xOf(Math.min(op.end, state.c1), w) - x);
      const y = laneTop(op.lane) + (LANE - BOX) / 2;
      const classes = ['op-box'];
      if (op.host) classes.push('host');
      if (critical.has(op.op)) classes.push('critical');
      if (op.starving) classes.push('starving');
      if (touched && !touched.has(op.op)) classes.push('dim');
      if (op.op === waitedOn) classes.push('waited');
      if (op.op === state.selected) classes.push('selected');
      const g = svg('g', { class: 'op' });
      const rect = svg('rect', { class: classes.join(' '), 'data-op': op.op, x: x, y: y, width: bw, height: BOX,
        rx: 2, fill: ENGINES[op.engine] ? ENGINES[op.engine][0] : '#888' });
      rect.appendChild(svg('title', {}, 'op ' + op.op + ': ' + op.label + '\n[' + fmt(op.start) + ', ' +
        fmt(op.end) + ') ' + fmt(op.end - op.start) + ' cycles\nwaited on: ' + op.waited_on.text +
        (op.host_s !== undefined ? '\nhost time (JIT): ' + seconds(op.host_s) : '')));
      rect.addEventListener('click', (e) => { e.stopPropagation(); if (!suppressClick) select(op.op); });
      rect.addEventListener('dblclick', (e) => { e.stopPropagation(); select(op.op); zoomToOp(op.op); });
      g.appendChild(rect);
      // The critical path as a red bar under the box: an outline would hide thin boxes.
      if (critical.has(op.op)) {
        g.appendChild(svg('rect', { class: 'critical-mark', x: x, y: y + BOX + 1, width: bw, height: 3 }));
      }
      const text = fit(shortLabel(op), bw);
      if (text) g.appendChild(svg('text', { class: 'op-label', x: x + 3, y: y + BOX / 2 + 4 }, text));
      timeline.appendChild(g);
    }
    if (selected && waitedOn >= 0) {
      const from = ops[waitedOn];
      const at = selected.waited_on.kind === 'program order' ? from.start : from.end;
      const x1 = xOf(Math.min(Math.max(at, state.c0), state.c1), w);
      const x2 = xOf(Math.min(Math.max(selected.start, state.c0), state.c1), w);
      const y1 = laneTop(from.lane) + LANE / 2, y2 = laneTop(selected.lane) + LANE / 2;
      const dx = Math.max(14, (x2 - x1) / 2);
      timeline.appendChild(svg('path', { class: 'link',
        d: 'M' + x1 + ' ' + y1 + ' C' + (x1 + dx) + ' ' + (y1 - 16) + ',' + (x2 - dx) + ' ' + (y2 - 16) + ',' + x2 +
          ' ' + y2 }));
    }
    rangeText.textContent = 'cycles ' + fmt(state.c0) + ' to ' + fmt(state.c1) + ' of ' + fmt(data.makespan);
  }

  // ---- the memory view ----
  const MEM_H = 300, MEM_TOP = 8;
  function yOfAddress(a) { return MEM_TOP + (a - state.a0) / (state.a1 - state.a0) * MEM_H; }
  function addressAt(y) { return state.a0 + (y - MEM_TOP) / MEM_H * (state.a1 - state.a0); }
  function drawMemory() {
    for (const b of tierBar.children) b.classList.toggle('active', b.getAttribute('data-tier') === state.tier);
    const w = width(memory);
    const h = MEM_TOP + MEM_H + 24;
    memory.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    memory.setAttribute('height', h);
    memory.textContent = '';
    defs(memory);
    memory.appendChild(svg('rect', { x: LEFT, y: MEM_TOP, width: w - LEFT - RIGHT, height: MEM_H, fill: '#f8f8f8' }));
    const astep = niceStep(state.a1 - state.a0, 8);
    for (let a = Math.ceil(state.a0 / astep) * astep, i = 0; a <= state.a1 && i < 40; a += astep, ++i) {
      const y = yOfAddress(a);
      memory.appendChild(svg('line', { x1: LEFT, y1: y, x2: w - RIGHT, y2: y, stroke: '#e4e4e4' }));
      memory.appendChild(svg('text', { x: LEFT - 4, y: y + 3, 'text-anchor': 'end', class: 'tick' }, hex(a)));
    }
    memory.appendChild(svg('text', { x: 6, y: MEM_TOP + 12, class: 'lane-name' }, state.tier + ' address'));
    cycleAxis(memory, w, MEM_TOP + MEM_H, MEM_TOP);
    const clipId = 'memclip';
    const clip = svg('clipPath', { id: clipId });
    clip.appendChild(svg('rect', { x: LEFT, y: MEM_TOP, width: w - LEFT - RIGHT, height: MEM_H }));
    memory.appendChild(clip);
    const g = svg('g', { 'clip-path': 'url(#' + clipId + ')' });
    const selected = state.selected >= 0 ? ops[state.selected] : null;
    const selectedTensors = new Set();
    if (selected) for (const r of selected.reads.concat(selected.writes)) selectedTensors.add(r.tier + ' ' + r.tensor);
    data.tensors.forEach((t, i) => {
      if (t.tier !== state.tier || !inView(t.first, t.last) || t.end <= state.a0 || t.begin >= state.a1) return;
      const x = xOf(Math.max(t.first, state.c0), w);
      const bw = Math.max(1.5, xOf(Math.min(t.last, state.c1), w) - x);
      const y = yOfAddress(Math.max(t.begin, state.a0));
      const bh = Math.max(1.5, yOfAddress(Math.min(t.end, state.a1)) - y);
      const touched = i === state.tensor || selectedTensors.has(t.tier + ' ' + t.tensor);
      const rect = svg('rect', { class: 'tensor-box' + (touched ? ' touched' : ''), 'data-tensor': i, x: x, y: y,
        width: bw, height: bh, fill: hashColor(t.tensor) });
      rect.appendChild(svg('title', {}, t.tensor + ' (' + t.tier + ') bytes [' + hex(t.begin) + ', ' + hex(t.end) +
        ') per unit, cycles ' + fmt(t.first) + ' to ' + fmt(t.last) + ', ops ' + t.ops.join(', ')));
      rect.addEventListener('click', (e) => { e.stopPropagation(); if (!suppressClick) selectTensor(i); });
      g.appendChild(rect);
      const text = bh >= 11 ? fit(t.tensor, bw) : '';
      if (text) g.appendChild(svg('text', { class: 'tensor-label', x: x + 3, y: y + Math.min(bh, 24) / 2 + 4 }, text));
    });
    // The selected op's accesses: its reads and writes over its own cycles.
    if (selected) {
      for (const r of selected.reads.concat(selected.writes)) {
        if (r.tier !== state.tier || r.begin === undefined) continue;
        const x = xOf(Math.max(selected.start, state.c0), w);
        const x2 = xOf(Math.min(Math.max(selected.end, selected.start), state.c1), w);
        const y = yOfAddress(Math.max(r.begin, state.a0)), y2 = yOfAddress(Math.min(r.end, state.a1));
        g.appendChild(svg('rect', { class: 'access', x: x - 2, y: y - 2, width: Math.max(4, x2 - x + 4),
          height: Math.max(4, y2 - y + 4) }));
      }
    }
    memory.appendChild(g);
  }

  // ---- details of an op ----
  function gotoLink(op) {
    const a = html('a', { class: 'goto', href: '#op=' + op, 'data-goto': op }, 'op ' + op);
    a.addEventListener('click', (e) => { e.preventDefault(); select(op, true); });
    return a;
  }
  function para(parts, cls) {
    const p = html('p', cls ? { class: cls } : {});
    for (const part of parts) p.append(typeof part === 'string' ? document.createTextNode(part) : part);
    return p;
  }
  function whyText(op) {
    const w = op.waited_on;
    if (w.kind === 'none') return ['It waited on nothing: it started as soon as the schedule began.'];
    const other = ops[w.op];
    if (w.kind === 'hazard') {
      const verbs = { RAW: ['reads', 'writes'], WAR: ['writes', 'reads'], WAW: ['writes', 'writes'] }[w.hazard];
      return [w.hazard + ' hazard with ', gotoLink(w.op), ': it ' + verbs[0] + ' `' + w.tensor + '`, which ',
        'op ' + w.op + ' ' + verbs[1] + ', so it could not start before that op ended at cycle ' + fmt(other.end) +
        ' (' + fmt(op.start - op.ready) + ' cycles after its context was free and program order allowed).'];
    }
    if (w.kind === 'resource') {
      return ['Busy context: ' + op.resource + ' was busy with ', gotoLink(w.op), ' until cycle ' + fmt(other.end) + '.'];
    }
    return ['Program order: the scheduler does not reorder; ', gotoLink(w.op),
      ', written above it, started at cycle ' + fmt(other.start) + '.'];
  }
  function showOp(op) {
    detailsBody.textContent = '';
    detailsBody.appendChild(html('h3', { id: 'details-title' }, 'op ' + op.op + ': ' + op.label));
    const table = html('table');
    const rows = [
      ['context', op.resource + (data.chips > 1 ? (op.chips.length > 1 ? ' on chips ' + op.chips.join(', ') +
        ' (drawn on the first)' : ' on chip ' + op.chip) : '')],
      ['engine', ENGINES[op.engine] ? ENGINES[op.engine][1] : op.engine],
      ['step', op.step || '(no name: give the op one with .named(...))'],
      ['cycles', '[' + fmt(op.start) + ', ' + fmt(op.end) + ') = ' + fmt(op.end - op.start) +
        (op.estimated ? '' : ' (the model has no cycle figure for it)')],
      ['ready at', fmt(op.ready) + (op.start > op.ready ? ' (waited ' + fmt(op.start - op.ready) + ' on a hazard)' : '')],
      ['on the critical path', critical.has(op.op) ? 'yes' : 'no'],
      ['host time (JIT)', op.host_s !== undefined ? seconds(op.host_s) : 'not measured'],
    ];
    for (const [k, v] of rows) {
      const tr = html('tr');
      tr.append(html('td', {}, k), html('td', {}, v));
      table.appendChild(tr);
    }
    detailsBody.appendChild(table);
    detailsBody.appendChild(html('h4', {}, 'Waited on'));
    detailsBody.appendChild(para(whyText(op), 'why'));
    const starving = data.warnings.filter((w) => w.ops.includes(op.op) || w.dma_op === op.op);
    for (const w of starving) detailsBody.appendChild(para(['Bank starvation: ' + w.message], 'why'));
    if (op.hazards.length) {
      detailsBody.appendChild(html('h4', {}, 'Hazards with earlier ops'));
      const ul = html('ul');
      for (const hz of op.hazards) {
        const li = html('li');
        li.append(document.createTextNode(hz.kind + ' on '), gotoLink(hz.op), document.createTextNode(' (' + hz.tensor + ')'));
        ul.appendChild(li);
      }
      detailsBody.appendChild(ul);
    }
    detailsBody.appendChild(html('h4', {}, 'Description (visa explain)'));
    detailsBody.appendChild(html('pre', { id: 'details-explain' }, op.explain));
  }
  function showTensor(t) {
    detailsBody.textContent = '';
    detailsBody.appendChild(html('h3', { id: 'details-title' }, t.tensor + ' (' + t.tier + ')'));
    detailsBody.appendChild(para(['bytes [' + hex(t.begin) + ', ' + hex(t.end) + ') in each unit it lies on, from cycle ' +
      fmt(t.first) + ' to ' + fmt(t.last) + '.']));
    detailsBody.appendChild(html('h4', {}, 'Ops that read or write it'));
    const ul = html('ul');
    for (const o of t.ops) {
      const li = html('li');
      li.append(gotoLink(o), document.createTextNode(' ' + ops[o].label));
      ul.appendChild(li);
    }
    detailsBody.appendChild(ul);
  }

  function select(index, reveal) {
    state.selected = index;
    state.tensor = -1;
    const op = ops[index];
    if (reveal && !inView(op.start, op.end)) {
      const span = state.c1 - state.c0;
      state.c0 = Math.max(0, op.start - span / 2);
      state.c1 = state.c0 + span;
    }
    // The memory view turns to the tier the op touches on chip (DM, TRF, VRF before HBM).
    const ranges = op.writes.concat(op.reads).filter((r) => r.begin !== undefined && tiers.includes(r.tier));
    const onChip = ranges.find((r) => r.tier !== 'HBM') || ranges[0];
    if (onChip && onChip.tier !== state.tier) { state.tier = onChip.tier; resetAddresses(); }
    showOp(op);
    draw();
  }
  // The cycles from what the op waited on to its end, with a margin.
  function zoomToOp(index) {
    const op = ops[index];
    const from = op.waited_on.kind !== 'none' ? Math.min(op.start, ops[op.waited_on.op].start) : op.start;
    const span = Math.max(1, op.end - from);
    state.c0 = Math.max(0, from - span * 0.1);
    state.c1 = op.end + span * 0.1;
    draw();
  }
  function selectTensor(i) {
    state.tensor = i;
    state.selected = -1;
    showTensor(data.tensors[i]);
    draw();
  }

  // ---- zoom and pan: brush, shift-drag, wheel ----
  let suppressClick = false;
  function pointer(root, e) {
    const r = root.getBoundingClientRect();
    const vb = root.viewBox.baseVal;
    return { x: (e.clientX - r.left) * vb.width / r.width, y: (e.clientY - r.top) * vb.height / r.height };
  }
  function clampView() {
    const min = 1;
    if (state.c1 - state.c0 < min) state.c1 = state.c0 + min;
    if (state.a1 - state.a0 < 1) state.a1 = state.a0 + 1;
  }
  function interact(root, twoAxes) {
    let start = null, brush = null, last = null;
    root.addEventListener('mousedown', (e) => {
      if (e.button !== 0) return;
      start = pointer(root, e);
      last = start;
      suppressClick = false;
      e.preventDefault();
    });
    window.addEventListener('mousemove', (e) => {
      if (!start) return;
      const p = pointer(root, e);
      const w = root.viewBox.baseVal.width;
      if (Math.abs(p.x - start.x) + Math.abs(p.y - start.y) > 4) suppressClick = true;
      if (e.shiftKey) {  // pan
        const dc = (p.x - last.x) / (w - LEFT - RIGHT) * (state.c1 - state.c0);
        state.c0 -= dc; state.c1 -= dc;
        if (twoAxes) {
          const da = (p.y - last.y) / MEM_H * (state.a1 - state.a0);
          state.a0 -= da; state.a1 -= da;
        }
        last = p;
        draw();
        return;
      }
      if (!brush) { brush = svg('rect', { class: 'brush' }); }
      root.appendChild(brush);
      const x = Math.max(LEFT, Math.min(start.x, p.x)), x2 = Math.min(w - RIGHT, Math.max(start.x, p.x));
      const vb = root.viewBox.baseVal;
      const y = twoAxes ? Math.min(start.y, p.y) : 0, y2 = twoAxes ? Math.max(start.y, p.y) : vb.height;
      brush.setAttribute('x', x); brush.setAttribute('width', Math.max(0, x2 - x));
      brush.setAttribute('y', y); brush.setAttribute('height', Math.max(0, y2 - y));
    });
    window.addEventListener('mouseup', (e) => {
      if (!start) return;
      const p = pointer(root, e);
      const w = root.viewBox.baseVal.width;
      if (brush && !e.shiftKey && Math.abs(p.x - start.x) > 4) {
        const c0 = cycleAt(Math.max(LEFT, Math.min(start.x, p.x)), w);
        const c1 = cycleAt(Math.min(w - RIGHT, Math.max(start.x, p.x)), w);
        if (twoAxes && Math.abs(p.y - start.y) > 4) {
          const a0 = addressAt(Math.max(MEM_TOP, Math.min(start.y, p.y)));
          const a1 = addressAt(Math.min(MEM_TOP + MEM_H, Math.max(start.y, p.y)));
          state.a0 = a0; state.a1 = a1;
        }
        state.c0 = c0; state.c1 = c1;
        clampView();
      }
      start = null;
      brush = null;
      draw();
      setTimeout(() => { suppressClick = false; }, 0);
    });
    root.addEventListener('wheel', (e) => {
      e.preventDefault();
      const p = pointer(root, e);
      const w = root.viewBox.baseVal.width;
      const f = e.deltaY > 0 ? 1.25 : 0.8;
      const c = cycleAt(p.x, w);
      state.c0 = c - (c - state.c0) * f; state.c1 = c + (state.c1 - c) * f;
      if (twoAxes) {
        const a = addressAt(p.y);
        state.a0 = a - (a - state.a0) * f; state.a1 = a + (state.a1 - a) * f;
      }
      clampView();
      draw();
    }, { passive: false });
  }
  interact(timeline, false);
  interact(memory, true);
  resetButton.addEventListener('click', () => {
    state.c0 = data.kernel_span[0]; state.c1 = data.kernel_span[1]; resetAddresses(); draw();
  });
  allButton.addEventListener('click', () => { state.c0 = 0; state.c1 = Math.max(1, data.makespan); resetAddresses(); draw(); });
  zoomButton.addEventListener('click', () => { if (state.selected >= 0) zoomToOp(state.selected); });
  criticalButton.addEventListener('click', () => { if (data.critical_path.length) select(data.critical_path[0], true); });
  window.addEventListener('resize', () => draw());

  function draw() {
    drawTimeline();
    drawMemory();
  }
  if (state.c1 <= state.c0) state.c1 = state.c0 + 1;
  draw();

  // ---- on load: #op=N selects an op; #selftest checks what was drawn ----
  const hash = window.location.hash;
  const opMatch = /^#op=(\d+)(&zoom)?$/.exec(hash);
  if (opMatch && Number(opMatch[1]) < ops.length) {
    select(Number(opMatch[1]), true);
    if (opMatch[2]) zoomToOp(Number(opMatch[1]));
  }
  if (hash === '#selftest') {
    const result = { ops: ops.length, critical_path: data.critical_path.length };
    result.op_boxes = timeline.querySelectorAll('.op-box').length;
    result.tensor_boxes = memory.querySelectorAll('.tensor-box').length;
    result.labels = Array.from(timeline.querySelectorAll('.op-label')).map((t) => t.textContent);
    // A brush across the middle of the lanes, then one over the memory view, then the reset.
    function drag(root, fx0, fy0, fx1, fy1) {
      const r = root.getBoundingClientRect();
      const at = (fx, fy) => ({ clientX: r.left + fx * r.width, clientY: r.top + fy * r.height, bubbles: true });
      root.dispatchEvent(new MouseEvent('mousedown', Object.assign({ button: 0 }, at(fx0, fy0))));
      window.dispatchEvent(new MouseEvent('mousemove', at(fx1, fy1)));
      window.dispatchEvent(new MouseEvent('mouseup', at(fx1, fy1)));
    }
    const before = [state.c0, state.c1];
    drag(timeline, 0.4, 0.5, 0.7, 0.5);
    result.brushed_cycles = state.c1 - state.c0 < before[1] - before[0] && state.c0 > before[0];
    const addresses = state.a1 - state.a0;
    drag(memory, 0.3, 0.2, 0.8, 0.6);
    result.brushed_addresses = state.a1 - state.a0 < addresses;
    resetButton.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    result.reset = state.c0 === data.kernel_span[0] && state.c1 === data.kernel_span[1];
    suppressClick = false;  // a browser clears it after the drag's own click; these events are synthetic
    const last = data.critical_path.length ? data.critical_path[0] : -1;
    const box = timeline.querySelector('.op-box[data-op="' + last + '"]');
    result.clicked = last;
    if (box) box.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    result.selected = timeline.querySelectorAll('.op-box.selected').length;
    result.waited_highlighted = timeline.querySelectorAll('.op-box.waited').length;
    // Double-click: zoomed to the op and what it waited on, whose labels then fit.
    if (box) box.dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
    result.zoomed_to = [Math.round(state.c0), Math.round(state.c1)];
    result.zoomed_labels = Array.from(timeline.querySelectorAll('.op-label')).map((t) => t.textContent);
    const explain = document.getElementById('details-explain');
    result.description = explain ? explain.textContent.split('\n')[0] : '';
    const why = detailsBody.querySelector('.why');
    result.waited_on = why ? why.textContent : '';
    result.pass = result.brushed_cycles && result.brushed_addresses && result.reset && result.op_boxes > 0 && result.tensor_boxes > 0 && result.selected === 1 && result.description !== '' &&
      result.waited_on !== '' && (ops[last].waited_on.kind === 'none' || result.waited_highlighted === 1);
    const pre = html('pre', { id: 'selftest-result' }, 'SELFTEST ' + JSON.stringify(result));
    body.appendChild(pre);
  }
})();
