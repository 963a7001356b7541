// The proxy's per-command latency histogram counts without prom-client's observe() (CPU per
// command, issue 14); scraped, it must read exactly like prom-client's own Histogram.
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registry } from '../../src/metrics.js';
import { CountingHistogram } from '../../src/proxy/proxy-metrics.js';

const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

describe('CountingHistogram', () => {
  it('scrapes as the same text as prom-client Histogram, in both formats, and resets', async () => {
    const name = 'respgate_test_counting_histogram_seconds';
    const counting = new CountingHistogram(name, 'help text', BUCKETS);
    const reference = new Registry();
    const histogram = new Histogram({ name, help: 'help text', buckets: BUCKETS, registers: [reference] });
    try {
      // On bounds, between them, below the first and past the last (only +Inf counts it).
      const values = [0, 0.0001, 0.00011, 0.001, 0.0049, 0.3, 1, 2.5, 9.99, 10, 12, 1e6, 0.00002];
      for (const v of values) {
        counting.observe(v);
        histogram.observe(v);
      }
      const text = await registry.getSingleMetricAsString(name);
      expect(text).toBe(await reference.getSingleMetricAsString(name));
      expect(text).toContain(`${name}_count 13`);
      expect(text).toContain(`${name}_bucket{le="0.0001"} 3`);
      expect(await counting.get()).toEqual(await histogram.get()); // the JSON form (getMetricsAsJSON)
      registry.resetMetrics();
      reference.resetMetrics();
      counting.observe(0.002);
      histogram.observe(0.002);
      expect(await registry.getSingleMetricAsString(name)).toBe(await reference.getSingleMetricAsString(name));
    } finally {
      registry.removeSingleMetric(name);
    }
  });
});
