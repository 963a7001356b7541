// A small SVG line chart of rates (per second) computed from counters sampled over time: no library,
// built with createElementNS, text through text nodes.
import { h } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 640;
const H = 120;
const COLORS = ['#0b6e4f', '#1f5fbf', '#b42318'];

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/** `samples`: [{at, <series>: counter…}]; `series`: [[field, label]…]. */
export function rateChart(samples, series) {
  const rates = series.map(([field]) =>
    samples
      .slice(1)
      .map((s, i) => ({ at: s.at, v: Math.max(0, ((s[field] - samples[i][field]) * 1000) / Math.max(1, s.at - samples[i].at)) })),
  );
  const all = rates.flat();
  const max = Math.max(1, ...all.map((p) => p.v));
  const t0 = (samples[1] ?? samples[0])?.at ?? 0; // the first rate is known at the second sample
  const t1 = Math.max(t0 + 1, samples[samples.length - 1]?.at ?? 0);
  const x = (t) => ((t - t0) / (t1 - t0)) * (W - 40) + 36;
  const y = (v) => H - 16 - (v / max) * (H - 28);
  const lines = rates.map((pts, i) =>
    svg('polyline', {
      points: pts.map((p) => `${x(p.at).toFixed(1)},${y(p.v).toFixed(1)}`).join(' '),
      fill: 'none',
      stroke: COLORS[i],
      'stroke-width': 1.5,
    }),
  );
  const last = rates.map((pts) => (pts.length ? pts[pts.length - 1].v : 0));
  return h(
    'div',
    { class: 'chart' },
    svg(
      'svg',
      { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'rates' },
      svg('line', { x1: 36, y1: H - 16, x2: W - 4, y2: H - 16, stroke: '#d6dbe1' }),
      svg('text', { x: 2, y: 12, 'font-size': 10, fill: '#5f6b7a' }, max.toFixed(1)),
      svg('text', { x: 2, y: H - 16, 'font-size': 10, fill: '#5f6b7a' }, '0'),
      ...lines,
    ),
    h(
      'div',
      { class: 'legend' },
      series.map(([, label], i) => h('span', { class: `series-${i}` }, `${label}: ${last[i].toFixed(1)}  `)),
    ),
  );
}
