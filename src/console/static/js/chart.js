// Small SVG line charts over the last minutes: no library, built with createElementNS, text through
// text nodes. lineChart plots sampled values (queue depth, latency); rateChart plots the per-second
// rates of sampled counters (commands, upstream calls).
import { h } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 640;
const H = 120;
const COLORS = ['#0b6e4f', '#1f5fbf', '#b42318', '#8a5a00'];

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

/**
 * `points`: [{at, <field>: number | undefined}…] (ms since the epoch); `series`: [[field, label]…].
 * A missing value breaks nothing: the series skips that point. `label` names the chart for screen readers.
 */
export function lineChart(points, series, { label = 'chart', digits = 1, unit = '' } = {}) {
  const lines = series.map(([field]) => points.filter((p) => Number.isFinite(p[field])).map((p) => ({ at: p.at, v: p[field] })));
  const max = Math.max(1, ...lines.flat().map((p) => p.v));
  const t0 = points[0]?.at ?? 0;
  const t1 = Math.max(t0 + 1, points[points.length - 1]?.at ?? 0);
  const x = (t) => ((t - t0) / (t1 - t0)) * (W - 40) + 36;
  const y = (v) => H - 16 - (v / max) * (H - 28);
  const polylines = lines.map((pts, i) =>
    svg('polyline', {
      points: pts.map((p) => `${x(p.at).toFixed(1)},${y(p.v).toFixed(1)}`).join(' '),
      fill: 'none',
      stroke: COLORS[i % COLORS.length],
      'stroke-width': 1.5,
      'data-series': series[i][0],
    }),
  );
  const last = lines.map((pts) => (pts.length ? pts[pts.length - 1].v : undefined));
  const minutes = ((t1 - t0) / 60000).toFixed(1);
  return h(
    'div',
    { class: 'chart' },
    svg(
      'svg',
      { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': label },
      svg('line', { x1: 36, y1: H - 16, x2: W - 4, y2: H - 16, stroke: '#d6dbe1' }),
      svg('text', { x: 2, y: 12, 'font-size': 10, fill: '#5f6b7a' }, `${max.toFixed(digits)}${unit}`),
      svg('text', { x: 2, y: H - 16, 'font-size': 10, fill: '#5f6b7a' }, '0'),
      svg('text', { x: W - 4, y: H - 2, 'font-size': 10, fill: '#5f6b7a', 'text-anchor': 'end' }, `last ${minutes} min`),
      ...polylines,
    ),
    h(
      'div',
      { class: 'legend' },
      series.map(([field, name], i) =>
        h(
          'span',
          { class: `series-${i}`, 'data-series': field },
          `${name}: ${last[i] === undefined ? '–' : last[i].toFixed(digits)}${unit}  `,
        ),
      ),
    ),
  );
}

/** `samples`: [{at, <series>: counter…}]; `series`: [[field, label]…]: the rate of each counter per second. */
export function rateChart(samples, series) {
  const points = samples.slice(1).map((s, i) => {
    const p = { at: s.at };
    const dt = Math.max(1, s.at - samples[i].at);
    for (const [field] of series) p[field] = Math.max(0, ((s[field] - samples[i][field]) * 1000) / dt);
    return p;
  });
  return lineChart(points, series, { label: 'rates' });
}
