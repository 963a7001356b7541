// src/metrics.ts keeps its own counters, gauges and histograms, so that prom-client loads only when
// /metrics is first scraped (issue 25), and so that the per-command histogram costs no prom-client
// observe() (CPU per command, issue 14). Scraped, each must read exactly as prom-client's own class.
import * as prom from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  Counter,
  CountingHistogram,
  Gauge,
  metricsText,
  observedCounter,
  observedGauge,
  register,
  unregister,
  type Metric,
} from '../src/metrics.js';

const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
let n = 0;
const uniqueName = (what: string) => `respgate_test_${what}_${n++}`;

/** The text prom-client's registry gives for `ours`, and for `theirs` (a prom-client metric). */
async function scraped(ours: Metric, theirs: prom.Metric): Promise<[string, string]> {
  const a = new prom.Registry();
  a.registerMetric(ours as unknown as prom.Metric);
  const b = new prom.Registry();
  b.registerMetric(theirs);
  try {
    return [await a.metrics(), await b.metrics()];
  } finally {
    unregister(ours.name);
  }
}

describe('our metrics scrape as prom-client’s', () => {
  it('CountingHistogram: observe(value, count) is that many observe(value) calls, sum included', async () => {
    const one = new CountingHistogram(uniqueName('one_seconds'), 'help text', BUCKETS);
    const many = new CountingHistogram(uniqueName('many_seconds'), 'help text', BUCKETS);
    for (const [v, count] of [
      [0.00013, 16],
      [0.1, 1],
      [0.0007, 5],
      [12, 3],
    ] as const) {
      for (let i = 0; i < count; i++) one.observe(v);
      many.observe(v, count);
    }
    const values = async (h: CountingHistogram) => (await h.get()).values.map((x) => x.value);
    expect(await values(many)).toEqual(await values(one));
    unregister(one.name);
    unregister(many.name);
  });

  it('CountingHistogram: as Histogram, in both forms, and after a reset', async () => {
    const name = uniqueName('histogram_seconds');
    const counting = new CountingHistogram(name, 'help text', BUCKETS);
    const histogram = new prom.Histogram({ name, help: 'help text', buckets: BUCKETS, registers: [] });
    // On bounds, between them, below the first and past the last (only +Inf counts it).
    const values = [0, 0.0001, 0.00011, 0.001, 0.0049, 0.3, 1, 2.5, 9.99, 10, 12, 1e6, 0.00002];
    for (const v of values) {
      counting.observe(v);
      histogram.observe(v);
    }
    expect(await counting.get()).toEqual(await histogram.get()); // the JSON form (getMetricsAsJSON)
    const [ours, theirs] = await scraped(counting, histogram);
    expect(ours).toBe(theirs);
    expect(ours).toContain(`${name}_count 13`);
    expect(ours).toContain(`${name}_bucket{le="0.0001"} 3`);
    counting.reset();
    histogram.reset();
    counting.observe(0.002);
    histogram.observe(0.002);
    const [again, reference] = await scraped(register(counting), histogram);
    expect(again).toBe(reference);
    expect(again).toContain(`${name}_count 1`);
  });

  it('Counter without labels: 0 before any inc, inc() and inc(n), reset', async () => {
    const name = uniqueName('total');
    const ours = new Counter({ name, help: 'a "quoted" help\\with \n escapes' });
    const theirs = new prom.Counter({ name, help: 'a "quoted" help\\with \n escapes', registers: [] });
    let [a, b] = await scraped(ours, theirs);
    expect(a).toBe(b);
    expect(a).toContain(`${name} 0`);
    for (const m of [ours, theirs]) {
      m.inc();
      m.inc(2.5);
      m.inc(0);
    }
    [a, b] = await scraped(register(ours), theirs);
    expect(a).toBe(b);
    expect(a).toContain(`${name} 3.5`);
    ours.reset();
    theirs.reset();
    [a, b] = await scraped(register(ours), theirs);
    expect(a).toBe(b);
  });

  it('Counter with labels: series in first-use order, label values escaped, 0 increments kept', async () => {
    const name = uniqueName('by_kind_total');
    const ours = new Counter({ name, help: 'h', labelNames: ['kind', 'area'] });
    const theirs = new prom.Counter({ name, help: 'h', labelNames: ['kind', 'area'] as const, registers: [] });
    for (const m of [ours, theirs]) {
      m.inc({ kind: 'timeout' }, 0);
      m.inc({ kind: 'auth', area: 'kv' });
      m.inc({ area: 'kv', kind: 'auth' }, 2);
      m.inc({ kind: 'a "b"\\c\nd' }, 1);
      m.inc({ kind: 'timeout', area: 5 });
    }
    const [a, b] = await scraped(ours, theirs);
    expect(a).toBe(b);
    expect(a).toContain(`${name}{kind="auth",area="kv"} 3`);
  });

  it('Counter refuses what prom-client refuses: a decrease, a non-number, a label not declared', () => {
    const ours = new Counter({ name: uniqueName('refusing_total'), help: 'h', labelNames: ['kind'] });
    unregister(ours.name);
    expect(() => ours.inc(-1)).toThrow('It is not possible to decrease a counter');
    expect(() => ours.inc(NaN)).not.toThrow(); // prom-client lets NaN through too (`value &&` is false)
    expect(() => ours.inc(Infinity)).toThrow(TypeError);
    expect(() => ours.inc({ other: 'x' })).toThrow('Added label "other" is not included in initial labelset: ["kind"]');
  });

  it('Gauge with and without labels: set replaces, collect runs at each scrape', async () => {
    const name = uniqueName('gauge');
    let reads = 0;
    const ours = new Gauge({
      name,
      help: 'h',
      labelNames: ['state'],
      collect() {
        this.set({ state: 'normal' }, ++reads);
      },
    });
    const theirs = new prom.Gauge({
      name,
      help: 'h',
      labelNames: ['state'] as const,
      registers: [],
      collect() {
        this.set({ state: 'normal' }, reads);
      },
    });
    for (const m of [ours, theirs]) {
      m.set({ state: 'blocked' }, 2);
      m.set({ state: 'blocked' }, -1.5);
    }
    const [a, b] = await scraped(ours, theirs);
    expect(a).toBe(b);
    expect(a).toContain(`${name}{state="normal"} 1`);
    const plain = uniqueName('plain_gauge');
    const [c, d] = await scraped(new Gauge({ name: plain, help: 'h' }), new prom.Gauge({ name: plain, help: 'h', registers: [] }));
    expect(c).toBe(d);
  });

  it('observedCounter and observedGauge read their values when scraped, in /metrics after the default metrics', async () => {
    let count = 5;
    const c = uniqueName('observed_total');
    const g = uniqueName('observed_gauge');
    observedCounter(c, 'counted elsewhere', () => count);
    observedGauge(g, 'read elsewhere', () => count * 2);
    try {
      const cpu = process.cpuUsage();
      const first = await metricsText();
      // The process's CPU from its start, though prom-client loads at the first scrape.
      expect(Number(/^respgate_process_cpu_user_seconds_total ([\d.e-]+)$/m.exec(first.body)![1])).toBeGreaterThanOrEqual(cpu.user / 1e6);
      let body = first.body;
      const contentType = first.contentType;
      expect(contentType).toBe(new prom.Registry().contentType);
      expect(body).toContain(`# TYPE ${c} counter\n${c} 5\n`);
      expect(body).toContain(`# TYPE ${g} gauge\n${g} 10\n`);
      expect(body.indexOf('respgate_process_cpu_user_seconds_total')).toBeLessThan(body.indexOf('respgate_platform_http_requests_total'));
      expect(body.indexOf('respgate_platform_http_requests_total')).toBeLessThan(body.indexOf(c));
      count = 7;
      ({ body } = await metricsText());
      expect(body).toContain(`${c} 7\n`);
      observedCounter(c, 'a second proxy in this process replaces the first', () => 1);
      ({ body } = await metricsText());
      expect(body).toContain(`${c} 1\n`);
      expect(body.split(`# TYPE ${c} `).length).toBe(2);
    } finally {
      unregister(c);
      unregister(g);
    }
  });
});
